# newreno-vs-reno.tcl -- paper 003 (Chowdhury & Alam), second part: TCP NewReno
# over TCP Reno on a single or on two bottlenecks, DropTail or RED.
#
#   S_i --10Mb/1ms--\                                   /--10Mb/1ms-- D_i
#   U   --10Mb/7ms--- R1 ==bottleneck== R2 [==bn== R3] ---10Mb/1ms-- DU
#
# config (paper values):
#   droptail : one 0.7Mb bottleneck, 8 ms (round-trip propagation 20 ms), DropTail,
#              20-packet buffer, 500-byte packets, window 8 KB = 16 packets
#   red      : one 2Mb/1ms bottleneck, RED min 5 / max 15 packets, 50-packet
#              buffer, 500-byte packets, window 2 KB = 4 packets, 25 flows per variant
#   multi    : two 0.3Mb/20ms bottlenecks in series, 10-packet buffers, DropTail,
#              552-byte packets, window 8 KB = 14 packets
# Flows: flows_per_variant NewReno flows (fids 1..k), then as many Reno flows,
# then one UDP/CBR flow (0.01 Mb/s, 1000-byte packets, 7 ms access link; last
# fid).  FTP flows start at uniformly random times in [0, start_max) (paper: 0..7 s),
# drawn from the seeded RNG.  flows_per_variant=0 means the paper's count for the
# config: 25 for red, 1 for droptail and multi (the paper says "two long-duration
# flows: one NewReno flow and one Reno flow" but also "three TCP sources").
# window=0 means the paper's window in bytes / packet size (16, 4, 14 packets);
# window=N sets window_ N (ns-2 tutorials with this setup write "window_ 8000",
# which ns counts in packets).
# extra_flows more TCP sources (variant extra_variant, fids after the Reno
# flows) start at random times in [0, start_max) like the others and send for
# extra_duration_s seconds: the paper has "two long-duration flows" but "three TCP
# sources", so the third is a shorter one (its variant and length are our choice).
# All sources stop at duration; the run ends drain_s later.
# Access links (10Mb, 1ms) are our choice: the paper only says delays vary 1-20 ms.
# All flows cross every bottleneck.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args newreno-vs-reno
switch -- $P(config) {
    droptail { set nb 1; set bbw 0.7Mb; set bdl 8ms;  set q DropTail; set lim 20; set psz 500; set win 16; set k 1 }
    red      { set nb 1; set bbw 2Mb;   set bdl 1ms;  set q RED;      set lim 50; set psz 500; set win 4;  set k 25 }
    multi    { set nb 2; set bbw 0.3Mb; set bdl 20ms; set q DropTail; set lim 10; set psz 552; set win 14; set k 1 }
}
if {$P(flows_per_variant) > 0} { set k $P(flows_per_variant) }
if {$P(window) > 0} { set win $P(window) }
if {$P(flows_per_variant) < 0} { tk_die "flows_per_variant must be >= 0" }
if {$P(extra_flows) < 0} { tk_die "extra_flows must be >= 0" }

set ns [new Simulator]
set flows {}
for {set i 1} {$i <= $k} {incr i} { lappend flows $i Newreno }
for {set i 1} {$i <= $k} {incr i} { lappend flows [expr {$k + $i}] Reno }
set nextra $P(extra_flows)
for {set i 1} {$i <= $nextra} {incr i} { lappend flows [expr {2 * $k + $i}] $P(extra_variant) }
set udpfid [expr {2 * $k + $nextra + 1}]
foreach {fid v} $flows { tk_flow $fid $v }
tk_flow $udpfid CBR
tk_open_traces

tk_red_defaults 5 15 0.002 10
set r(0) [$ns node]
for {set i 1} {$i <= $nb} {incr i} {
    set r($i) [$ns node]
    $ns duplex-link $r([expr {$i - 1}]) $r($i) $bbw $bdl $q
    $ns queue-limit $r([expr {$i - 1}]) $r($i) $lim
    $ns queue-limit $r($i) $r([expr {$i - 1}]) $lim
    tk_monitor_queue $r([expr {$i - 1}]) $r($i)
}
set abw [expr {$P(access_mbps) * 1e6}]
foreach {fid v} $flows {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r(0) $abw 1ms DropTail
    $ns duplex-link $r($nb) $d $abw 1ms DropTail
    set ftp [tk_tcp_flow $s $d $v $fid $psz $win]
    set t0 [tk_jitter $P(start_max)]
    if {$fid > 2 * $k} {
        tk_source $ftp $t0 [expr {$t0 + $P(extra_duration_s)}]
    } else {
        tk_source $ftp $t0
    }
}
set us [$ns node]
set ud [$ns node]
$ns duplex-link $us $r(0) $abw 7ms DropTail
$ns duplex-link $r($nb) $ud $abw 1ms DropTail
set cbr [tk_cbr_flow $us $ud $udpfid $P(udp_rate_mbps) $P(udp_packet_size)]
tk_source $cbr 0.0
tk_schedule_finish
$ns run
