#!/bin/sh
# hotloop asm on names it cannot settle and files it cannot read: each a
# clear error and exit 1 (2 for usage), never a crash or a sanitizer report
# (exit 99 under the sanitized build).
. "$(dirname "$0")/test-lib.sh"

# Run a command that must fail with exit 1; its stderr is left in err.
fails() {
	"$@" >out 2>err
	rc=$?
	cat err
	test $rc -eq 1 || { echo "exit $rc, wanted 1"; return 1; }
}

test_expect_success 'a part of several names: the candidates, closest first' '
	fails hotloop asm "$WORKLOADS/asmloops" --fn sum_ &&
	expect_grep "'"'"'sum_'"'"' matches 2 functions" err &&
	expect_grep "sum_cols" err && expect_grep "sum_rows" err &&
	expect_grep "give the whole name" err
'

test_expect_success 'an unknown name: the closest names' '
	fails hotloop asm "$WORKLOADS/asmdot-O2" --fn dto &&
	expect_grep "no function '"'"'dto'"'"' in" err &&
	expect_grep "the closest names: '"'"'dot'"'"'" err
'

test_expect_success 'a stripped copy: says so, and what to do' '
	cp "$WORKLOADS/asmdot-O2" stripped && strip stripped &&
	fails hotloop asm stripped --fn dot &&
	expect_grep "stripped" err && expect_grep "unstripped build" err
'

test_expect_success 'a stripped shared library: only exported functions, and it says why' '
	cp "$WORKLOADS/libhotshlib.so" lib.so && strip lib.so &&
	hotloop asm lib.so --fn shlib_hot >out &&
	expect_grep "^function  shlib_hot" out &&
	fails hotloop asm lib.so --fn nothing_like_it &&
	expect_grep "only its exported functions are visible: it is stripped" err
'

test_expect_success 'not an ELF file' '
	echo "#!/bin/sh" >script &&
	fails hotloop asm script --fn main &&
	expect_grep "'"'"'script'"'"' is not an ELF file" err
'

test_expect_success 'a missing file' '
	fails hotloop asm ./nothing-here --fn main &&
	expect_grep "cannot open '"'"'./nothing-here'"'"'" err
'

test_expect_success 'truncated ELF files: an error, no crash' '
	size=$(wc -c <"$WORKLOADS/asmloops") &&
	for n in 4 16 63 64 200 1000 4096 $((size / 2)) $((size - 100)); do
		head -c $n "$WORKLOADS/asmloops" >cut &&
		fails hotloop asm cut --fn mod_sum &&
		expect_grep "'"'"'cut'"'"' is a truncated or corrupt ELF file" err || exit 1
	done
'

test_expect_success 'corrupted ELF headers: an error or a result, no crash' '
	for off in 16 18 32 40 48 54 56 58 60 62; do
		cp "$WORKLOADS/asmloops" bad &&
		printf "\377\377\377\177" | dd of=bad bs=1 seek=$off conv=notrunc 2>/dev/null &&
		{ hotloop asm bad --fn mod_sum >out 2>err; rc=$?; } &&
		case $rc in
		0) expect_grep "^verdict" out ;;
		1) test -s err ;;
		*) echo "offset $off: exit $rc"; cat err; false ;;
		esac || exit 1
	done
'

# Write 8 bytes (little-endian hex) at field 'off' of mod_sum's .symtab entry.
poke_symbol() {
	cp "$WORKLOADS/asmloops" bad &&
	symtab=$(readelf -SW bad | awk "\$2 == \".symtab\" { print \$5 }") &&
	index=$(readelf -sW bad | awk "\$8 == \"mod_sum\" { sub(\":\", \"\", \$1); print \$1 }") &&
	test -n "$symtab" && test -n "$index" &&
	at=$((0x$symtab + index * 24 + $1)) &&
	printf "$2" | dd of=bad bs=1 seek=$at conv=notrunc 2>/dev/null
}

test_expect_success 'a symbol larger than its section: an error' '
	poke_symbol 16 "\000\000\000\000\000\000\001\000" &&
	fails hotloop asm bad --fn mod_sum &&
	expect_grep "claims\|is not in" err
'

test_expect_success 'a symbol outside every section: an error' '
	poke_symbol 8 "\000\000\000\000\000\000\100\000" &&
	fails hotloop asm bad --fn mod_sum &&
	expect_grep "the symbol table and the sections disagree" err
'

test_expect_success 'a symbol at the very top of the address space: an error' '
	poke_symbol 8 "\360\377\377\377\377\377\377\377" &&
	fails hotloop asm bad --fn mod_sum &&
	expect_grep "wraps around the address space\|the symbol table and the sections disagree" err
'

test_expect_success 'another machine' '
	cp "$DATA/doctor-elf/two-debuglinks.elf" other &&
	fails hotloop asm other --fn main &&
	expect_grep "hotloop asm reads x86-64 and AArch64" err
'

test_expect_success 'under --json an error is a JSON document' '
	{ hotloop asm --json "$WORKLOADS/asmdot-O2" --fn dto >out 2>/dev/null; test $? -eq 1; } &&
	jq -e ".error | test(\"no function\")" out >/dev/null
'

test_expect_code 2 'no --fn is a usage error' 'hotloop asm "$WORKLOADS/asmdot-O2"'
test_expect_code 2 'no binary is a usage error' 'hotloop asm --fn dot'
test_expect_code 2 '--sample-type without --profile is a usage error' '
	hotloop asm "$WORKLOADS/asmdot-O2" --fn dot --sample-type samples
'

test_done
