# cbr-variants.tcl -- papers 002 (Lees, "An Analysis of TCP Variants under a
# Constant Bit Rate Flow") and 004 (IJSER 2016), experiment 1: TCP performance
# under congestion.
#
#   N1 --\                /-- N4        TCP  N1 -> N4  (fid 1)
#         N2 ---------- N3              CBR  N2 -> N3  (fid 2)
#   N5 --/                \-- N6        all links 10Mb/10ms DropTail
#
# TCP window_ 20 and maxcwnd_ 0 as in paper 004.  The TCP flow starts at a
# random time in [0, start_jitter) and runs until duration; the CBR flow is on
# from cbr_start (+ its own random offset in [0, start_jitter)) to
# min(cbr_stop, duration): cbr_start=0 is paper 004's first condition (TCP and
# CBR together), cbr_start=3 its second (CBR after TCP has stabilised).
# cbr_profile=decreasing is its third condition: the CBR rate starts at
# cbr_rate_mbps and falls by 0.1 Mb/s every cbr_step_s seconds down to
# cbr_rate_end_mbps.  cbr_random=1 sets the CBR's random_ (intervals drawn
# around the nominal one from the seeded RNG, same mean rate).  The run ends
# drain_s after duration.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args cbr-variants

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_flow 2 CBR
tk_open_traces

tk_build_n6 [expr {$P(bandwidth_mbps) * 1e6}] [expr {$P(delay_ms) / 1000.0}] $P(queue_limit) \
    {DropTail DropTail DropTail DropTail DropTail}
tk_monitor_queue $N(2) $N(3)

set ftp [tk_tcp_flow $N(1) $N(4) $P(variant) 1 $P(packet_size) $P(window) $P(maxcwnd)]
set cbr [tk_cbr_flow $N(2) $N(3) 2 $P(cbr_rate_mbps) $P(cbr_packet_size) $P(cbr_random)]
tk_source $ftp [tk_jitter $P(start_jitter)]
set t0 [expr {$P(cbr_start) + [tk_jitter $P(start_jitter)]}]
tk_source $cbr $t0 $P(cbr_stop)
if {$P(cbr_profile) eq "decreasing"} {
    if {$P(cbr_step_s) <= 0} { tk_die "cbr_step_s must be > 0, got $P(cbr_step_s)" }
    # rates in units of 0.1 Mb/s, so that the steps do not drift
    set r [expr {round($P(cbr_rate_mbps) * 10)}]
    set rend [expr {round($P(cbr_rate_end_mbps) * 10)}]
    set t $t0
    while {$r > $rend && $rend > 0} {
        incr r -1
        set t [expr {$t + $P(cbr_step_s)}]
        if {$t >= $P(duration)} break
        $ns at $t "$cbr set rate_ [expr {$r * 1e5}]"
    }
}
tk_schedule_finish
$ns run
