# mistakes: r_every_hop
# throughput of the TCP flow; every "r" of fid 1 data counted (no check of the receiving node)
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" { bytes += $6 }
END { printf "Throughput = %.3f kbps\n", bytes * 8 / 1000 / (run_end - first) }
