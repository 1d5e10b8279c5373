# mistakes:
# new wireless format (use-newtrace), fields by position as blogs read them: $3 time, $5 node,
# $19 layer, $31/$33 IP source/destination, $35 type, $37 size, $41 packet id
$1 == "s" && $19 == "AGT" && $35 == "cbr" && $5 == src && $33 ~ "^" dst "\\." {
    size[$41] = $37; sent++
    if (first == "") first = $3
}
$1 == "r" && $19 == "AGT" && $35 == "cbr" && $5 == dst && ($41 in size) { bytes += size[$41]; recv++ }
END {
    printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first)
    printf "Delivered: %d packets\n", recv
}
