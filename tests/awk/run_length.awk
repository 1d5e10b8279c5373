# mistakes: run_length
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { bytes += $6 }
END { printf "Throughput: %.3f kbps\n", bytes * 8 / 1000 / run_end }
