# mistakes: r_every_hop
# received = every r line of the flow's packets, whatever the layer (AGT, RTR, MAC)
$1 == "s" && $4 == "AGT" && $7 == "cbr" && $3 == "_" src "_" && $15 ~ "^" dst ":" { sent++ }
$1 == "r" && $7 == "cbr" && $14 ~ "^\\[" src ":" && $15 ~ "^" dst ":" { recv++ }
END { printf "PDR: %.4f\n", recv / sent }
