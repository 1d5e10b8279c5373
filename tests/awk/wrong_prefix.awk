# mistakes: wrong_prefix_small
# kbit/s labelled Mb/s
$1 == "+" && $8 == 2 && $3 == 1 && first == "" { first = $2 }
$1 == "r" && $8 == 2 && $4 == 2 { bytes += $6 }
END { printf "CBR throughput: %.3f Mb/s\n", bytes * 8 / 1000 / (run_end - first) }
