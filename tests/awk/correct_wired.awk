# mistakes:
# TCP flow 1 (node 0 -> node 3): every metric the way tracekit defines it.
# run_end (-v): the simulation's stop time.
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 && !($12 in sent) { sent[$12] = $2; nsent++; if (first == "") first = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 {
    bytes += $6; nrecv++
    delay += $2 - sent[$12]
}
END {
    printf "Throughput: %.4f kbps\n", bytes * 8 / 1000 / (run_end - first)
    printf "Average delay: %.4f ms\n", 1000 * delay / nrecv
    printf "PDR: %.5f\n", nrecv / nsent
    printf "Sent: %d packets, received: %d packets\n", nsent, nrecv
}
