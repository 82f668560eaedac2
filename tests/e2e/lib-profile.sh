# lib-profile.sh: read profiles back in e2e scripts, with `go tool pprof`
# (an independent pprof reader). -symbolize=none makes pprof show only what
# the profile itself holds: it must not fill in names from the binaries.
#
#   pp_raw FILE                    the whole profile as text
#   pp_top_self FILE               the function with the most self time
#   pp_calls FILE CALLER CALLEE    some stack has CALLER directly above CALLEE
#   pp_label_values FILE FN KEY    distinct values of label KEY on stacks with FN
#   pp_mapping_of FILE FN          file of the mapping of FN's first location
#   pp_inlined_into FILE FN OUTER  some location has FN inlined into OUTER

pp_raw() {
	go tool pprof -raw -symbolize=none "$1" 2>/dev/null
}

pp_traces() {
	go tool pprof -traces -symbolize=none "$1" 2>/dev/null
}

pp_top_self() {
	go tool pprof -top -symbolize=none -nodecount=40 "$1" 2>/dev/null |
	awk '/flat%/ { t = 1; next }
	     t && NF >= 6 { s = $6; for (i = 7; i <= NF; i++) s = s " " $i; print s; exit }'
}

# In -traces output each stack is a block: label lines ("pid:  12"), then
# frames leaf first, the first frame after the value; inlined frames end
# in " (inline)".
pp_calls() {
	pp_traces "$1" | awk -v caller="$2" -v callee="$3" '
		/^-+\+/ { prev = ""; next }
		$1 ~ /:$/ { next }
		{
			f = $NF == "(inline)" ? $(NF - 1) : $NF
			if (prev == callee && f == caller) found = 1
			prev = f
		}
		END { exit !found }'
}

pp_label_values() {
	pp_traces "$1" | awk -v fn="$2" -v key="$3:" '
		function flush() { if (has && v != "") vals[v] = 1; has = 0; v = "" }
		/^-+\+/ { flush(); next }
		$1 == key { v = $2; next }
		$NF == fn || ($NF == "(inline)" && $(NF - 1) == fn) { has = 1 }
		END { flush(); for (x in vals) print x }'
}

pp_mapping_of() {
	pp_raw "$1" | awk -v fn="$2" '
		/^Locations/ { sec = "L"; next }
		/^Mappings/ { sec = "M"; next }
		sec == "L" && $1 ~ /^[0-9]+:$/ && want == "" {
			for (i = 3; i <= NF; i++) if ($i == fn)
				for (j = 3; j <= NF; j++) if ($j ~ /^M=/) want = substr($j, 3)
		}
		sec == "M" && $1 ~ /^[0-9]+:$/ { file[substr($1, 1, length($1) - 1)] = $3 }
		END { if (want != "") print file[want] }'
}

# A location line names FN and the next line (its caller in the same
# location, an inline chain) names OUTER.
pp_inlined_into() {
	pp_raw "$1" | awk -v fn="$2" -v outer="$3" '
		/^Locations/ { sec = "L"; next }
		/^Mappings/ { sec = "" }
		sec == "L" {
			if (want && $1 == outer) found = 1
			want = 0
			for (i = 1; i <= NF; i++) if ($i == fn) want = 1
		}
		END { exit !found }'
}
