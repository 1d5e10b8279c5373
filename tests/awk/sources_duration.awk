# mistakes: sources_duration
# divided by the simulation time set in the Tcl script (the sources run 2 s)
BEGIN { simtime = 2.0 }
$1 == "r" && $8 == 1 && $5 == "tcp" && $4 == 3 { bytes += $6 }
END { printf "Throughput: %.3f kbps\n", bytes * 8 / 1000 / simtime }
