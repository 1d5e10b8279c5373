# mistakes:
# old (CMU) wireless format: CBR flow from node src to node dst (-v), at the agent layer;
# bytes = the size the application sent (the AGT s line), delivered = AGT r at dst.
$1 == "s" && $4 == "AGT" && $7 == "cbr" && $3 == "_" src "_" && $15 ~ "^" dst ":" {
    size[$6] = $8; sent++
    if (first == "") first = $2
    t0[$6] = $2
}
$1 == "r" && $4 == "AGT" && $7 == "cbr" && $3 == "_" dst "_" && ($6 in size) {
    bytes += size[$6]; recv++; delay += $2 - t0[$6]
}
END {
    printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first)
    printf "PDR: %.4f %%\n", 100 * recv / sent
    printf "Average delay: %.4f ms\n", 1000 * delay / recv
}
