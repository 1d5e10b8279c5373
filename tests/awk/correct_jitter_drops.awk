# mistakes:
# TCP flow 1: jitter (mean |D_i - D_i-1| over consecutive deliveries, in arrival order) and drops
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && !($12 in t0) { t0[$12] = $2 }
$1 == "d" && $8 == 1 && $5 == "tcp" { drops++ }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 {
    d = $2 - t0[$12]
    if (n++) { x = d - prev; sum += (x < 0 ? -x : x) }
    prev = d
}
END {
    printf "Jitter: %.5f ms\n", 1000 * sum / (n - 1)
    printf "Dropped: %d packets\n", drops
}
