# queue-influence.tcl -- papers 004 and 002, experiment 3: influence of the
# queueing discipline (DropTail vs RED) on TCP Reno and SACK.
#
#   N1 --\                /-- N4        TCP N1 -> N4  (fid 1, Reno or Sack1)
#         N2 ---------- N3              CBR N5 -> N6  (fid 2)
#   N5 --/                \-- N6        all links 10Mb/10ms
#
# Defaults follow paper 004: 30 s, TCP from the start to the end, CBR 1 Mb/s
# from 11 s to 25 s, TCP window_ 120, maxcwnd_ 150.  queue=RED makes the first
# red_links links RED, in the order N1-N2, N5-N2, N2-N3, N3-N4, N3-N6 (paper 002
# varies this count 0..5 with a 9 Mb/s CBR starting at 3 s); the rest stay
# DropTail.  RED runs in packet mode with explicit thresholds (red_thresh,
# red_maxthresh packets, q_weight_ 0.002, max_p 0.1, gentle): the papers give none.
# RED's early drops draw from ns-2's default RNG, which tk_open_traces seeds with
# the seed, so replications differ in which packets RED drops.  The CBR uses
# ns-2's random_ intervals when cbr_random=1.  The TCP source stops at duration
# (paper 004: "TCP flow at 30 seconds"); the run ends drain_s later.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args queue-influence
if {$P(red_links) < 0 || $P(red_links) > 5} { tk_die "red_links must be in 0..5" }

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_flow 2 CBR
tk_open_traces

set nred [expr {$P(queue) eq "RED" ? $P(red_links) : 0}]
set queues {}
for {set i 0} {$i < 5} {incr i} { lappend queues [expr {$i < $nred ? "RED" : "DropTail"}] }
tk_red_defaults $P(red_thresh) $P(red_maxthresh)
tk_build_n6 [expr {$P(bandwidth_mbps) * 1e6}] [expr {$P(delay_ms) / 1000.0}] $P(queue_limit) $queues
# N1->N2: TCP alone (its own interface queue); N2->N3: TCP + CBR share it.
tk_monitor_queue $N(1) $N(2)
tk_monitor_queue $N(2) $N(3)

set ftp [tk_tcp_flow $N(1) $N(4) $P(variant) 1 $P(packet_size) $P(window) $P(maxcwnd)]
set cbr [tk_cbr_flow $N(5) $N(6) 2 $P(cbr_rate_mbps) $P(cbr_packet_size) $P(cbr_random)]
tk_source $ftp [tk_jitter $P(start_jitter)]
tk_source $cbr [expr {$P(cbr_start) + [tk_jitter $P(start_jitter)]}] $P(cbr_stop)
tk_schedule_finish
$ns run
