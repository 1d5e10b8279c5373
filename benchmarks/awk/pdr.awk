# pdr.awk -- per-flow packet delivery ratio of a wired ns-2 trace, one pass.
# Usage: awk -f pdr.awk out.tr
# sent = distinct packet ids of data packets seen leaving the source node (a "+", or a bare
# "d" of a loss model at the link head); received = "r" events at the destination node (a
# packet id reaches its destination once).
# Output: fid src dst sent recv pdr
$5 != "ack" {
    k = $8 " " $9 " " $10
    if ($1 != "r") {
        if ($3 == int($9) && !($12 in seen)) { seen[$12]; s[k]++ }
    } else if ($4 == int($10)) r[k]++
}
END { for (k in s) printf "%s pdr %d %d %.6f\n", k, s[k], r[k], r[k] / s[k] }
