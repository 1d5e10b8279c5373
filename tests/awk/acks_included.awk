# mistakes: acks_included
# "received" = an r at the packet's own destination ($4 == the node of $10); fid 1 only,
# but the ACKs of fid 1 have fid 1 too
$1 == "+" && $8 == 1 && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $4 == int($10) { bytes += $6 }
END { printf "Throughput = %.3f kbps\n", bytes * 8 / 1000 / (run_end - first) }
