# delay.awk -- per-flow mean end-to-end delay of a wired ns-2 trace, one pass.
# Usage: awk -f delay.awk out.tr
# Delay of a data packet = its "r" time at the destination node - the first time its packet
# id (field 12) left the source node; matched by packet id, not by sequence number (a
# retransmission is a new packet id).
# Output: fid src dst mean_delay_ms
$5 != "ack" {
    id = $12
    if ($1 != "r") {
        if ($3 == int($9) && !(id in sent)) sent[id] = $2
    } else if ($4 == int($10) && (id in sent)) {
        k = $8 " " $9 " " $10
        sum[k] += $2 - sent[id]; n[k]++
        delete sent[id]
    }
}
END { for (k in n) printf "%s mean_delay_ms %.6f\n", k, 1000 * sum[k] / n[k] }
