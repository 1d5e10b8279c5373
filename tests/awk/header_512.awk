# mistakes: header_512
# CBR flow 2 (node 1 -> node 2); "remove the header" with size - size % 512
$1 == "+" && $8 == 2 && $3 == 1 && first == "" { first = $2 }
$1 == "r" && $8 == 2 && $4 == 2 { bytes += $6 - $6 % 512 }
END { printf "CBR throughput: %.3f kbps\n", bytes * 8 / 1000 / (run_end - first) }
