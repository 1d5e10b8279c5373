# mistakes: pdr_inverted sends_every_hop
$1 == "+" && $8 == 1 && $5 == "tcp" { sent++ }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { recv++ }
END { printf "PDR: %.5f\n", sent / recv }
