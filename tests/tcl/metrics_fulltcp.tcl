# metrics_fulltcp.tcl -- two FullTcp connections (byte sequence numbers, `tcp`-typed pure
# ACKs, FIN) and a one-way Reno flow over a small DropTail bottleneck.
# Usage: ns metrics_fulltcp.tcl OUTFILE SHOW_TCPHDR(0|1)
set out [lindex $argv 0]
set hdr [lindex $argv 1]
set ns [new Simulator]
if {$hdr} { Trace set show_tcphdr_ 1 }
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(2) $n(3) 1.5Mb 10ms DropTail
$ns queue-limit $n(2) $n(3) 8
proc fulltcp {cls src dst fid start stop} {
    global ns n
    set tcp [new Agent/TCP/$cls]
    set sink [new Agent/TCP/$cls]
    $tcp set fid_ $fid
    $sink set fid_ $fid
    $ns attach-agent $n($src) $tcp
    $ns attach-agent $n($dst) $sink
    $ns connect $tcp $sink
    $sink listen
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at $start "$ftp start"
    $ns at $stop "$tcp close"
}
fulltcp FullTcp 0 3 7 0.1 2.0
fulltcp FullTcp/Sack 1 3 8 0.2 2.5
set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
set sink [new Agent/TCPSink]
$ns attach-agent $n(0) $tcp
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.3 "$ftp start"
$ns at 3.0 "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
