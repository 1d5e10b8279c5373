# metrics_dumbbell.tcl -- Reno, Vegas and SACK flows plus a CBR flow over a RED bottleneck,
# and two small CBR flows that both keep ns-2's default fid 0 (told apart by address).
# Used by tests/test_metrics.py to compare the SQL views with tests/reference_metrics.py.
# Usage: ns metrics_dumbbell.tcl OUTFILE [SEED]
set out [lindex $argv 0]
set seed [expr {[llength $argv] > 1 ? [lindex $argv 1] : 1}]
set ns [new Simulator]
$defaultRNG seed $seed
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3 4 5 6 7} { set n($i) [$ns node] }
# sources 0..3 -> router 4 -> router 5 -> sinks 6, 7
foreach i {0 1 2 3} { $ns duplex-link $n($i) $n(4) 10Mb 2ms DropTail }
$ns duplex-link $n(4) $n(5) 1.5Mb 20ms RED
$ns duplex-link $n(5) $n(6) 10Mb 2ms DropTail
$ns duplex-link $n(5) $n(7) 10Mb 3ms DropTail
$ns queue-limit $n(4) $n(5) 25

proc tcpflow {cls sinkcls src dst fid start} {
    global ns n
    set tcp [new Agent/TCP/$cls]
    $tcp set fid_ $fid
    $tcp set window_ 40
    set sink [new Agent/$sinkcls]
    $ns attach-agent $n($src) $tcp
    $ns attach-agent $n($dst) $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $ns at $start "$ftp start"
    return $ftp
}
proc cbrflow {src dst fid size rate start stop} {
    global ns n
    set udp [new Agent/UDP]
    if {$fid >= 0} { $udp set fid_ $fid }
    set null [new Agent/Null]
    $ns attach-agent $n($src) $udp
    $ns attach-agent $n($dst) $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $size
    $cbr set rate_ $rate
    $cbr set random_ 1
    $cbr attach-agent $udp
    $ns at $start "$cbr start"
    $ns at $stop "$cbr stop"
}
tcpflow Reno TCPSink 0 6 1 0.1
tcpflow Vegas TCPSink 1 6 2 0.2
tcpflow Sack1 TCPSink/Sack1 2 7 3 0.3
cbrflow 3 7 4 500 400kb 0.05 3.9
# two flows sharing the default fid 0
cbrflow 3 6 -1 200 64kb 0.5 3.0
cbrflow 0 7 -1 300 48kb 1.0 3.5
$ns at 4.0 "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
