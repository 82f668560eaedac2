#!/bin/sh
# hotloop doctor -- CMD: what the target program offers (frame pointers,
# debug info, symbols, PIE, libraries) and how a missing or unrunnable
# command is reported (127 and 126, like a shell).
. "$(dirname "$0")/test-lib.sh"

if test_have_prereq PERF; then can=0 failed=1; else can=3 failed=3; fi

test_expect_code $can 'cpuhog: frame pointers, debug info, symbols, PIE' '
	hotloop doctor -- "$WORKLOADS/cpuhog" >out; rc=$?; cat out
	expect_grep "^ok *target .*ELF x86-64 PIE executable\|^ok *target .*ELF aarch64 PIE executable" out &&
	expect_grep "^ok *frame_pointers" out &&
	expect_grep "^ok *debug_info *DWARF debug info present" out &&
	expect_grep "^ok *symbols *symbol table" out &&
	expect_grep "^ok *build_id *build id [0-9a-f]\{16,\}" out &&
	expect_grep "^ok *libraries *needs .*libc.so.6" out || exit 99
	exit $rc
'

test_expect_success 'nofp: a low frame pointer share warns with the dwarf remedy' '
	hotloop doctor -- "$WORKLOADS/nofp" >out; cat out
	expect_grep "^warn *frame_pointers *0 of [1-9][0-9]* functions.*built without frame pointers: record unwinds it with CFI on a copy of the stack (--call-graph auto); rebuild with -fno-omit-frame-pointer for stacks that need no copy$" out
'

test_expect_success 'a stripped copy: stripped and no debug info, with remedies' '
	cp "$WORKLOADS/cpuhog" ./hog && strip ./hog &&
	hotloop doctor -- ./hog >out; cat out
	expect_grep "^warn *symbols *stripped (no .symtab).*: rebuild without stripping" out &&
	expect_grep "^warn *debug_info *no debug info.*: rebuild with -g" out &&
	expect_grep "^ok *build_id" out &&
	expect_grep "^warn *frame_pointers *cannot tell" out
'

test_expect_success 'debug info in a separate file found by .gnu_debuglink' '
	command -v objcopy >/dev/null || { echo "no objcopy: skipped"; return 0; }
	cp "$WORKLOADS/cpuhog" ./hog &&
	objcopy --only-keep-debug ./hog ./hog.debug &&
	strip --strip-debug --strip-unneeded ./hog &&
	objcopy --add-gnu-debuglink=./hog.debug ./hog &&
	hotloop doctor -- ./hog >out; cat out
	expect_grep "^ok *debug_info *debug info in .*/hog.debug" out &&
	expect_grep "^ok *symbols *stripped, but its debug file has a symbol table" out &&
	expect_grep "^ok *frame_pointers" out
'

test_expect_success 'a debug file whose CRC does not match is not used' '
	command -v objcopy >/dev/null || { echo "no objcopy: skipped"; return 0; }
	cp "$WORKLOADS/cpuhog" ./hog &&
	objcopy --only-keep-debug ./hog ./hog.debug &&
	strip --strip-debug ./hog &&
	objcopy --add-gnu-debuglink=./hog.debug ./hog &&
	printf x >>hog.debug &&
	hotloop doctor -- ./hog >out; cat out
	expect_grep "^warn *debug_info *no debug info" out
'

test_expect_success 'usesshlib: its own shared library is listed' '
	hotloop doctor -- "$WORKLOADS/usesshlib" >out
	expect_grep "^ok *libraries *needs libhotshlib.so, libc.so.6" out
'

test_expect_success 'a command name is found on PATH like a shell does' '
	PATH="$WORKLOADS:$PATH" hotloop doctor -- cpuhog 2.5 >out; cat out
	expect_grep "^ok *target *.$WORKLOADS/cpuhog.: ELF" out
'

test_expect_code $can 'a shell script: not ELF, a warning naming its interpreter' '
	printf "#!/bin/sh\necho hi\n" >script && chmod +x script &&
	hotloop doctor -- ./script >out; rc=$?; cat out
	expect_grep "^warn *target *.\./script. is not an ELF file but a script for /bin/sh" out || exit 99
	exit $rc
'

test_expect_code $failed 'an executable that is neither ELF nor a script fails' '
	printf "just some text\n" >data && chmod +x data &&
	hotloop doctor -- ./data >out; rc=$?; cat out
	expect_grep "^fail *target *.\./data. is not an ELF file: hotloop profiles native ELF programs" out || exit 99
	exit $rc
'

test_expect_code $failed 'a truncated ELF file fails with a clear message' '
	head -c 20 "$WORKLOADS/cpuhog" >trunc && chmod +x trunc &&
	hotloop doctor -- ./trunc >out; rc=$?; cat out
	expect_grep "^fail *target *cannot read ELF file .\./trunc." out || exit 99
	exit $rc
'

test_expect_code 127 'a missing command exits 127: command not found' '
	hotloop doctor -- no-such-command-hotloop 2>err >out; rc=$?
	test ! -s out && expect_grep "^hotloop: no-such-command-hotloop: command not found$" err || exit 99
	exit $rc
'

test_expect_code 127 'a missing path exits 127: no such file' '
	hotloop doctor -- ./nothing-here 2>err; rc=$?
	expect_grep "^hotloop: \./nothing-here: No such file or directory$" err || exit 99
	exit $rc
'

test_expect_code 126 'a file that is not executable exits 126' '
	cp "$WORKLOADS/cpuhog" ./noexec && chmod 644 ./noexec &&
	hotloop doctor -- ./noexec 2>err; rc=$?
	expect_grep "^hotloop: \./noexec: Permission denied$" err || exit 99
	exit $rc
'

test_expect_code 126 'a directory exits 126' '
	mkdir dir && hotloop doctor -- ./dir 2>err; rc=$?
	expect_grep "^hotloop: \./dir: Is a directory$" err || exit 99
	exit $rc
'

test_expect_code 127 'under --json a missing command is an error document' '
	hotloop doctor --json -- no-such-command-hotloop >out 2>/dev/null; rc=$?
	expect_grep "\"error\": \"no-such-command-hotloop: command not found\"" out || exit 99
	exit $rc
'

test_done
