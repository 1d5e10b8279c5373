# throughput.awk -- per-flow throughput of a wired ns-2 trace, one pass.
# Usage: awk -f throughput.awk out.tr
# A flow is (fid, source address, destination address) over its data packets (ptype not
# "ack"). Delivered = an "r" event at the destination node (the node part of field 10);
# throughput = bytes delivered x 8 / 1000 / (last delivery - first send), first send = the
# first event of the flow leaving its source node (the node part of field 9).
# Output: fid src dst throughput_kbps
$5 != "ack" {
    k = $8 " " $9 " " $10
    if ($1 != "r" && $3 == int($9) && !(k in first)) first[k] = $2
    if ($1 == "r" && $4 == int($10)) { bytes[k] += $6; last[k] = $2 }
}
END {
    for (k in first) {
        dt = last[k] - first[k]
        printf "%s throughput_kbps %.6f\n", k, (k in bytes && dt > 0) ? bytes[k] * 8 / 1000 / dt : 0
    }
}
