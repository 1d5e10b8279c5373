# mistakes: all_flows
# "total throughput": every delivered data packet of every flow (no fid filter)
$1 == "+" && $3 == int($9) && $5 != "ack" && first == "" { first = $2 }
$1 == "r" && $4 == int($10) && $5 != "ack" { bytes += $6 }
END { printf "Total throughput = %.2f kbps\n", bytes * 8 / 1000 / (run_end - first) }
