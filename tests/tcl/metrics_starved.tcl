# metrics_starved.tcl -- a TCP flow starved by a CBR flow that fills the bottleneck (papers
# 002/004, experiment 1 at CBR 10 Mb/s), and ping-like packets without sequence numbers.
#
#   n0 --\                /-- n3        Reno  n0 -> n3 (fid 1), from 0.1 s
#         n1 ---------- n2              CBR   n1 -> n2 (fid 2), 10 Mb/s in [CBR_START, CBR_STOP)
#   n4 --/                \-- n5        Ping  n4 -> n5 (fid 3): one echo every 0.25 s
#                                       all links 10Mb/10ms DropTail, queue 50
# The sources stop at SOURCES_STOP; the simulation ends at STOP (the test labels the run with
# stop_s = STOP): the trace's last line comes before the recorded end.
# Used by tests/test_metrics.py against tests/reference_metrics.py.
# Usage: ns metrics_starved.tcl OUTFILE [CBR_START CBR_STOP SOURCES_STOP STOP]
set out [lindex $argv 0]
set cbr_start [expr {[llength $argv] > 1 ? [lindex $argv 1] : 0.5}]
set cbr_stop [expr {[llength $argv] > 2 ? [lindex $argv 2] : 4.0}]
set sources_stop [expr {[llength $argv] > 3 ? [lindex $argv 3] : 4.0}]
set stop [expr {[llength $argv] > 4 ? [lindex $argv 4] : 5.0}]
set ns [new Simulator]
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3 4 5} { set n($i) [$ns node] }
foreach {a b} {0 1  4 1  1 2  2 3  2 5} { $ns duplex-link $n($a) $n($b) 10Mb 10ms DropTail }
$ns queue-limit $n(1) $n(2) 50

set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
$tcp set window_ 20
$tcp set packetSize_ 1000
set sink [new Agent/TCPSink]
$ns attach-agent $n(0) $tcp
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.1 "$ftp start"
$ns at $sources_stop "$ftp stop"

set udp [new Agent/UDP]
$udp set fid_ 2
set null [new Agent/Null]
$ns attach-agent $n(1) $udp
$ns attach-agent $n(2) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 1000
$cbr set rate_ 10Mb
$cbr attach-agent $udp
$ns at $cbr_start "$cbr start"
$ns at $cbr_stop "$cbr stop"

Agent/Ping instproc recv {from rtt} { }
set p0 [new Agent/Ping]
set p1 [new Agent/Ping]
$p0 set fid_ 3
$ns attach-agent $n(4) $p0
$ns attach-agent $n(5) $p1
$ns connect $p0 $p1
for {set t 0.2} {$t < $sources_stop} {set t [expr {$t + 0.25}]} { $ns at $t "$p0 send" }

$ns at $stop "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
