# mistakes: last_hop_only
# jitter, with the send time overwritten at every enqueue
$1 == "+" && $8 == 1 && $5 == "tcp" { t0[$12] = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 {
    d = $2 - t0[$12]
    if (n++) { x = d - prev; sum += (x < 0 ? -x : x) }
    prev = d
}
END { printf "Jitter: %.5f ms\n", 1000 * sum / (n - 1) }
