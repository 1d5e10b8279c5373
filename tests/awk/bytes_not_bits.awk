# mistakes: bytes_not_bits
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { bytes += $6 }
END { printf "Throughput: %.3f kbps\n", bytes / 1000 / (run_end - first) }
