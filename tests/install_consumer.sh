#!/bin/sh
# A C user's view: install to a fresh prefix, build a program with nothing
# but `pkg-config --cflags --libs kcross`, run it.
set -eu
build=$1 cc=$2 emulator=${3:-}
if [ -n "$emulator" ]; then echo "1..0 # SKIP install test runs natively only"; exit 77; fi
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
PKG_CONFIG_PATH=$(dirname "$pc") "$cc" -std=c11 -Wall -Werror -o "$prefix/user" "$prefix/user.c" \
	$(PKG_CONFIG_PATH=$(dirname "$pc") pkg-config --cflags --libs --static kcross)
echo "ok 2 - a C11 program builds with pkg-config alone"
"$prefix/user" || { echo "not ok 3 - the program failed"; exit 1; }
echo "ok 3 - it runs: syscalls, vDSO clock, per-CPU counter"
echo "1..3"
