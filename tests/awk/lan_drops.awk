# mistakes:
# TCP flow 1: packets dropped, as tracekit counts them on a LAN too. On a LAN ($ns newLan) every
# station that is neither sender nor receiver writes a `d` line for each frame it hears: such a
# `d` (to the LAN's node, where `h` lines go) of a packet that is received across that LAN (an
# `r` from the LAN's node) is not a loss. Without a LAN every `d` is a drop.
$1 == "h" { lan[$4] = 1 }
$1 == "d" && $8 == 1 && $5 == "tcp" { d[NR] = $12 " " $4 }
$1 == "r" && $8 == 1 && $5 == "tcp" && ($3 in lan) { across[$12 " " $3] = 1 }
END {
    for (i in d) if (!(d[i] in across)) n++
    printf "Dropped: %d packets\n", n
}
