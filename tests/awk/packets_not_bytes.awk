# mistakes: packets_not_bytes
# "throughput in kbps" that counts packets
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && first == "" { first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { pkts++ }
END { printf "Throughput: %.3f kbps\n", pkts / (run_end - first) }
