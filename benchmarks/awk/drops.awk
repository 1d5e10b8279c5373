# drops.awk -- per-flow dropped data packets of a wired ns-2 trace, one pass.
# Usage: awk -f drops.awk out.tr
# Output: fid src dst dropped_pkts
$1 == "d" && $5 != "ack" { d[$8 " " $9 " " $10]++ }
END { for (k in d) printf "%s dropped_pkts %d\n", k, d[k] }
