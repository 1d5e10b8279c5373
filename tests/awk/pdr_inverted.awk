# mistakes: pdr_inverted
$1 == "+" && $8 == 1 && $5 == "tcp" && $3 == 0 { sent++ }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { recv++ }
END { printf "Packet delivery ratio: %.5f\n", sent / recv }
