# common.tcl -- shared helpers for the tracekit scenario scripts (ns-2.35).
#
# Sourced by every tracekit/experiments/tcl/<id>.tcl.  Provides:
#   tk_parse_args SCENARIO        the command line's parameters into the array P
#   tk_flow FID NAME              declare a flow (goes into the metadata header)
#   tk_open_traces ?KINDS?        open packets.tr/cwnd.tr/queue.tr (or the KINDS
#                                 given), write the "# tracekit-meta {...}"
#                                 header, $ns trace-all
#   tk_tcp_flow / tk_cbr_flow     build sources, sinks and their applications
#   tk_monitor_queue A B          per-event "q -t" lines of link A->B into queue.tr
#   tk_jitter                     a random start offset drawn from the seeded RNG
#   tk_source APP START ?STOP?    start APP at START, stop it at min(STOP, duration)
#   tk_schedule_finish            end the run at duration + drain_s
#   tk_finish                     flush and close everything, exit 0
#
# A scenario's parameters are declared once, in its declaration file (<id>.toml
# beside the script: names, types, defaults, ranges, checks).  tracekit resolves
# them and passes every one on the ns command line, after out_dir=DIR seed=N, as
# NAME:TYPE=VALUE (TYPE int|float|choice|str, in declaration order), so a script
# holds no defaults: it uses P(NAME) for the parameters it needs and takes exactly
# those (the ones referenced here and in the script, comment lines aside).  Every
# script uses duration (how long the sources run) and drain_s (how long the
# simulation goes on after they stop, so that every packet still in the network
# is delivered or dropped before the traces end: the run stops at
# stop_s = duration + drain_s, written into the meta header).  The declaration
# is the source of truth for validation; the checks here only protect direct
# command-line use.

# this file's path: the parameters its procedures use are every scenario's
set tk_common [file normalize [info script]]

proc tk_die {msg} {
    puts stderr "tracekit scenario error: $msg"
    exit 1
}

# The parameters SCRIPT and common.tcl use: the NAME of every $P(NAME) outside
# comment lines, in order of first use, less out_dir and seed.
proc tk_used_params {script} {
    global tk_common
    set names {}
    foreach f [list $script $tk_common] {
        set fh [open $f]
        set text [read $fh]
        close $fh
        foreach line [split $text \n] {
            if {[regexp {^\s*#} $line]} continue
            foreach {-> n} [regexp -all -inline {\$P\(([A-Za-z_][A-Za-z0-9_]*)\)} $line] {
                if {$n ni {out_dir seed} && $n ni $names} { lappend names $n }
            }
        }
    }
    return $names
}

proc tk_parse_args {scenario} {
    global argv P tk
    set tk(scenario) $scenario
    set tk(names) {}
    set tk(flows) {}
    set used [tk_used_params [info script]]
    set tk(type,out_dir) str
    set tk(type,seed) int
    foreach w $argv {
        if {![regexp {^([A-Za-z_][A-Za-z0-9_]*)(?::([a-z]+))?=(.*)$} $w -> k type v]} {
            tk_die "argument '$w' is not of the form NAME:TYPE=VALUE (or out_dir=DIR, seed=N)"
        }
        if {$k in {out_dir seed}} {
            if {$type ne ""} { tk_die "argument '$w': $k takes no type ($k=VALUE)" }
        } elseif {$k ni $used} {
            tk_die "unknown parameter '$k' for scenario $scenario: the script does not use it (it uses [join $used {, }])"
        } elseif {$type ni {int float choice str}} {
            tk_die "argument '$w': the type of $k must be int, float, choice or str ($k:TYPE=VALUE)"
        } else {
            set tk(type,$k) $type
        }
        if {[info exists P($k)]} { tk_die "parameter $k is given twice" }
        switch -- $tk(type,$k) {
            int {
                if {![regexp {^-?[0-9]+$} $v]} { tk_die "parameter $k must be an integer, got '$v'" }
                set v [scan $v %d]
            }
            float {
                if {![string is double -strict $v]} { tk_die "parameter $k must be a number, got '$v'" }
                set v [expr {double($v)}]
            }
        }
        set P($k) $v
        lappend tk(names) $k
    }
    set missing {}
    foreach n [concat {out_dir seed} $used] {
        if {![info exists P($n)]} { lappend missing $n }
    }
    if {$missing ne ""} {
        tk_die "scenario $scenario needs [join $missing {, }] on the command line (tracekit passes every parameter of $scenario.toml, with its default; by hand: out_dir=DIR seed=N NAME:TYPE=VALUE ...)"
    }
    if {$P(seed) < 1} { tk_die "seed must be >= 1 (ns-2 seed 0 means a time-of-day seed), got $P(seed)" }
    if {$P(duration) <= 0} { tk_die "duration must be > 0, got $P(duration)" }
    if {$P(drain_s) < 0} { tk_die "drain_s must be >= 0, got $P(drain_s)" }
    if {![file isdirectory $P(out_dir)]} {
        if {[catch {file mkdir $P(out_dir)} err]} { tk_die "cannot create out_dir $P(out_dir): $err" }
    }
}

proc tk_flow {fid name} {
    global tk
    lappend tk(flows) $fid $name
}

proc tk_json_str {s} {
    return "\"[string map [list \\ \\\\ \" \\\" \n \\n \t \\t] $s]\""
}

proc tk_meta {kind} {
    global tk P
    set ps {}
    foreach n $tk(names) {
        if {$n eq "out_dir" || $n eq "seed"} continue
        switch -- $tk(type,$n) {
            int - float { lappend ps "[tk_json_str $n]: $P($n)" }
            default     { lappend ps "[tk_json_str $n]: [tk_json_str $P($n)]" }
        }
    }
    set fl {}
    foreach {fid name} $tk(flows) { lappend fl "[tk_json_str $fid]: [tk_json_str $name]" }
    return "# tracekit-meta \{\"scenario\": [tk_json_str $tk(scenario)], \"seed\": $P(seed), \"stop_s\": [tk_stop_time], \"params\": \{[join $ps {, }]\}, \"flows\": \{[join $fl {, }]\}, \"file\": [tk_json_str $kind]\}"
}

# The simulation's stop time: the sources run until duration, then drain_s more
# seconds let the packets still in the network arrive or be dropped.
proc tk_stop_time {} {
    global P
    return [expr {double($P(duration)) + $P(drain_s)}]
}

# Must be called after the flows are declared and BEFORE any link or node is
# created (links created before trace-all are silently untraced).  kinds: the
# trace files to write (a scenario without queue monitors leaves out queue).
proc tk_open_traces {{kinds {packets cwnd queue}}} {
    global ns tk P defaultRNG
    $defaultRNG seed $P(seed)
    set tk(jitter_rv) [new RandomVariable/Uniform]
    set tk(open) {}
    foreach {var kind} {pf packets cf cwnd qf queue} {
        if {[lsearch -exact $kinds $kind] < 0} continue
        set f [open [file join $P(out_dir) $kind.tr] w]
        puts $f [tk_meta $kind]
        set tk($var) $f
        lappend tk(open) $var
    }
    $ns trace-all $tk(pf)
}

# Random start offset in [0, max) seconds from the seeded default RNG.
proc tk_jitter {max} {
    global tk
    if {$max <= 0} { return 0.0 }
    $tk(jitter_rv) set min_ 0.0
    $tk(jitter_rv) set max_ $max
    return [$tk(jitter_rv) value]
}

# ns-2.35's Linux TCP (Agent/TCP/Linux + "$tcp select_ca ALG"): the congestion-control
# modules of the Debian build (all fifteen ran).  A variant linux-ALG runs ALG.  ns-2
# accepts an unknown ALG with an error on stdout and silently runs its default, so
# tk_tcp_class refuses any name not in this list.
set tk_linux_algs {reno naive_reno highspeed bic htcp scalable cubic westwood vegas hybla illinois yeah veno compound lp}

proc tk_linux_alg {variant} {
    global tk_linux_algs
    if {![string match linux-* $variant]} { return "" }
    set alg [string range $variant 6 end]
    if {[lsearch -exact $tk_linux_algs $alg] < 0} {
        tk_die "unknown Linux congestion control '$alg' (known: [join $tk_linux_algs {, }])"
    }
    return $alg
}

proc tk_tcp_class {variant} {
    if {[tk_linux_alg $variant] ne ""} { return Agent/TCP/Linux }
    switch -- $variant {
        Tahoe   { return Agent/TCP }
        Reno    { return Agent/TCP/Reno }
        Newreno { return Agent/TCP/Newreno }
        Vegas   { return Agent/TCP/Vegas }
        Sack1   { return Agent/TCP/Sack1 }
        default { tk_die "unknown TCP variant '$variant'" }
    }
}

# Sack1 and the Linux agents (SACK senders) get a SACK sink (ns manual: "a receiver
# that supports SACK is recommended" for Agent/TCP/Linux).
proc tk_sink_class {variant} {
    if {$variant eq "Sack1" || [tk_linux_alg $variant] ne ""} { return Agent/TCPSink/Sack1 }
    return Agent/TCPSink
}

# One-way TCP agent + sink + FTP.  opts: packet_size window maxcwnd (0 = ns default).
# variant: Tahoe Reno Newreno Vegas Sack1, or linux-ALG (Agent/TCP/Linux running ALG).
# Every agent's cwnd_ is traced into cwnd.tr (Agent/TCP/Linux too: same line format,
# integer values for all fifteen algorithms; only an agent left without select_ca, or
# given a name ns-2 lacks, runs a default that traces fractional cwnd_ on every ACK).  Returns the FTP application.
proc tk_tcp_flow {src dst variant fid {packet_size 0} {window 0} {maxcwnd 0}} {
    global ns tk
    set tcp [new [tk_tcp_class $variant]]
    # select_ca prints "cmd select_ca ALG" on stdout (the runner keeps it out of the
    # user's way); always called for a Linux agent: without it the agent does not run reno
    set alg [tk_linux_alg $variant]
    if {$alg ne ""} { $tcp select_ca $alg }
    $tcp set fid_ $fid
    if {$packet_size > 0} { $tcp set packetSize_ $packet_size }
    if {$window > 0} { $tcp set window_ $window }
    if {$maxcwnd > 0} { $tcp set maxcwnd_ $maxcwnd }
    set sink [new [tk_sink_class $variant]]
    $ns attach-agent $src $tcp
    $ns attach-agent $dst $sink
    $ns connect $tcp $sink
    set ftp [new Application/FTP]
    $ftp attach-agent $tcp
    $tcp attach $tk(cf)
    $tcp trace cwnd_
    set tk(tcp,$fid) $tcp
    return $ftp
}

# UDP + CBR.  rate in Mb/s, packet size in bytes (the UDP agent's packetSize_
# is raised to match so the CBR packets are never fragmented).
# random=1 sets ns-2's CBR random_: every inter-packet interval is drawn from
# Uniform[0.5, 1.5) x the nominal interval (same mean rate) from the seeded RNG.
proc tk_cbr_flow {src dst fid rate_mbps packet_size {random 0}} {
    global ns
    # a zero rate makes ns-2 die with a floating point exception
    if {$rate_mbps <= 0} { tk_die "CBR rate must be > 0 Mb/s, got $rate_mbps" }
    set udp [new Agent/UDP]
    $udp set fid_ $fid
    if {$packet_size > [$udp set packetSize_]} { $udp set packetSize_ $packet_size }
    set null [new Agent/Null]
    $ns attach-agent $src $udp
    $ns attach-agent $dst $null
    $ns connect $udp $null
    set cbr [new Application/Traffic/CBR]
    $cbr set packetSize_ $packet_size
    $cbr set rate_ [expr {$rate_mbps * 1e6}]
    $cbr set random_ $random
    $cbr attach-agent $udp
    return $cbr
}

# Packet-mode RED with explicit thresholds (ns-2.35 defaults are byte mode with
# automatic thresholds; we set every knob the papers talk about explicitly).
proc tk_red_defaults {thresh maxthresh {q_weight 0.002} {linterm 10}} {
    Queue/RED set queue_in_bytes_ false
    Queue/RED set thresh_ $thresh
    Queue/RED set maxthresh_ $maxthresh
    Queue/RED set q_weight_ $q_weight
    Queue/RED set linterm_ $linterm
    Queue/RED set mean_pktsize_ 1000
}

# Per-event queue trace ("q -t T -s A -d B -l bytes -p pkts") of link A->B.
proc tk_monitor_queue {a b} {
    global ns tk
    $ns monitor-queue $a $b $tk(qf)
    [$ns link $a $b] start-tracing
}

# The six-node topology of papers 002/004 (N1..N6 = ns nodes 0..5):
#
#   N1 --\                /-- N4
#         N2 ---------- N3
#   N5 --/                \-- N6
#
# Every link full duplex, BW/DELAY (10Mb/10ms in the papers).  queues is a list
# of five queue types for the links in this fixed order:
#   N1-N2, N5-N2, N2-N3, N3-N4, N3-N6
# Fills the global array N(1..6) with the nodes.
proc tk_build_n6 {bw delay queue_limit queues} {
    global ns N
    for {set i 1} {$i <= 6} {incr i} { set N($i) [$ns node] }
    foreach {a b} {1 2 5 2 2 3 3 4 3 6} q $queues {
        $ns duplex-link $N($a) $N($b) $bw $delay $q
        $ns queue-limit $N($a) $N($b) $queue_limit
        $ns queue-limit $N($b) $N($a) $queue_limit
    }
}

proc tk_finish {} {
    global ns tk
    $ns flush-trace
    foreach v $tk(open) { flush $tk($v); close $tk($v) }
    exit 0
}

# Start APP at START and stop it at min(STOP, duration) (STOP < 0: at duration).
# A source whose start is not before that stop time is never started.  ns-2.35's
# "$ftp stop" is "$agent advance 0; $agent close": no new data, but the agent
# goes on retransmitting outstanding segments on its timers (measured: up to 1.9 s
# after the stop with 10 % loss), so the agent is also muted (tk_mute): nothing
# leaves a source after its stop, and the drain only has to cover the packets
# already in the network.
proc tk_source {app start {stop -1}} {
    global ns P
    set end $P(duration)
    if {$stop >= 0 && $stop < $end} { set end $stop }
    if {$start >= $end} { return 0 }
    $ns at $start "$app start"
    $ns at $end "$app stop"
    if {[$app info class] eq "Application/FTP"} { $ns at $end "tk_mute [$app agent]" }
    return 1
}

# Point AGENT's output at a private Agent/Null: whatever it sends from now on
# (retransmissions) is freed before it reaches its node, so it is never traced.
proc tk_mute {agent} {
    global tk
    if {![info exists tk(null)]} { set tk(null) [new Agent/Null] }
    $agent target $tk(null)
}

proc tk_schedule_finish {} {
    global ns
    $ns at [tk_stop_time] "tk_finish"
}
