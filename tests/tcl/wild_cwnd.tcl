# wild_cwnd.tcl -- cwnd written the way published scripts do it, for tests/test_wild.py: a Tcl
# proc that puts "$now [$tcp set cwnd_]" every 0.1 s (a two-column time-value file), and the
# same agent's `$tcp trace cwnd_` (a TCP variable trace) to check it against.
# Usage: ns wild_cwnd.tcl <pairs file> <tcpvar file>
#
# n0 -- n1 -- n2: 10 Mb/s 2 ms, then a 1 Mb/s 20 ms bottleneck with a 10-packet queue;
# TCP Reno/FTP n0 -> n2 (fid 1) from 0.1 s to 3.0 s; the run ends at 3.0 s.
set ns [new Simulator]
set pf [open [lindex $argv 0] w]
set vf [open [lindex $argv 1] w]
foreach i {0 1 2} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(1) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) 1Mb 20ms DropTail
$ns queue-limit $n(1) $n(2) 10
set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
$tcp set window_ 50
$ns attach-agent $n(0) $tcp
set sink [new Agent/TCPSink]
$ns attach-agent $n(2) $sink
$ns connect $tcp $sink
$tcp attach $vf
$tcp trace cwnd_
set ftp [new Application/FTP]
$ftp attach-agent $tcp
$ns at 0.1 "$ftp start"

proc record {} {
    global ns tcp pf
    set now [$ns now]
    puts $pf "$now [$tcp set cwnd_]"
    $ns at [expr {$now + 0.1}] "record"
}
$ns at 0.0 "record"
$ns at 3.0 "close $pf; close $vf; exit 0"
$ns run
