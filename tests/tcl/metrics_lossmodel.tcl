# metrics_lossmodel.tcl -- a Reno flow and a CBR flow whose first links carry a loss model
# at the link head (`$ns lossmodel`): lost packets show a bare `d` at the source, no `+`.
# Usage: ns metrics_lossmodel.tcl OUTFILE [SEED]
set out [lindex $argv 0]
set seed [expr {[llength $argv] > 1 ? [lindex $argv 1] : 1}]
set ns [new Simulator]
$defaultRNG seed $seed
set tf [open $out w]
$ns trace-all $tf
foreach i {0 1 2 3} { set n($i) [$ns node] }
$ns duplex-link $n(0) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(1) $n(2) 10Mb 2ms DropTail
$ns duplex-link $n(2) $n(3) 2Mb 15ms DropTail
$ns queue-limit $n(2) $n(3) 20
foreach {a b} {0 2 1 2} {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ 0.04
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns lossmodel $em $n($a) $n($b)
}
set tcp [new Agent/TCP/Reno]
$tcp set fid_ 1
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
$cbr set packetSize_ 600
$cbr set rate_ 800kb
$cbr attach-agent $udp
$ns at 0.1 "$ftp start"
$ns at 0.0 "$cbr start"
$ns at 3.0 "finish"
proc finish {} { global ns tf; $ns flush-trace; close $tf; exit 0 }
$ns run
