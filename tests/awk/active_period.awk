# mistakes: active_period
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { bytes += $6; last = $2 }
END { printf "Throughput: %.3f kbps\n", bytes * 8 / 1000 / (last - first) }
