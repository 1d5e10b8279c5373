# jitter.awk -- per-flow jitter of a wired ns-2 trace, one pass.
# Usage: awk -f jitter.awk out.tr
# Jitter = mean |D_i - D_(i-1)| over consecutive deliveries in arrival order, D = delay of a
# data packet (its "r" time at the destination node - the first time its packet id left the
# source node).
# Output: fid src dst jitter_ms
$5 != "ack" {
    id = $12
    if ($1 != "r") {
        if ($3 == int($9) && !(id in sent)) sent[id] = $2
    } else if ($4 == int($10) && (id in sent)) {
        k = $8 " " $9 " " $10
        d = $2 - sent[id]
        delete sent[id]
        if (k in prev) { x = d - prev[k]; js[k] += (x < 0 ? -x : x); jn[k]++ }
        prev[k] = d
    }
}
END { for (k in jn) printf "%s jitter_ms %.6f\n", k, 1000 * js[k] / jn[k] }
