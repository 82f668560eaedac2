# lib-heap.sh: read heap profiles back in e2e scripts, with the npm
# pprof-format package (heap-samples.js), independent of hotloop's reader.
#
#   heap_samples FILE > OUT          one JSON line per sample (the first: the profile's header)
#   heap_sum OUT TYPE FN             TYPE summed over the samples whose stack holds FN
#   heap_leaf_sum OUT TYPE FN        ... whose leaf is FN

NPM=$ROOT/build/npm/node_modules
command -v node >/dev/null || skip_all="node is not installed (make deps installs nodejs)"
[ -f "$NPM/pprof-format/package.json" ] || skip_all="build/npm lacks pprof-format (make deps installs it)"

heap_samples() {
	NODE_PATH=$NPM node "$TEST_DIR/heap-samples.js" "$1"
}

heap_sum() {
	tail -n +2 "$1" | jq -s --arg t "$2" --arg f "$3" \
		'[.[] | select(.stack | index($f)) | .values[$t]] | add // 0'
}

heap_leaf_sum() {
	tail -n +2 "$1" | jq -s --arg t "$2" --arg f "$3" \
		'[.[] | select(.stack[0] == $f) | .values[$t]] | add // 0'
}
