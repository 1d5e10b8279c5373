# wild_hier_wired.tcl -- a wired simulation with hierarchical addresses, for tests/test_hier.py:
# 2 domains, 3 clusters, 5 nodes, created in an order that is not the order of their addresses
# (node ids 0..4 are 1.0.1, 0.0.0, 1.0.0, 0.1.0, 0.0.1): the trace's node ids cannot be derived
# from AddrParams. Chain 0.0.0 - 0.0.1 - 0.1.0 - 1.0.0 - 1.0.1 (10 Mb/s, 2 ms), with a 1 Mb/s
# bottleneck 0.1.0 -> 1.0.0 (DropTail, 10 packets); TCP/FTP 0.0.0 -> 1.0.1 (fid 1) from 0.5 s, a
# CBR 0.0.1 -> 1.0.0 (fid 2, 500 B every 5 ms: 800 kb/s) from 1 s to 2 s; the run ends at 3 s.
# Usage: ns wild_hier_wired.tcl <outfile>
set ns [new Simulator]
$ns node-config -addressType hierarchical
AddrParams set domain_num_ 2
AddrParams set cluster_num_ {2 1}
AddrParams set nodes_num_ {2 1 2}
set tf [open [lindex $argv 0] w]
$ns trace-all $tf
set e [$ns node 1.0.1]
set a [$ns node 0.0.0]
set d [$ns node 1.0.0]
set c [$ns node 0.1.0]
set b [$ns node 0.0.1]
$ns duplex-link $a $b 10Mb 2ms DropTail
$ns duplex-link $b $c 10Mb 2ms DropTail
$ns duplex-link $c $d 1Mb 2ms DropTail
$ns queue-limit $c $d 10
$ns duplex-link $d $e 10Mb 2ms DropTail
set tcp [new Agent/TCP]; $tcp set fid_ 1
$ns attach-agent $a $tcp
set sink [new Agent/TCPSink]; $ns attach-agent $e $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]; $ftp attach-agent $tcp
set udp [new Agent/UDP]; $udp set fid_ 2
$ns attach-agent $b $udp
set null [new Agent/Null]; $ns attach-agent $d $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]; $cbr attach-agent $udp
$cbr set packetSize_ 500; $cbr set interval_ 0.005
$ns at 0.5 "$ftp start"
$ns at 1.0 "$cbr start"
$ns at 2.0 "$cbr stop"
$ns at 3.0 "$ns flush-trace; close $tf; exit 0"
$ns run
