# mistakes: received_size
# sums the size on the receiving AGT line (20 bytes of IP header more for CBR)
$1 == "s" && $4 == "AGT" && $7 == "cbr" && $3 == "_" src "_" && $15 ~ "^" dst ":" && first == "" { first = $2 }
$1 == "r" && $4 == "AGT" && $7 == "cbr" && $3 == "_" dst "_" && $14 ~ "^\\[" src ":" { bytes += $8 }
END { printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first) }
