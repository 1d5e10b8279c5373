# print the tk_parse_args spec of the scenario script in argv, one parameter a line, and exit
set script [lindex $argv 0]
set argv {}
rename source tk_orig_source
proc source {f} {
    uplevel 1 [list tk_orig_source $f]
    proc tk_parse_args {scenario spec} {
        foreach p $spec { puts [join [list [lindex $p 0] [lindex $p 1] [lindex $p 2] [join [lindex $p 3] ,]] "\t"] }
        exit 0
    }
}
tk_orig_source $script
