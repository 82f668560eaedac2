# case.jq: a tag case from `hotloop asm --json --profile ...` output:
#   hotloop asm BIN --fn NAME --profile P --json |
#     jq --arg about TEXT --arg from CMDS [--arg focus FN] -f case.jq >NAME.json
# then fill in "expect" (and "self"/"total" for the brief's tags) by hand,
# from what is true of the code: README.md says what each key means.
(.instructions | map(.file) | map(select(. != null)) | unique) as $files
| {
	about: $about,
	from: $from,
	function: .function,
	arch: .arch,
	focus: ($ARGS.named.focus // null),
	self: null,
	total: null,
	files: $files,
	instructions: [.instructions[] | [
		.address, .size, .mnemonic, (.classes | join(" ")), .target, .samples,
		.simd_width, .isa, (.reads | join(" ")), (.writes | join(" ")), .inlined,
		(if .file == null then null else (.file as $f | $files | index($f)) end), .line
	]],
	expect: { asm_tags: [.tags[].name], verdict: .verdict, loop_free: .loop_free, brief_tags: null }
}
