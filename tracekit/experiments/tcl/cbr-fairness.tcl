# cbr-fairness.tcl -- papers 002 and 004, experiment 2: fairness between two TCP
# variants sharing a link with a CBR flow.
#
#   N1 --\                /-- N4        TCP1 N1 -> N4  (fid 1, first variant of pair)
#         N2 ---------- N3              TCP2 N5 -> N6  (fid 2, second variant of pair)
#   N5 --/                \-- N6        CBR  N2 -> N3  (fid 3)
#
# All links 10Mb/10ms DropTail; TCP window_ 20, maxcwnd_ 0 (paper 004).  Each
# TCP source starts at its own random time in [0, start_jitter) and runs until
# duration; the CBR is on from cbr_start (+ a random offset in [0, start_jitter))
# to min(cbr_stop, duration), with ns-2's random_ intervals when cbr_random=1.
# The run ends drain_s after duration.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args cbr-fairness
# split at the dash that is not inside a variant name (linux-cubic-Reno: linux-cubic, Reno)
if {![regexp {^((?:linux-)?[^-]+)-((?:linux-)?[^-]+)$} $P(pair) -> v1 v2]} {
    tk_die "pair must be A-B, got '$P(pair)'"
}

set ns [new Simulator]
tk_flow 1 $v1
tk_flow 2 $v2
tk_flow 3 CBR
tk_open_traces

tk_build_n6 [expr {$P(bandwidth_mbps) * 1e6}] [expr {$P(delay_ms) / 1000.0}] $P(queue_limit) \
    {DropTail DropTail DropTail DropTail DropTail}
tk_monitor_queue $N(2) $N(3)

set ftp1 [tk_tcp_flow $N(1) $N(4) $v1 1 $P(packet_size) $P(window) $P(maxcwnd)]
set ftp2 [tk_tcp_flow $N(5) $N(6) $v2 2 $P(packet_size) $P(window) $P(maxcwnd)]
set cbr  [tk_cbr_flow $N(2) $N(3) 3 $P(cbr_rate_mbps) $P(cbr_packet_size) $P(cbr_random)]
tk_source $ftp1 [tk_jitter $P(start_jitter)]
tk_source $ftp2 [tk_jitter $P(start_jitter)]
tk_source $cbr [expr {$P(cbr_start) + [tk_jitter $P(start_jitter)]}] $P(cbr_stop)
tk_schedule_finish
$ns run
