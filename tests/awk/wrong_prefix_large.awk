# mistakes: wrong_prefix_large
# Mb/s labelled kbps
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { bytes += $6 }
END { printf "Throughput: %.6f kbps\n", bytes * 8 / 1000000 / (run_end - first) }
