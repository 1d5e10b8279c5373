# mistakes: sends_every_hop
$1 == "+" && $8 == 1 && $5 == "tcp" { sent++ }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { recv++ }
END { printf "Packet delivery ratio: %.5f\n", recv / sent }
