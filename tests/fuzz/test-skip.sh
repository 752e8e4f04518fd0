#!/bin/sh
# The fuzzing tier skips, naming the package, when clang cannot link a
# fuzzer: run-fuzz.sh against a clang whose runtime directory is empty (as
# on Debian with clang but not libclang-rt-N-dev) must exit 77 with a SKIP
# line naming libclang-rt-N-dev, not fail.
#
#   tests/fuzz/test-skip.sh      (exit 0 pass, 1 fail, 77 no clang here)
set -u
root=$(cd "$(dirname "$0")/../.." && pwd)
cc=${CLANG:-clang}
command -v "$cc" >/dev/null 2>&1 || { echo "test-skip.sh: SKIP: $cc not found"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/empty-resource-dir"
cat >"$tmp/clang-without-runtime" <<EOS
#!/bin/sh
exec "$(command -v "$cc")" -resource-dir "$tmp/empty-resource-dir" "\$@"
EOS
chmod +x "$tmp/clang-without-runtime"
out=$(CLANG="$tmp/clang-without-runtime" "$root/tests/fuzz/run-fuzz.sh" 1 "$tmp/build" 2>&1)
rc=$?
if [ $rc -eq 77 ] && printf '%s\n' "$out" | grep -q '^run-fuzz.sh: SKIP: .*apt-get install libclang-rt-[0-9]*-dev'; then
	echo "test-skip.sh: ok: a clang without its fuzzer runtime is a skip naming the package"
	exit 0
fi
echo "test-skip.sh: FAIL: expected exit 77 and a SKIP line naming libclang-rt-N-dev; got exit $rc:"
printf '%s\n' "$out" | tail -5
exit 1
