# cbr-variants.tcl -- papers 002 (Lees, "An Analysis of TCP Variants under a
# Constant Bit Rate Flow") and 004 (IJSER 2016), experiment 1: TCP performance
# under congestion.
#
#   N1 --\                /-- N4        TCP  N1 -> N4  (fid 1)
#         N2 ---------- N3              CBR  N2 -> N3  (fid 2)
#   N5 --/                \-- N6        all links 10Mb/10ms DropTail
#
# TCP window_ 20 and maxcwnd_ 0 as in paper 004.  cbr_start=together starts the
# CBR with the TCP flow; cbr_start=after_tcp starts it at cbr_late_start seconds,
# after the TCP flow has stabilised.  Both run until the end of the simulation.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args cbr-variants {
    {duration float 10.0}
    {variant choice Reno {Tahoe Reno Newreno Vegas}}
    {cbr_rate_mbps float 8.0}
    {cbr_start choice together {together after_tcp}}
    {cbr_late_start float 3.0}
    {cbr_packet_size int 1000}
    {packet_size int 1000}
    {window int 20}
    {maxcwnd int 0}
    {bandwidth_mbps float 10.0}
    {delay_ms float 10.0}
    {queue_limit int 50}
    {start_jitter float 0.1}
}

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_flow 2 CBR
tk_open_traces

tk_build_n6 [expr {$P(bandwidth_mbps) * 1e6}] [expr {$P(delay_ms) / 1000.0}] $P(queue_limit) \
    {DropTail DropTail DropTail DropTail DropTail}
tk_monitor_queue $N(2) $N(3)

set ftp [tk_tcp_flow $N(1) $N(4) $P(variant) 1 $P(packet_size) $P(window) $P(maxcwnd)]
set cbr [tk_cbr_flow $N(2) $N(3) 2 $P(cbr_rate_mbps) $P(cbr_packet_size)]
$ns at [tk_jitter $P(start_jitter)] "$ftp start"
if {$P(cbr_start) eq "together"} {
    set t [tk_jitter $P(start_jitter)]
} else {
    set t [expr {$P(cbr_late_start) + [tk_jitter $P(start_jitter)]}]
}
$ns at $t "$cbr start"
tk_schedule_finish
$ns run
