# ingest_qmon.tcl -- queue monitor and RED traces for the ingest tests.
# Usage: ns ingest_qmon.tcl OUTDIR
# Writes OUTDIR/qmon_samples.tr (periodic monitor-queue samples every 0.25 s on 2->3),
# OUTDIR/qmon_events.tr (per-event `q -t` lines on 0->2), OUTDIR/red.tr (Q/a/p/c on 2->3).
set dir [lindex $argv 0]
set ns [new Simulator]
foreach i {0 1 2 3} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) 10Mb 2ms DropTail
Queue/RED set thresh_ 3
Queue/RED set maxthresh_ 10
Queue/RED set q_weight_ 0.01
Queue/RED set linterm_ 10
$ns duplex-link $n(2) $n(3) 1Mb 20ms RED
$ns queue-limit $n(2) $n(3) 20
foreach {i src} {0 0 1 1} {
  set tcp($i) [new Agent/TCP/Newreno]
  $tcp($i) set fid_ [expr $i + 1]
  $tcp($i) set window_ 64
  set snk($i) [new Agent/TCPSink]
  $ns attach-agent $n($src) $tcp($i)
  $ns attach-agent $n(3) $snk($i)
  $ns connect $tcp($i) $snk($i)
  set ftp($i) [$tcp($i) attach-source FTP]
  $ns at [expr 0.1 + $i * 0.2] "$ftp($i) start"
}
set qsf [open $dir/qmon_samples.tr w]
set qm [$ns monitor-queue $n(2) $n(3) $qsf 0.25]
[$ns link $n(2) $n(3)] queue-sample-timeout
set qef [open $dir/qmon_events.tr w]
set qm2 [$ns monitor-queue $n(0) $n(2) $qef]
[$ns link $n(0) $n(2)] start-tracing
set redq [[$ns link $n(2) $n(3)] queue]
set rf [open $dir/red.tr w]
$redq trace curq_
$redq trace ave_
$redq trace prob1_
$redq trace cur_max_p_
$redq attach $rf
$ns at 2.0 "close $qsf; close $qef; close $rf; exit 0"
$ns run
