# mistakes: mebibytes
# CBR flow 2 in "Mbps" that are MiB/s
$1 == "+" && $8 == 2 && $3 == 1 && first == "" { first = $2 }
$1 == "r" && $8 == 2 && $4 == 2 { bytes += $6 }
END { printf "CBR throughput: %.5f Mbps\n", bytes / (1024 * 1024) / (run_end - first) }
