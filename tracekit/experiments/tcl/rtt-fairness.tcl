# rtt-fairness.tcl -- RTT fairness: two flows of one TCP variant with different
# round-trip times sharing one bottleneck (no seed paper: the literature's RTT-fairness
# setup, e.g. Xu, Harfoush, Rhee 2004; Ha, Rhee, Xu 2008; see rtt-fairness.toml).
#
#   S1 (2) --access1--\                                  /--1ms-- D1 (4)
#                      R1 (0) ==bottleneck, DropTail== R2 (1)
#   S2 (3) --access2--/                                  \--1ms-- D2 (5)
#
# Flow 1 S1->D1 (fid 1) and flow 2 S2->D2 (fid 2) run the same variant; they differ
# only in the one-way delay of their sender's access link (access1_delay_ms,
# access2_delay_ms), so their round-trip propagation delays are
# 2 x (access_i + bottleneck_delay + 1 ms).  Access links access_mbps (faster than the
# bottleneck: the queue builds at R1->R2 only), receiver links access_mbps/1 ms.
# Each source starts at a random time in [0, start_jitter) and stops at duration;
# the run ends drain_s later.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args rtt-fairness

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_flow 2 $P(variant)
tk_open_traces

foreach i {0 1 2 3 4 5} { set n($i) [$ns node] }
set abw [expr {$P(access_mbps) * 1e6}]
$ns duplex-link $n(0) $n(1) [expr {$P(bottleneck_mbps) * 1e6}] [expr {$P(bottleneck_delay_ms) / 1000.0}] DropTail
$ns duplex-link $n(2) $n(0) $abw [expr {$P(access1_delay_ms) / 1000.0}] DropTail
$ns duplex-link $n(3) $n(0) $abw [expr {$P(access2_delay_ms) / 1000.0}] DropTail
$ns duplex-link $n(1) $n(4) $abw 0.001 DropTail
$ns duplex-link $n(1) $n(5) $abw 0.001 DropTail
$ns queue-limit $n(0) $n(1) $P(queue_limit)
$ns queue-limit $n(1) $n(0) $P(queue_limit)
tk_monitor_queue $n(0) $n(1)

foreach {fid s d} {1 2 4 2 3 5} {
    set ftp [tk_tcp_flow $n($s) $n($d) $P(variant) $fid $P(packet_size) $P(window)]
    tk_source $ftp [tk_jitter $P(start_jitter)]
}
tk_schedule_finish
$ns run
