#!/bin/sh
# hotloop asm on AArch64 code, built here with clang for aarch64-linux-gnu
# and linked with lld (no libc: -nostdlib, an entry point of our own): an
# executable, a shared library and an object file; sdiv/udiv are division,
# NEON is vectorized, FP on d registers is scalar.
. "$(dirname "$0")/test-lib.sh"

cat >a64.c <<\EOF_C
int mod_sum(const int *x, int n, int d)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] % d;
	return s;
}

unsigned umod_sum(const unsigned *x, int n, unsigned d)
{
	unsigned s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] / d;
	return s;
}

int vsum(const int *x, int n)
{
	int s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * 3;
	return s;
}

double fsum(const double *x, int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += x[i] * 1.5;
	return s;
}
EOF_C

cc_a64() { clang --target=aarch64-linux-gnu -O2 -g "$@" 2>err || { cat err; return 1; }; }

if ! command -v clang >/dev/null || ! command -v ld.lld >/dev/null ||
   ! cc_a64 -c a64.c -o a64.o >/dev/null 2>&1; then
	skip_all="no clang with an aarch64 target and lld"
fi

test_expect_success 'link an executable and a shared library with lld' '
	cc_a64 -nostdlib -fuse-ld=lld -Wl,-e,vsum -o a64 a64.o &&
	cc_a64 -nostdlib -fuse-ld=lld -shared -fPIC -o liba64.so a64.c &&
	hotloop asm a64 --fn vsum >out && expect_grep "^binary    a64 (aarch64)" out
'

verdict() { hotloop asm "$@" >out && sed -n "s/^verdict   //p" out; }

for bin in a64 liba64.so a64.o; do
	test_expect_success "$bin: sdiv in the loop is division" '
		test "$(verdict $bin --fn mod_sum)" = "integer division in the hot loop" &&
		expect_grep "^  division  *sdiv at 0x" out
	'

	test_expect_success "$bin: udiv too" '
		test "$(verdict $bin --fn umod_sum)" = "integer division in the hot loop" &&
		expect_grep "^  division  *udiv at 0x" out
	'

	test_expect_success "$bin: a NEON loop is vectorized" '
		test "$(verdict $bin --fn vsum)" = "vectorized (NEON, 128-bit)" &&
		hotloop asm --json $bin --fn vsum >v.json &&
		jq -e ".vector == {\"isa\": \"NEON\", \"width\": 128} and .mix.hot.simd128 > 0" v.json >/dev/null
	'

	test_expect_success "$bin: FP on d registers is scalar FP, not vectorized" '
		test "$(verdict $bin --fn fsum)" = "hot loop is scalar FP, not vectorized" &&
		expect_grep "^  scalar-fp  *[0-9]* scalar FP instructions (fmul, fadd" out
	'
done

test_expect_success 'source lines from the DWARF of an AArch64 file' '
	hotloop asm a64 --fn mod_sum >out &&
	expect_grep "/a64.c:[0-9]*$" out
'

test_done
