# varying-parameters.tcl -- paper 001 (Dave, Dihulia, Gupta, "Performance Analysis
# by Varying Parameters of TCP Variants Using NS-2 Simulator").
#
#   sender (0) --- 1Mb/10ms --- router (1) --- 1Mb/10ms --- receiver (2)
#
# DropTail everywhere, one FTP/TCP flow 0->2 (fid 1).  Parameters varied in the
# paper: error rate (uniform per-packet loss on the router->receiver link,
# inserted with "$ns lossmodel", i.e. at the head of the link: a lost packet
# shows a bare "d" on link 1->2 and no "+"), packet size and window size.
# The paper also mentions "a direct link between node 1 and node 3"; such a
# link would carry all the traffic (one hop), contradicting "through node 2",
# so it is not built.  Buffer 10 packets (our choice; the paper gives none): with
# ns's default 50 a 20-packet window never overflows it and no packet is lost.
# The flow starts at a random time in [0, start_jitter), stops at duration; the
# run ends drain_s later.
source [file join [file dirname [info script]] common.tcl]

tk_parse_args varying-parameters
if {$P(error_rate) < 0 || $P(error_rate) >= 1} { tk_die "error_rate must be in [0, 1)" }

set ns [new Simulator]
tk_flow 1 $P(variant)
tk_open_traces

foreach i {0 1 2} { set n($i) [$ns node] }
set bw [expr {$P(bandwidth_mbps) * 1e6}]
set dl [expr {$P(delay_ms) / 1000.0}]
$ns duplex-link $n(0) $n(1) $bw $dl DropTail
$ns duplex-link $n(1) $n(2) $bw $dl DropTail
foreach {a b} {0 1 1 0 1 2 2 1} { $ns queue-limit $n($a) $n($b) $P(queue_limit) }
# Both hops have the same capacity, so the queue builds at the sender's own
# interface (0->1); 1->2 is where the loss model sits.  Trace both.
tk_monitor_queue $n(0) $n(1)
tk_monitor_queue $n(1) $n(2)

if {$P(error_rate) > 0} {
    set em [new ErrorModel]
    $em unit pkt
    $em set rate_ $P(error_rate)
    $em ranvar [new RandomVariable/Uniform]
    $em drop-target [new Agent/Null]
    $ns lossmodel $em $n(1) $n(2)
}

set ftp [tk_tcp_flow $n(0) $n(2) $P(variant) 1 $P(packet_size) $P(window)]
tk_source $ftp [tk_jitter $P(start_jitter)]
tk_schedule_finish
$ns run
