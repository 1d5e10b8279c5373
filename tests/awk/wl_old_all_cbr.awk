# mistakes: all_flows
# the usual MANET script: every CBR packet sent and received at the agent layer, all flows
$1 == "s" && $4 == "AGT" && $7 == "cbr" { sent++; if (first == "") first = $2; size[$6] = $8 }
$1 == "r" && $4 == "AGT" && $7 == "cbr" { recv++; bytes += size[$6] }
END {
    printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first)
    printf "Packets received: %d\n", recv
}
