# mistakes: last_ack_of_seq
# delay by sequence number: first send of a segment to the (last) ACK of that number
$1 == "+" && $5 == "tcp" && $8 == 1 && $3 == 0 && !($11 in t0) { t0[$11] = $2 }
$1 == "r" && $5 == "ack" && $8 == 1 && $4 == 0 { t1[$11] = $2 }
END {
    for (s in t1) if (s in t0) { sum += t1[s] - t0[s]; n++ }
    printf "Average delay: %.4f ms\n", 1000 * sum / n
}
