# wireless_chain.tcl -- a copy of shared/ns2-probe/02_wireless.tcl (3-node chain, TCP 0->2 fid 1,
# CBR 1->2 fid 2), plus an optional third argument `energy` that adds an EnergyModel to
# node-config (the file is then out_wlE_...). Used by tests/test_wireless_ingest.py.
# Usage: ns wireless_chain.tcl old|new|newafternodes AODV|DSDV|DSR [energy]
set fmt [lindex $argv 0]
set rp  [lindex $argv 1]
set energy [expr {[llength $argv] > 2 && [lindex $argv 2] eq "energy"}]
set val(chan)  Channel/WirelessChannel
set val(prop)  Propagation/TwoRayGround
set val(netif) Phy/WirelessPhy
set val(mac)   Mac/802_11
set val(ifq)   Queue/DropTail/PriQueue
if {$rp eq "DSR"} { set val(ifq) CMUPriQueue }
set val(ll)    LL
set val(ant)   Antenna/OmniAntenna
set val(ifqlen) 50
set val(nn)    3
set ns [new Simulator]
if {$fmt eq "new"} { $ns use-newtrace }
set tf [open [expr {$energy ? "out_wlE" : "out_wl"}]_${fmt}_$rp.tr w]
$ns trace-all $tf
set topo [new Topography]
$topo load_flatgrid 500 500
create-god $val(nn)
set energyopts {}
if {$energy} {
  set energyopts {-energyModel EnergyModel -initialEnergy 100 -rxPower 0.3 -txPower 0.6 -idlePower 0.01 -sleepPower 0.001}
}
$ns node-config -adhocRouting $rp -llType $val(ll) -macType $val(mac) \
  -ifqType $val(ifq) -ifqLen $val(ifqlen) -antType $val(ant) \
  -propType $val(prop) -phyType $val(netif) -channelType $val(chan) \
  -topoInstance $topo -agentTrace ON -routerTrace ON -macTrace ON -movementTrace ON {*}$energyopts
for {set i 0} {$i < $val(nn)} {incr i} {
  set node($i) [$ns node]
  $node($i) random-motion 0
}
if {$fmt eq "newafternodes"} { $ns use-newtrace }
$node(0) set X_ 10;  $node(0) set Y_ 100; $node(0) set Z_ 0
$node(1) set X_ 210; $node(1) set Y_ 100; $node(1) set Z_ 0
$node(2) set X_ 410; $node(2) set Y_ 100; $node(2) set Z_ 0
$ns at 1.5 "$node(2) setdest 400 150 5.0"
set tcp [new Agent/TCP]
$tcp set fid_ 1
set sink [new Agent/TCPSink]
$ns attach-agent $node(0) $tcp
$ns attach-agent $node(2) $sink
$ns connect $tcp $sink
set ftp [$tcp attach-source FTP]
set udp [new Agent/UDP]
$udp set fid_ 2
set null [new Agent/Null]
$ns attach-agent $node(1) $udp
$ns attach-agent $node(2) $null
$ns connect $udp $null
set cbr [new Application/Traffic/CBR]
$cbr set packetSize_ 256
$cbr set interval_ 0.2
$cbr attach-agent $udp
$ns at 0.5 "$ftp start"
$ns at 0.7 "$cbr start"
for {set i 0} {$i < $val(nn)} {incr i} { $ns at 3.0 "$node($i) reset" }
$ns at 3.0 "$ns flush-trace; close $tf; exit 0"
$ns run
