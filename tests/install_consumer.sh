#!/bin/sh
# A C user's view: install to a fresh prefix, build a program and the API
# guide's examples (docs/api.md) with nothing but the installed headers and
# `pkg-config --cflags --libs kcross`, run them (under the emulator when
# cross-compiled: the programs are then linked statically).
set -eu
build=$1 cc=$2 emulator=${3:-} examples=${4:-}
run() { if [ -n "$emulator" ]; then $emulator "$@"; else "$@"; fi; }
static=""
[ -z "$emulator" ] || static=-static
command -v pkg-config >/dev/null || { echo "1..0 # SKIP no pkg-config (apt-get install pkg-config)"; exit 77; }
prefix=$(mktemp -d)
trap 'rm -rf "$prefix"' EXIT
cmake --install "$build" --prefix "$prefix" >/dev/null
pc=$(find "$prefix" -name kcross.pc | head -1)
[ -n "$pc" ] || { echo "not ok 1 - kcross.pc not installed"; exit 1; }
echo "ok 1 - kcross.pc installed"
cat > "$prefix/user.c" <<'C'
#define _POSIX_C_SOURCE 200809L
#include <kcross/kcross.h>
#include <stdio.h>
#include <sys/syscall.h>
#include <unistd.h>
int main(void)
{
	struct timespec ts;
	struct kc_percpu_counter c;

	if (kc_sys0(SYS_getppid) != getppid() || kc_clock_gettime(CLOCK_MONOTONIC, &ts))
		return 1;
	if (kc_percpu_counter_init(&c))
		return 1;
	for (int i = 0; i < 1000; i++)
		kc_percpu_counter_add(&c, 2);
	if (kc_percpu_counter_sum(&c) != 2000 || kc_cpu() < 0)
		return 1;
	kc_percpu_counter_destroy(&c);
	printf("kcross %s, mechanism %s, clock_gettime via %s, per-CPU mode %s\n", kc_version(),
	       kc_sysmech_name(kc_syscall_mechanism()), kc_clock_gettime_impl(), kc_percpu_mode());
	return 0;
}
C
# shellcheck disable=SC2046
flags=$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs --static kcross)
# shellcheck disable=SC2086
"$cc" -std=c11 -Wall -Werror $static -o "$prefix/user" "$prefix/user.c" $flags
echo "ok 2 - a C11 program builds with pkg-config alone"
run "$prefix/user" || { echo "not ok 3 - the program failed"; exit 1; }
echo "ok 3 - it runs: syscalls, vDSO clock, per-CPU counter"
n=3
if [ -z "$examples" ]; then echo "1..$n"; exit 0; fi

# expect NAME STATUS PATTERN [VAR=value]: run example NAME (with the
# environment variable set), want exit STATUS and PATTERN in its output.
expect() {
	name=$1 want=$2 pattern=$3
	shift 3
	n=$((n + 1))
	status=0
	out=$(env "$@" sh -c '"$@" 2>&1' run $emulator "$prefix/$name") || status=$?
	if [ "$status" -eq "$want" ] && printf '%s\n' "$out" | grep -q -- "$pattern"; then
		echo "ok $n - examples/$name.c ${*:-}: exit $status, says \"$pattern\""
	else
		echo "not ok $n - examples/$name.c ${*:-}: exit $status (want $want), output:"
		printf '%s\n' "$out" | sed 's/^/# /'
		failed=1
	fi
}
failed=0
for ex in syscall cpu percpu settings ctx; do
	n=$((n + 1))
	# shellcheck disable=SC2086
	if "$cc" -std=c11 -Wall -Wextra -Werror -pthread $static -o "$prefix/$ex" \
		"$examples/$ex.c" $flags; then
		echo "ok $n - examples/$ex.c builds against the installed headers"
	else
		echo "not ok $n - examples/$ex.c does not build against the installed headers"
		exit 1
	fi
done
expect syscall 0 "syscall example: ok"
expect syscall 0 "mechanism in use: libc (KCROSS_SYSCALL=libc)" KCROSS_SYSCALL=libc
expect syscall 2 "KCROSS_SYSCALL=bogus: not one of" KCROSS_SYSCALL=bogus
expect cpu 0 "cpu example: ok"
expect percpu 0 "percpu example: ok"
expect ctx 0 "ctx example: ok"
expect settings 0 "EXAMPLE_COLOUR=blue" EXAMPLE_COLOUR=blue
expect settings 2 "EXAMPLE_COLOUR=mauve: not one of red, green, blue" EXAMPLE_COLOUR=mauve
echo "1..$n"
exit $failed
