# manet.tcl -- a mobile ad-hoc network for comparing routing protocols, in the
# style of Broch et al. 1998 ("A Performance Comparison of Multi-Hop Wireless
# Ad Hoc Network Routing Protocols"): mobile nodes on a flat width_m x height_m
# area, random waypoint mobility, CBR/UDP and TCP flows between random node
# pairs, AODV, DSDV or DSR routing.
#
# Node config: 802.11 MAC (ns defaults: 2 Mb/s, RTS/CTS on every unicast frame),
# TwoRayGround propagation (250 m range with the ns defaults), OmniAntenna, LL,
# interface queue PriQueue of 50 packets (CMUPriQueue for DSR, which needs it),
# agent, router, MAC and movement tracing on.  trace_format=new calls
# use-newtrace before the nodes exist (ns-2's -t format); old is the CMU format.
#
# Random waypoint, generated here (no setdest binary): every node starts at a
# uniformly random position, stays there pause_time seconds, then repeatedly
# moves to a uniformly random destination at a speed ~ Uniform[1, max_speed_mps)
# (= max_speed_mps if that is <= 1; 0 = static nodes) and pauses pause_time
# seconds, until duration.  Flows: cbr_flows CBR/UDP flows (fids 1..c, "CBR k")
# then tcp_flows TCP Reno + FTP flows (fids c+1.., "TCP k"), each between a
# random pair of distinct nodes, starting at a random time in [0, start_max).
#
# Positions, movements, flow end points and start times come from a private RNG
# on its own substream of the seed, so one seed is one movement-and-traffic
# pattern whatever the routing protocol or trace format (Broch et al. ran every
# protocol on the same patterns); the MAC's random backoff uses the default RNG,
# seeded with the same seed.
# Sources stop at duration; the run ends drain_s later, when the nodes are reset
# (packets still queued become "D ... END" drops).
# Trace files: packets.tr (the wireless trace) and, when there are TCP flows,
# cwnd.tr (cwnd_ of every TCP sender); no queue.tr.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args manet
if {$P(nodes) < 2} { tk_die "nodes must be >= 2, got $P(nodes)" }
if {$P(width_m) < 1 || $P(height_m) < 1} { tk_die "width_m and height_m must be >= 1" }
if {$P(max_speed_mps) < 0 || $P(pause_time) < 0} { tk_die "max_speed_mps and pause_time must be >= 0" }
if {$P(cbr_flows) < 0 || $P(tcp_flows) < 0 || $P(cbr_flows) + $P(tcp_flows) < 1} {
    tk_die "need cbr_flows >= 0, tcp_flows >= 0 and at least one flow"
}
if {$P(cbr_rate_pps) <= 0} { tk_die "cbr_rate_pps must be > 0, got $P(cbr_rate_pps)" }

set ns [new Simulator]
set ncbr $P(cbr_flows)
for {set k 1} {$k <= $ncbr} {incr k} { tk_flow $k "CBR $k" }
for {set k 1} {$k <= $P(tcp_flows)} {incr k} { tk_flow [expr {$ncbr + $k}] "TCP $k" }
# use-newtrace must come before the nodes are created (called after them, only
# the AGT lines would be in the new format)
if {$P(trace_format) eq "new"} { $ns use-newtrace }
if {$P(tcp_flows) > 0} { tk_open_traces {packets cwnd} } else { tk_open_traces {packets} }

# the scenario's own random stream (see the header)
set rng [new RNG]
$rng seed $P(seed)
$rng next-substream

set topo [new Topography]
$topo load_flatgrid $P(width_m) $P(height_m)
create-god $P(nodes)
set chan [new Channel/WirelessChannel]
set ifq Queue/DropTail/PriQueue
if {$P(routing) eq "DSR"} { set ifq CMUPriQueue }
$ns node-config -adhocRouting $P(routing) \
    -llType LL \
    -macType Mac/802_11 \
    -ifqType $ifq \
    -ifqLen 50 \
    -antType Antenna/OmniAntenna \
    -propType Propagation/TwoRayGround \
    -phyType Phy/WirelessPhy \
    -channel $chan \
    -topoInstance $topo \
    -agentTrace ON \
    -routerTrace ON \
    -macTrace ON \
    -movementTrace ON

# A point drawn uniformly inside the area (strictly inside: ns rejects a
# setdest onto the border).
proc rand_point {} {
    global rng P
    set x [$rng uniform 0 $P(width_m)]
    set y [$rng uniform 0 $P(height_m)]
    if {$x <= 0.0} { set x 0.001 }
    if {$y <= 0.0} { set y 0.001 }
    return [list $x $y]
}

for {set i 0} {$i < $P(nodes)} {incr i} {
    set node($i) [$ns node]
    $node($i) random-motion 0
}
for {set i 0} {$i < $P(nodes)} {incr i} {
    lassign [rand_point] x y
    $node($i) set X_ $x
    $node($i) set Y_ $y
    $node($i) set Z_ 0.0
    set pos($i) [list $x $y]
}
set vmax $P(max_speed_mps)
if {$vmax > 0} {
    for {set i 0} {$i < $P(nodes)} {incr i} {
        lassign $pos($i) x y
        set t $P(pause_time)
        while {$t < $P(duration)} {
            lassign [rand_point] dx dy
            if {$vmax > 1.0} { set v [$rng uniform 1.0 $vmax] } else { set v $vmax }
            $ns at $t "$node($i) setdest $dx $dy $v"
            set step [expr {hypot($dx - $x, $dy - $y) / $v + $P(pause_time)}]
            # a zero-length leg with no pause would never advance t
            if {$step < 1e-3} { set step 1e-3 }
            set t [expr {$t + $step}]
            set x $dx
            set y $dy
        }
    }
}

# A random ordered pair of distinct nodes.
proc rand_pair {} {
    global rng P
    set a [$rng integer $P(nodes)]
    set b [$rng integer [expr {$P(nodes) - 1}]]
    if {$b >= $a} { incr b }
    return [list $a $b]
}
proc rand_start {} {
    global rng P
    if {$P(start_max) <= 0} { return 0.0 }
    return [$rng uniform 0 $P(start_max)]
}

set rate_mbps [expr {$P(cbr_packet_size) * 8.0 * $P(cbr_rate_pps) / 1e6}]
for {set k 1} {$k <= $ncbr} {incr k} {
    lassign [rand_pair] s d
    set cbr [tk_cbr_flow $node($s) $node($d) $k $rate_mbps $P(cbr_packet_size)]
    tk_source $cbr [rand_start]
}
for {set k 1} {$k <= $P(tcp_flows)} {incr k} {
    lassign [rand_pair] s d
    set ftp [tk_tcp_flow $node($s) $node($d) Reno [expr {$ncbr + $k}] $P(tcp_packet_size) $P(tcp_window)]
    tk_source $ftp [rand_start]
}

# at the end: reset the nodes (their queued packets become "D ... END" lines),
# then flush and close the traces
for {set i 0} {$i < $P(nodes)} {incr i} { $ns at [tk_stop_time] "$node($i) reset" }
tk_schedule_finish
$ns run
