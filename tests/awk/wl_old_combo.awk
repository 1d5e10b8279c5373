# mistakes: received_size first_to_last_receive bytes_not_bits
# old format: bytes from the receive lines, first to last receive, and no x 8
$1 == "r" && $4 == "AGT" && $7 == "cbr" && $3 == "_" dst "_" && $14 ~ "^\\[" src ":" {
    bytes += $8
    if (t1 == "") t1 = $2
    t2 = $2
}
END { printf "Average throughput [kbps] = %.3f\n", bytes / (t2 - t1) / 1000 }
