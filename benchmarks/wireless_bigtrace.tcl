# wireless_bigtrace.tcl -- a large wireless (CMU) trace for benchmarks/bench_wireless.py: a
# random-waypoint MANET (802.11, TwoRayGround, AODV) with CBR/UDP flows between random node
# pairs, agent, router, MAC and movement tracing on.
# Usage: ns wireless_bigtrace.tcl DURATION_S old|new OUTFILE [NODES] [FLOWS] [SEED]
#   old: the CMU format; new: `$ns use-newtrace` before the nodes exist (the -t format)
# Defaults: 50 nodes on 1000 m x 1000 m, 12 flows of 512-byte packets at 8 packets/s, seed 1.
# Random waypoint: a random start position, then move to a random point at
# Uniform[1, 10) m/s, pause 5 s, repeat; flows start at a random time in [0, 5) s.
set dur   [lindex $argv 0]
set fmt   [lindex $argv 1]
set out   [lindex $argv 2]
set nn    [expr {[llength $argv] > 3 ? [lindex $argv 3] : 50}]
set nflow [expr {[llength $argv] > 4 ? [lindex $argv 4] : 12}]
set seed  [expr {[llength $argv] > 5 ? [lindex $argv 5] : 1}]
set W 1000
set H 1000

set ns [new Simulator]
if {$fmt eq "new"} { $ns use-newtrace }
set tf [open $out w]
$ns trace-all $tf
global defaultRNG
$defaultRNG seed $seed
set rng [new RNG]
$rng seed $seed
$rng next-substream

set topo [new Topography]
$topo load_flatgrid $W $H
create-god $nn
$ns node-config -adhocRouting AODV -llType LL -macType Mac/802_11 \
  -ifqType Queue/DropTail/PriQueue -ifqLen 50 -antType Antenna/OmniAntenna \
  -propType Propagation/TwoRayGround -phyType Phy/WirelessPhy \
  -channelType Channel/WirelessChannel -topoInstance $topo \
  -agentTrace ON -routerTrace ON -macTrace ON -movementTrace ON

proc rand_point {} {
  global rng W H
  set x [$rng uniform 1 [expr {$W - 1}]]
  set y [$rng uniform 1 [expr {$H - 1}]]
  return [list $x $y]
}
for {set i 0} {$i < $nn} {incr i} {
  set node($i) [$ns node]
  $node($i) random-motion 0
  lassign [rand_point] x y
  $node($i) set X_ $x; $node($i) set Y_ $y; $node($i) set Z_ 0.0
  set px $x; set py $y
  set t 5.0
  while {$t < $dur} {
    lassign [rand_point] dx dy
    set v [$rng uniform 1.0 10.0]
    $ns at $t "$node($i) setdest $dx $dy $v"
    set d [expr {sqrt(($dx - $px) * ($dx - $px) + ($dy - $py) * ($dy - $py))}]
    set t [expr {$t + $d / $v + 5.0}]
    set px $dx; set py $dy
  }
}
for {set k 1} {$k <= $nflow} {incr k} {
  set s [$rng integer $nn]
  set d [$rng integer $nn]
  while {$d == $s} { set d [$rng integer $nn] }
  set udp($k) [new Agent/UDP]
  $udp($k) set fid_ $k
  set sink($k) [new Agent/Null]
  $ns attach-agent $node($s) $udp($k)
  $ns attach-agent $node($d) $sink($k)
  $ns connect $udp($k) $sink($k)
  set cbr($k) [new Application/Traffic/CBR]
  $cbr($k) set packetSize_ 512
  $cbr($k) set interval_ 0.125
  $cbr($k) attach-agent $udp($k)
  $ns at [$rng uniform 0 5] "$cbr($k) start"
}
for {set i 0} {$i < $nn} {incr i} { $ns at $dur "$node($i) reset" }
$ns at $dur "$ns flush-trace; close $tf; exit 0"
$ns run
