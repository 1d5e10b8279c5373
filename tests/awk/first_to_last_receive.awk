# mistakes: first_to_last_receive
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 {
    bytes += $6
    if (start == "") start = $2
    stop = $2
}
END { printf "Throughput: %.3f kbps\n", bytes * 8 / 1000 / (stop - start) }
