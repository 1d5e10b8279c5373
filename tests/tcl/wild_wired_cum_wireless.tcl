# wild_wired_cum_wireless.tcl -- a wired-cum-wireless simulation with hierarchical addresses, for
# tests/test_hier.py: a wired node W (0.0.0) linked to a base station BS (1.0.0), a mobile node M
# (1.0.1) 100 m from it; TCP/FTP W -> M (fid 1) from 1 s to 3 s; a CBR W -> M (fid 2, 512 B
# every 2 ms, more than 802.11 carries: the base station's interface queue drops) from 1.5 s to
# 2.5 s; a CBR M -> W (fid 3, 256 B every 10 ms: the mobile node's queue drops a few before the
# wire) from 1.2 s to 2.8 s; DSDV; the run ends at 4 s.
# One file holds wired lines (addresses 0.0.0.0) and wireless lines (addresses packed: 4194305).
# Usage: ns wild_wired_cum_wireless.tcl <outfile> [new]   (new: $ns use-newtrace, the -t format)
set ns [new Simulator]
if {[lindex $argv 1] == "new"} { $ns use-newtrace }
$ns node-config -addressType hierarchical
AddrParams set domain_num_ 2
lappend cluster_num 1 1
AddrParams set cluster_num_ $cluster_num
lappend eilastlevel 1 2
AddrParams set nodes_num_ $eilastlevel
set tf [open [lindex $argv 0] w]
$ns trace-all $tf
set topo [new Topography]
$topo load_flatgrid 500 500
create-god 2
set W0 [$ns node 0.0.0]
$ns node-config -adhocRouting DSDV -llType LL -macType Mac/802_11 -ifqType Queue/DropTail/PriQueue -ifqLen 50 \
  -antType Antenna/OmniAntenna -propType Propagation/TwoRayGround -phyType Phy/WirelessPhy \
  -channelType Channel/WirelessChannel -topoInstance $topo -wiredRouting ON \
  -agentTrace ON -routerTrace ON -macTrace OFF -movementTrace OFF
set BS [$ns node 1.0.0]
$BS random-motion 0
$BS set X_ 100; $BS set Y_ 100; $BS set Z_ 0
$ns node-config -wiredRouting OFF
set M [$ns node 1.0.1]
$M base-station [AddrParams addr2id [$BS node-addr]]
$M random-motion 0
$M set X_ 200; $M set Y_ 100; $M set Z_ 0
$ns duplex-link $W0 $BS 5Mb 2ms DropTail
set tcp [new Agent/TCP]; $tcp set fid_ 1
$ns attach-agent $W0 $tcp
set sink [new Agent/TCPSink]
$ns attach-agent $M $sink
$ns connect $tcp $sink
set ftp [new Application/FTP]; $ftp attach-agent $tcp
set u1 [new Agent/UDP]; $u1 set fid_ 2
$ns attach-agent $W0 $u1
set n1 [new Agent/Null]; $ns attach-agent $M $n1; $ns connect $u1 $n1
set c1 [new Application/Traffic/CBR]; $c1 attach-agent $u1
$c1 set packetSize_ 512; $c1 set interval_ 0.002
set u2 [new Agent/UDP]; $u2 set fid_ 3
$ns attach-agent $M $u2
set n2 [new Agent/Null]; $ns attach-agent $W0 $n2; $ns connect $u2 $n2
set c2 [new Application/Traffic/CBR]; $c2 attach-agent $u2
$c2 set packetSize_ 256; $c2 set interval_ 0.01
$ns at 1.5 "$c1 start"; $ns at 2.5 "$c1 stop"
$ns at 1.2 "$c2 start"; $ns at 2.8 "$c2 stop"
$ns at 1.0 "$ftp start"
$ns at 3.0 "$ftp stop"
$ns at 4.0 "$M reset; $BS reset"
$ns at 4.0 "$ns flush-trace; close $tf; exit 0"
$ns run
