# homogeneous-dumbbell.tcl -- paper 000 (Nishitha, "A Comparative Analysis of TCP
# Tahoe, Reno, New-Reno, SACK and Vegas in Homogeneous Networks").
#
#   S1 (0) --\                          /-- D1 (4)
#             R1 (2) ==== 2Mb/50ms ==== R2 (3)
#   S2 (1) --/                          \-- D2 (5)
#
# Sender LAN links S*-R1 and receiver LAN links R2-D* are Ethernet (10Mb/10ms)
# or Fast Ethernet (100Mb/1ms) (paper Tables 3.1/3.2).  Two FTP/TCP flows of
# the same variant: S1->D1 (fid 1) and S2->D2 (fid 2), each starting at a random
# time in [0, start_jitter) and stopping at duration; the run ends drain_s later.
# window_ 100 (our choice; the paper gives none): two such windows exceed the
# path's ~35-packet bandwidth-delay product plus the 50-packet buffer, so the
# flows keep filling the buffer, losing packets and recovering.
# Usage: ns homogeneous-dumbbell.tcl out_dir=DIR seed=N duration:float=S variant:choice=Reno ...
# (every parameter of homogeneous-dumbbell.toml: tracekit passes them all, see common.tcl)
source [file join [file dirname [info script]] common.tcl]

tk_parse_args homogeneous-dumbbell

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_flow 2 $P(variant)
tk_open_traces

proc lan {kind} {
    if {$kind eq "ethernet"} { return {10Mb 10ms} }
    return {100Mb 1ms}
}
foreach i {0 1 2 3 4 5} { set n($i) [$ns node] }
lassign [lan $P(sender_lan)] sbw sdl
lassign [lan $P(receiver_lan)] rbw rdl
$ns duplex-link $n(0) $n(2) $sbw $sdl DropTail
$ns duplex-link $n(1) $n(2) $sbw $sdl DropTail
$ns duplex-link $n(2) $n(3) [expr {$P(bottleneck_mbps) * 1e6}] [expr {$P(bottleneck_delay_ms) / 1000.0}] DropTail
$ns duplex-link $n(3) $n(4) $rbw $rdl DropTail
$ns duplex-link $n(3) $n(5) $rbw $rdl DropTail
$ns queue-limit $n(2) $n(3) $P(queue_limit)
$ns queue-limit $n(3) $n(2) $P(queue_limit)
tk_monitor_queue $n(2) $n(3)

foreach {fid s d} {1 0 4 2 1 5} {
    set ftp [tk_tcp_flow $n($s) $n($d) $P(variant) $fid $P(packet_size) $P(window)]
    tk_source $ftp [tk_jitter $P(start_jitter)]
}
tk_schedule_finish
$ns run
