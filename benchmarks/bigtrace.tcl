# bigtrace.tcl -- a large wired trace for the benchmarks: a TCP flow and heavy CBR
# over a 100 Mb/s dumbbell, with 16-field lines mixed in from the second half.
# Usage: ns bigtrace.tcl DURATION_S OUTFILE
set dur [lindex $argv 0]
set out [lindex $argv 1]
set ns [new Simulator]
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 100Mb 1ms DropTail
$ns duplex-link $n(1) $n(2) 100Mb 1ms DropTail
$ns duplex-link $n(2) $n(3) 50Mb 10ms DropTail
$ns queue-limit $n(2) $n(3) 100
set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
$tcp set window_ 200
set sink [new Agent/TCPSink]
$ns attach-agent $n(0) $tcp
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
set udp [new Agent/UDP]
$udp set fid_ 2
set null [new Agent/Null]
$ns attach-agent $n(1) $udp
$ns attach-agent $n(3) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 500
$cbr set rate_ 40Mb
$cbr set random_ 1
$cbr attach-agent $udp
$ns at 0.0 "$cbr start"
$ns at 0.0 "$ftp start"
$ns at $dur "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
