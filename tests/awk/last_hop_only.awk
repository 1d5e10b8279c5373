# mistakes: last_hop_only
# start time stored at every enqueue: overwritten at each hop
$1 == "+" && $8 == 1 && $5 == "tcp" { start[$12] = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { sum += $2 - start[$12]; n++ }
END { printf "Average end-to-end delay: %.4f ms\n", 1000 * sum / n }
