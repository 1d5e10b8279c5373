# mistakes: sends_every_hop
# PDR with "sent" = every s line of the flow's packets, whatever the layer (AGT, RTR, MAC)
$1 == "s" && $35 == "cbr" && $31 ~ "^" src "\\." && $33 ~ "^" dst "\\." { sent++ }
$1 == "r" && $19 == "AGT" && $35 == "cbr" && $5 == dst && $31 ~ "^" src "\\." { recv++ }
END { printf "Packet delivery ratio: %.2f %%\n", 100 * recv / sent }
