# reno-vs-vegas.tcl -- paper 003 (Chowdhury & Alam, "Performance Evaluation of TCP
# Vegas over TCP Reno and TCP New Reno over TCP Reno"), first part.
#
#   S_i --2Mb/10ms--\                               /--2Mb/10ms-- D_i
#                    R1 (0) ==0.3Mb/200ms== R2 (1)
#   S_j --2Mb/10ms--/       10-packet buffer        \--2Mb/10ms-- D_j
#
# n_reno Reno flows (fids 1..n_reno) and n_vegas Vegas flows (next fids), FTP,
# 552-byte packets (ns packetSize_, i.e. payload: Reno segments are 592 bytes on
# the wire because of the 40-byte header, Vegas segments 552).  Receiver window:
# the paper says "8000 bytes", but its numbers match the widespread ns-2 tutorial
# scripts ("$tcp set window_ 8000; $tcp set packetSize_ 552") -- ns counts window_
# in PACKETS, so there the window is effectively unlimited.  A literal 8000-byte window
# (window=14) lets two flows fill only the pipe (BDP ~28 packets), never the
# 10-packet buffer, so no loss ever occurs -- contradicting the paper's Reno
# sawtooth (Fig. 4a).  Default window=8000 (packets); set window=14 for the
# literal reading.  Bottleneck DropTail or RED.
# The paper says "minthresh 5 and maxthresh 0.6 packets", which is impossible
# (max < min); we use 5 and 10 (= the buffer) in packet mode.  Vegas joins
# vegas_start seconds after Reno ("when connection 2 joins the network ...").
source [file join [file dirname [info script]] common.tcl]

tk_parse_args reno-vs-vegas
if {$P(n_reno) < 0 || $P(n_vegas) < 0 || $P(n_reno) + $P(n_vegas) < 1} {
    tk_die "n_reno and n_vegas must be >= 0 with at least one flow"
}

set ns [new Simulator]
set flows {}
set fid 0
for {set i 0} {$i < $P(n_reno)} {incr i} { incr fid; lappend flows $fid Reno }
for {set i 0} {$i < $P(n_vegas)} {incr i} { incr fid; lappend flows $fid Vegas }
foreach {fid v} $flows { tk_flow $fid $v }
tk_open_traces

tk_red_defaults $P(red_thresh) $P(red_maxthresh) 0.002 10
set r1 [$ns node]
set r2 [$ns node]
$ns duplex-link $r1 $r2 [expr {$P(bottleneck_mbps) * 1e6}] [expr {$P(bottleneck_delay_ms) / 1000.0}] $P(queue)
$ns queue-limit $r1 $r2 $P(queue_limit)
$ns queue-limit $r2 $r1 $P(queue_limit)
tk_monitor_queue $r1 $r2

set abw [expr {$P(access_mbps) * 1e6}]
set adl [expr {$P(access_delay_ms) / 1000.0}]
foreach {fid v} $flows {
    set s [$ns node]
    set d [$ns node]
    $ns duplex-link $s $r1 $abw $adl DropTail
    $ns duplex-link $r2 $d $abw $adl DropTail
    set ftp [tk_tcp_flow $s $d $v $fid $P(packet_size) $P(window)]
    if {$v eq "Vegas"} {
        $tk(tcp,$fid) set v_alpha_ $P(vegas_alpha)
        $tk(tcp,$fid) set v_beta_ $P(vegas_beta)
        set t0 $P(vegas_start)
    } else {
        set t0 0.0
    }
    tk_source $ftp [expr {$t0 + [tk_jitter $P(start_jitter)]}]
}
tk_schedule_finish
$ns run
