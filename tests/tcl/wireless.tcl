# wireless.tcl -- a small ad-hoc scenario for the wireless metric tests (tests/test_wireless.py).
# Usage: ns wireless.tcl <old|new|mixed> <AODV|DSDV|DSR> <outfile> [energy]
#   old    the CMU format (default)
#   new    $ns use-newtrace before the nodes are created: every line in the new format
#   mixed  $ns use-newtrace after the nodes were created: AGT lines new, RTR/MAC/IFQ old
#   energy an EnergyModel on every node (old: [energy ...] blocks; new: -Ne and N lines)
#
# 7 static nodes, 802.11, TwoRayGround (about 250 m range), 200 m between neighbours:
#
#        4 (250,500)   5 (450,500)
#
#   0 (50,300)  1 (250,300)  2 (450,300)  3 (650,300)
#
#                                         6 (650,100)
#
# flow 1: CBR 0 -> 3, 512 B every 0.25 s   (3 hops: 0-1-2-3)
# flow 2: CBR 4 -> 2, 256 B every 0.1 s    (2 hops: 4-1-2 or 4-5-2)
# flow 3: TCP Reno/FTP 5 -> 0               (3 hops: 5-2-1-0 or 5-4-1-0), 1040-byte segments
# Node 2 leaves north at 80 m/s from t = 4 to (450,700) and comes back from t = 9.5: from
# about t = 5.9 to t = 12.6 nodes 3 and 6 have no link to the rest (flow 1 has no route;
# flow 2 reaches 2 through 5 and flow 3 goes round through 4). End at 15 s, with a reset of
# every node (D ... END lines for whatever is still queued). DSDV advertises every 2 s
# instead of 15 so that its routes converge within the run.
if {[llength $argv] < 3} {
    puts stderr "usage: ns wireless.tcl <old|new|mixed> <AODV|DSDV|DSR> <outfile> \[energy\]"
    exit 1
}
set fmt [lindex $argv 0]
set rp  [lindex $argv 1]
set out [lindex $argv 2]
set energy [expr {[llength $argv] > 3 && [lindex $argv 3] eq "energy"}]

set val(chan)   Channel/WirelessChannel
set val(prop)   Propagation/TwoRayGround
set val(netif)  Phy/WirelessPhy
set val(mac)    Mac/802_11
set val(ifq)    Queue/DropTail/PriQueue
if {$rp eq "DSR"} { set val(ifq) CMUPriQueue }
set val(ll)     LL
set val(ant)    Antenna/OmniAntenna
set val(ifqlen) 50
set val(nn)     7
set val(stop)   15.0

Agent/DSDV set perup_ 2
set ns [new Simulator]
if {$fmt eq "new"} { $ns use-newtrace }
set tf [open $out w]
$ns trace-all $tf

set topo [new Topography]
$topo load_flatgrid 800 800
create-god $val(nn)

set cfg [list -adhocRouting $rp -llType $val(ll) -macType $val(mac) \
    -ifqType $val(ifq) -ifqLen $val(ifqlen) -antType $val(ant) \
    -propType $val(prop) -phyType $val(netif) -channelType $val(chan) \
    -topoInstance $topo -agentTrace ON -routerTrace ON -macTrace ON -movementTrace ON]
if {$energy} {
    lappend cfg -energyModel EnergyModel -initialEnergy 100 -rxPower 0.3 -txPower 0.6 \
        -idlePower 0.01 -sleepPower 0.001
}
eval $ns node-config $cfg

set pos {{50 300} {250 300} {450 300} {650 300} {250 500} {450 500} {650 100}}
for {set i 0} {$i < $val(nn)} {incr i} {
    set node($i) [$ns node]
    $node($i) random-motion 0
    $node($i) set X_ [lindex $pos $i 0]
    $node($i) set Y_ [lindex $pos $i 1]
    $node($i) set Z_ 0.0
}
if {$fmt eq "mixed"} { $ns use-newtrace }   ;# too late for the nodes' RTR/MAC/IFQ traces

$ns at 4.0 "$node(2) setdest 450 700 80.0"
$ns at 9.5 "$node(2) setdest 450 300 80.0"

proc cbr_flow {fid from to size interval start} {
    global ns node val
    set udp [new Agent/UDP]
    $udp set fid_ $fid
    set null [new Agent/Null]
    $ns attach-agent $node($from) $udp
    $ns attach-agent $node($to) $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $size
    $cbr set interval_ $interval
    $cbr attach-agent $udp
    $ns at $start "$cbr start"
    $ns at [expr {$val(stop) - 1.0}] "$cbr stop"
}
cbr_flow 1 0 3 512 0.25 1.0
cbr_flow 2 4 2 256 0.1 1.5

set tcp [new Agent/TCP/Reno]
$tcp set fid_ 3
$tcp set window_ 8
set sink [new Agent/TCPSink]
$ns attach-agent $node(5) $tcp
$ns attach-agent $node(0) $sink
$ns connect $tcp $sink
set ftp [$tcp attach-source FTP]
$ns at 2.0 "$ftp start"
$ns at [expr {$val(stop) - 1.0}] "$ftp stop"

for {set i 0} {$i < $val(nn)} {incr i} { $ns at $val(stop) "$node($i) reset" }
$ns at $val(stop) "$ns flush-trace; close $tf; exit 0"
$ns run
