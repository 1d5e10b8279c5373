# ingest_wired.tcl -- small wired traces for the ingest tests.
# Usage: ns ingest_wired.tcl OUTFILE MODE
#   plain    : 12-field trace-all (Reno FTP fid 1, CBR fid 2, drops at the bottleneck)
#   tcphdr   : `Trace set show_tcphdr_ 1` before any link (16 fields), plus a FullTcp
#              flow (fid 3) so the hex TCP flags are not all 0x0
#   latehdr  : show_tcphdr_ set after the access links exist: 12- and 16-field lines mixed
#   annotate : trace-annotate lines and an rtmodel link-down/up (`v` lines, DV routing)
set out  [lindex $argv 0]
set mode [lindex $argv 1]
if {$mode eq "tcphdr"} { Trace set show_tcphdr_ 1 }
set ns [new Simulator]
if {$mode eq "annotate"} { $ns rtproto DV }
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) 10Mb 2ms DropTail
if {$mode eq "latehdr"} { Trace set show_tcphdr_ 1 }
$ns duplex-link $n(2) $n(3) 1Mb 20ms DropTail
$ns queue-limit $n(2) $n(3) 6
if {$mode eq "annotate"} { $ns duplex-link $n(1) $n(3) 1Mb 30ms DropTail }

set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
$tcp set packetSize_ 1000
set sink [new Agent/TCPSink]
$ns attach-agent $n(0) $tcp
$ns attach-agent $n(3) $sink
$ns connect $tcp $sink
set ftp [$tcp attach-source FTP]

set udp [new Agent/UDP]
$udp set fid_ 2
set null [new Agent/Null]
$ns attach-agent $n(1) $udp
$ns attach-agent $n(3) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 500
$cbr set rate_ 400Kb
$cbr attach-agent $udp

if {$mode eq "tcphdr"} {
  set fsrc [new Agent/TCP/FullTcp]
  set fdst [new Agent/TCP/FullTcp]
  $fsrc set segsize_ 500
  $fsrc set fid_ 3
  $ns attach-agent $n(1) $fsrc
  $ns attach-agent $n(3) $fdst
  $ns connect $fsrc $fdst
  $fdst listen
  $ns at 0.15 "$fsrc advance-bytes 3000"
  $ns at 0.9 "$fsrc close"
}
if {$mode eq "annotate"} {
  $ns at 0.3 "$ns trace-annotate {hello from tracekit tests}"
  $ns at 0.6 "$ns trace-annotate {second note}"
  $ns rtmodel-at 0.5 down $n(2) $n(3)
  $ns rtmodel-at 0.8 up $n(2) $n(3)
}
$ns at 0.1 "$cbr start"
$ns at 0.2 "$ftp start"
$ns at 1.2 "$ns flush-trace; close $tf; exit 0"
$ns run
