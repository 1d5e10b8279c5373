# wild_lan.tcl -- a LAN ($ns newLan) for tests/test_wild.py, with a nam trace of the same run.
# Usage: ns wild_lan.tcl <trace> [<namtrace>]
#
#   n0  n1  n2  n3  n4 --- n5        n0..n4 on one 10 Mb/s 802.3 LAN (10 ms), n4 - n5 a
#   |___|___|___|___|                 1 Mb/s 20 ms duplex link with a 5-packet DropTail queue
#
# flow 1: TCP Reno/FTP n0 -> n5 (1040-byte segments), 0.1 .. 2.0 s: every frame on the LAN
#   is overheard by the stations that are neither sender nor receiver (their `d` lines), and
#   the queue at n4 overflows (real drops);
# flow 2: CBR n1 -> n3, 200 B every 20 ms, 0.5 .. 1.5 s: a flow that stays on the LAN.
# The run ends at 2.5 s.
set out [lindex $argv 0]
set ns [new Simulator]
set tf [open $out w]
$ns trace-all $tf
if {[llength $argv] > 1} {
    set nf [open [lindex $argv 1] w]
    $ns namtrace-all $nf
}
for {set i 0} {$i < 6} {incr i} { set n($i) [$ns node] }
$ns newLan "$n(0) $n(1) $n(2) $n(3) $n(4)" 10Mb 10ms LL Queue/DropTail Mac/802_3 Channel
$ns duplex-link $n(4) $n(5) 1Mb 20ms DropTail
$ns queue-limit $n(4) $n(5) 5

set tcp [new Agent/TCP]
$tcp set fid_ 1
$ns attach-agent $n(0) $tcp
set sink [new Agent/TCPSink]
$ns attach-agent $n(5) $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.1 "$ftp start"
$ns at 2.0 "$ftp stop"

set udp [new Agent/UDP]
$udp set fid_ 2
$ns attach-agent $n(1) $udp
set null [new Agent/Null]
$ns attach-agent $n(3) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 200
$cbr set interval_ 0.02
$cbr attach-agent $udp
$ns at 0.5 "$cbr start"
$ns at 1.5 "$cbr stop"

proc finish {} {
    global ns tf nf
    $ns flush-trace
    close $tf
    if {[info exists nf]} { close $nf }
    exit 0
}
$ns at 2.5 "finish"
$ns run
