# mistakes: header_512 mebibytes
$1 == "+" && $8 == 2 && $3 == 1 && first == "" { first = $2 }
$1 == "r" && $8 == 2 && $4 == 2 { bytes += $6 - $6 % 512 }
END { printf "CBR goodput: %.5f Mbps\n", bytes / 1048576 / (run_end - first) }
