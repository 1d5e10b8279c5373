# ingest_tcpvar.tcl -- a `$tcp trace cwnd_` file shared by three agents: two on node 0
# (ports 0 and 1) and one on node 1, each tracing cwnd_, ssthresh_ and rtt_.
# Usage: ns ingest_tcpvar.tcl OUTFILE
set out [lindex $argv 0]
set ns [new Simulator]
foreach i {0 1 2} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 10Mb 5ms DropTail
$ns duplex-link $n(1) $n(2) 10Mb 5ms DropTail
set vf [open $out w]
set k 0
foreach src {0 0 1} {
  set tcp($k) [new Agent/TCP/Reno]
  $tcp($k) set fid_ [expr $k + 1]
  set sink($k) [new Agent/TCPSink]
  $ns attach-agent $n($src) $tcp($k)
  $ns attach-agent $n(2) $sink($k)
  $ns connect $tcp($k) $sink($k)
  set ftp($k) [$tcp($k) attach-source FTP]
  $tcp($k) attach $vf
  $tcp($k) trace cwnd_
  $tcp($k) trace ssthresh_
  $tcp($k) trace rtt_
  $ns at [expr 0.1 + 0.2 * $k] "$ftp($k) start"
  incr k
}
$ns at 1.5 "close $vf; exit 0"
$ns run
