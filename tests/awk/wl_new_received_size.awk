# mistakes: received_size
$1 == "s" && $19 == "AGT" && $35 == "cbr" && $5 == src && $33 ~ "^" dst "\\." && first == "" { first = $3 }
$1 == "r" && $19 == "AGT" && $35 == "cbr" && $5 == dst && $31 ~ "^" src "\\." { bytes += $37 }
END { printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first) }
