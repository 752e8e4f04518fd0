#!/bin/sh
# The static harness alone in an empty root (no /proc, /sys, /dev, no libc
# files), as in a minimal initramfs: it must run, say what it could not read
# (null fields, skipped benchmarks with reasons), and still measure.
# Exit 77 (skipped) when this cannot be arranged: not root, or not static.
set -eu
harness=$1
emulator=${2:-}
if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP chroot needs root"; exit 77; fi
if [ -n "$emulator" ]; then echo "1..0 # SKIP chroot of a cross binary needs binfmt_misc"; exit 77; fi
if readelf -l "$harness" 2>/dev/null | grep -q "Requesting program interpreter"; then
	echo "1..0 # SKIP $harness is not statically linked (sanitizer build?)"; exit 77
fi
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
cp "$harness" "$root/kcross-harness"
out=$(chroot "$root" /kcross-harness run --quick --samples 5 --json)
echo "$out" | head -1 | grep -q '"type":"fingerprint"' || { echo "not ok 1 - no fingerprint"; exit 1; }
echo "ok 1 - fingerprint first"
echo "$out" | grep -q '"type":"end"' || { echo "not ok 2 - no end record"; exit 1; }
echo "ok 2 - run completed"
echo "$out" | head -1 | grep -q '"cmdline":null' || { echo "not ok 3 - unreadable /proc/cmdline not null"; exit 1; }
echo "ok 3 - unreadable facts are null"
echo "$out" | grep '"name":"read-devzero"' | grep -q '"status":"skipped"' \
	|| { echo "not ok 4 - read-devzero not skipped without /dev"; exit 1; }
echo "ok 4 - /dev benchmarks skipped with a reason"
echo "$out" | grep '"name":"getppid-inline"' | grep -q '"status":"ok"' \
	|| { echo "not ok 5 - getppid-inline did not run"; exit 1; }
echo "ok 5 - syscall benchmarks still measured"
if echo "$out" | grep -q '"status":"failed"'; then echo "not ok 6 - a benchmark failed"; exit 1; fi
echo "ok 6 - nothing failed"
echo "1..6"
