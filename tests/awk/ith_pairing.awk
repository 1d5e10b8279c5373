# mistakes: ith_pairing
# delay: the i-th packet sent against the i-th packet received
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 { s[ns++] = $2 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { r[nr++] = $2 }
END {
    for (i = 0; i < nr; i++) sum += r[i] - s[i]
    printf "Average end-to-end delay: %.4f ms\n", 1000 * sum / nr
}
