#!/bin/sh
# Fuzz the vDSO parser for SECONDS seconds.
#
#   tests/fuzz/run-fuzz.sh SECONDS [BUILD_DIR]
#
# Configures a clang build of tests/fuzz in BUILD_DIR (default build/fuzz
# at the top of the tree, which git ignores), writes the seed corpus (this
# machine's vDSO plus synthetic images) to BUILD_DIR/seeds, and runs
# fuzz_vdso with BUILD_DIR/corpus as its working corpus.  Exit status: 0 when
# the run ends without a finding, non-zero on a crash, leak or timeout (the
# reproducer is left in BUILD_DIR/artifacts), 77 (skipped, with the reason
# and the package to install) when clang or its libFuzzer/ASan/UBSan runtime
# is missing: Debian's clang without recommends lacks libclang-rt-N-dev.
# CLANG names another clang binary.
set -eu

secs=${1:?usage: run-fuzz.sh SECONDS [BUILD_DIR]}
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${2:-$root/build/fuzz}
cc=${CLANG:-clang}

if ! command -v "$cc" >/dev/null 2>&1; then
	echo "run-fuzz.sh: SKIP: $cc not found (apt-get install clang)"
	exit 77
fi

# Can this clang link a fuzzer with the sanitizers the target uses?  The
# runtimes are a separate package on Debian (libclang-rt-N-dev, a
# recommendation of clang-N, so absent after --no-install-recommends).
probe=$(mktemp -d)
printf '%s\n' '#include <stddef.h>' '#include <stdint.h>' \
	'int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n) { (void)d; (void)n; return 0; }' \
	>"$probe/probe.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$probe/probe.c" -o "$probe/probe" \
	>"$probe/log" 2>&1; then
	major=$("$cc" -dumpversion 2>/dev/null | cut -d. -f1)
	missing=$(grep -o 'libclang_rt[^ ]*\.a' "$probe/log" | head -1)
	echo "run-fuzz.sh: SKIP: $cc cannot link -fsanitize=fuzzer,address,undefined" \
		"(${missing:+missing $missing; }apt-get install libclang-rt-${major:-N}-dev)"
	sed 's/^/run-fuzz.sh:   /' "$probe/log" | head -3
	rm -rf "$probe"
	exit 77
fi
rm -rf "$probe"

cmake -S "$root/tests/fuzz" -B "$build" -DCMAKE_C_COMPILER="$cc" \
	-DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" >/dev/null

mkdir -p "$build/corpus" "$build/seeds" "$build/artifacts"
"$build/fuzz_vdso_seeds" "$build/seeds"

# libFuzzer's default error exit code is 77, which would read as "skipped".
exec "$build/fuzz_vdso" -max_total_time="$secs" -error_exitcode=1 \
	-timeout=10 -timeout_exitcode=1 -print_final_stats=1 \
	-artifact_prefix="$build/artifacts/" "$build/corpus" "$build/seeds"
