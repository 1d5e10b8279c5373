# wild_wireless.tcl -- a small ad-hoc run in the habits of published MANET scripts, for
# tests/test_wild.py: the template's `$ns trace-annotate "MOBILE NODE MOVEMENTS"` (a `v` line
# at the top of the trace), and any routing agent, MDART included (packet type MDART, not in
# tracekit's list of routing packet types).
# Usage: ns wild_wireless.tcl <old|new> <AODV|DSDV|MDART|...> <outfile>
#
# 4 static nodes in a row, 150 m apart (802.11, TwoRayGround, about 250 m range):
#   0 (50,300)  1 (200,300)  2 (350,300)  3 (500,300)
# flow 1: CBR 0 -> 3, 512 B every 0.2 s from 2 s to 5 s (3 hops).
# Every node is reset at 6 s, the end of the run.
if {[llength $argv] < 3} {
    puts stderr "usage: ns wild_wireless.tcl <old|new> <routing protocol> <outfile>"
    exit 1
}
set fmt [lindex $argv 0]
set rp  [lindex $argv 1]
set out [lindex $argv 2]
set nn 4
set ns [new Simulator]
if {$fmt eq "new"} { $ns use-newtrace }
set tf [open $out w]
$ns trace-all $tf
set topo [new Topography]
$topo load_flatgrid 600 600
create-god $nn
$ns node-config -adhocRouting $rp -llType LL -macType Mac/802_11 \
    -ifqType Queue/DropTail/PriQueue -ifqLen 50 -antType Antenna/OmniAntenna \
    -propType Propagation/TwoRayGround -phyType Phy/WirelessPhy \
    -channelType Channel/WirelessChannel -topoInstance $topo \
    -agentTrace ON -routerTrace ON -macTrace OFF -movementTrace OFF
$ns trace-annotate "MOBILE NODE MOVEMENTS"
for {set i 0} {$i < $nn} {incr i} {
    set node($i) [$ns node]
    $node($i) random-motion 0
    $node($i) set X_ [expr {50 + 150 * $i}]
    $node($i) set Y_ 300
    $node($i) set Z_ 0
}
set udp [new Agent/UDP]
$udp set fid_ 1
$ns attach-agent $node(0) $udp
set null [new Agent/Null]
$ns attach-agent $node(3) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 512
$cbr set interval_ 0.2
$cbr attach-agent $udp
$ns at 2.0 "$cbr start"
$ns at 5.0 "$cbr stop"
for {set i 0} {$i < $nn} {incr i} { $ns at 6.0 "$node($i) reset" }
$ns at 6.0 "$ns flush-trace; close $tf; exit 0"
$ns run
