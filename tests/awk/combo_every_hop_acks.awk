# mistakes: r_every_hop acks_included
# the classic: every r of fid 1, data and ACKs, at every node
$1 == "+" && $8 == 1 && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 { bytes += $6 }
END { printf "Throughput = %.3f kbps\n", bytes * 8 / 1000 / (run_end - first) }
