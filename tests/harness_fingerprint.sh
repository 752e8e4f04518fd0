#!/bin/sh
# The harness's fingerprint records what it knows and nothing else.
#
#   harness_fingerprint.sh forced HARNESS [EMULATOR]
#       every environment forcing is recorded in `forced` (validated value,
#       null when unset or empty); a forced run's fingerprint differs.
#   harness_fingerprint.sh empty-root HARNESS [EMULATOR]
#       alone in an empty root (no /proc, /sys), as in a minimal initramfs,
#       every fact it cannot read is null, never a guess ("not a VM", 1 CPU,
#       no flags, perf_event_paranoid 99); with /proc and /sys the same
#       fields are known, so the check can fail.  Exit 77 (skipped) when the
#       root cannot be arranged: not root, a cross binary, not static.
#   harness_fingerprint.sh emulated HARNESS EMULATOR
#       under user-mode emulation /proc/cpuinfo is the host's, another
#       architecture's: the cpu facts from it are null, not the host's.
#
# The writer's output is deterministic (no spaces, keys in a fixed order),
# so exact substrings are checked: no JSON parser is needed where this runs.
set -eu
mode=$1
harness=$2
emulator=${3:-}
n=0
failed=0

check() {	# check DESCRIPTION COMMAND...
	what=$1
	shift
	n=$((n + 1))
	if "$@"; then
		echo "ok $n - $what"
	else
		echo "not ok $n - $what"
		failed=$((failed + 1))
	fi
}

has() { printf '%s' "$1" | grep -qF -- "$2"; }

# The fingerprint record with exactly the forcings given as arguments.
fingerprint() {
	env -u KCROSS_SYSCALL -u KCROSS_VDSO -u KCROSS_TIMER -u KCROSS_TEST_FAIL \
		-u KCROSS_TEST_DELAY "$@" \
		$emulator "$harness" sysinfo --json 2>&1 || true
}

# The `forced` object of a fingerprint.
forced_of() { printf '%s' "$1" | grep -o '"forced":{[^}]*}'; }

if [ "$mode" = forced ]; then
	none='"forced":{"KCROSS_SYSCALL":null,"KCROSS_VDSO":null,"KCROSS_TIMER":null,"KCROSS_TEST_FAIL":null}'
	plain=$(fingerprint)
	check "unset: every forcing null" has "$plain" "$none"
	empty=$(fingerprint KCROSS_SYSCALL= KCROSS_VDSO= KCROSS_TIMER= KCROSS_TEST_FAIL=)
	check "empty counts as unset: every forcing null" has "$empty" "$none"
	check "empty KCROSS_SYSCALL: syscall.forced null, not \"\"" \
		has "$empty" '"forced":null},"forced":{'
	vdso=$(fingerprint KCROSS_VDSO=0)
	check "KCROSS_VDSO=0 recorded" has "$vdso" '"KCROSS_VDSO":"0"'
	check "KCROSS_VDSO=0: the fingerprint differs from a normal run's" \
		test "$(forced_of "$vdso")" != "$(forced_of "$plain")"
	libc=$(fingerprint KCROSS_SYSCALL=libc)
	check "KCROSS_SYSCALL=libc recorded, in syscall.forced too" \
		has "$libc" '"forced":"libc"},"forced":{"KCROSS_SYSCALL":"libc",'
	timer=$(fingerprint KCROSS_TIMER=clock_gettime)
	check "KCROSS_TIMER=clock_gettime recorded and obeyed" \
		sh -c 'printf "%s" "$1" | grep -qF "\"KCROSS_TIMER\":\"clock_gettime\"" &&
		       printf "%s" "$1" | grep -qF "\"timer\":{\"source\":\"clock_gettime\""' - "$timer"
	fail=$(fingerprint 'KCROSS_TEST_FAIL=syscall/getppid*')
	check "KCROSS_TEST_FAIL recorded as given" has "$fail" '"KCROSS_TEST_FAIL":"syscall/getppid*"'
	# Added after schema 2's first version: absent when unset (the `none`
	# object above is exactly a fingerprint's from before), recorded when set.
	delay=$(fingerprint 'KCROSS_TEST_DELAY=syscall/getppid-inl*:6.5')
	check "KCROSS_TEST_DELAY recorded as given" \
		has "$delay" '"KCROSS_TEST_FAIL":null,"KCROSS_TEST_DELAY":"syscall/getppid-inl*:6.5"}'
	empty_delay=$(fingerprint KCROSS_TEST_DELAY=)
	check "empty KCROSS_TEST_DELAY: absent, as unset" has "$empty_delay" "$none"
	bad_delay=$(fingerprint KCROSS_TEST_DELAY=getppid-inline:0)
	check "invalid KCROSS_TEST_DELAY refused, never recorded" \
		sh -c '! printf "%s" "$1" | grep -qF "KCROSS_TEST_DELAY\":" &&
		       printf "%s" "$1" | grep -qF "NS wants a number"' - "$bad_delay"
	# An invalid value is refused at start (main.c) or, at the least, never
	# recorded or obeyed.
	bogus=$(fingerprint KCROSS_TIMER=bogus KCROSS_VDSO=off)
	check "invalid KCROSS_TIMER / KCROSS_VDSO never recorded" \
		sh -c '! printf "%s" "$1" | grep -qE "\"KCROSS_(TIMER|VDSO)\":\"(bogus|off)\""' - "$bogus"
elif [ "$mode" = empty-root ]; then
	if [ "$(id -u)" != 0 ]; then echo "1..0 # SKIP chroot needs root"; exit 77; fi
	if [ -n "$emulator" ]; then
		echo "1..0 # SKIP chroot of a cross binary needs binfmt_misc"; exit 77
	fi
	if readelf -l "$harness" 2>/dev/null | grep -q "Requesting program interpreter"; then
		echo "1..0 # SKIP $harness is not statically linked (sanitizer build?)"; exit 77
	fi
	if [ ! -r /proc/cpuinfo ] || [ ! -r /sys/devices/system/cpu/online ]; then
		echo "1..0 # SKIP this machine itself lacks /proc or /sys (nothing to compare)"; exit 77
	fi
	root=$(mktemp -d)
	trap 'rm -rf "$root"' EXIT
	cp "$harness" "$root/kcross-harness"
	out=$(chroot "$root" /kcross-harness sysinfo --json)
	here=$(fingerprint)
	# Each fact: its null form in the empty root; on this machine it is known.
	for fact in '"flags":null' '"online":null' '"possible":null' '"vendor":null' \
		    '"model":null' '"cmdline":null' '"vulnerabilities":null' '"paranoid":null' \
		    '"smt":{"control":null,"active":null}' \
		    '"isolation":{"isolcpus":null,"nohz_full":null}'; do
		check "empty root: $fact" has "$out" "$fact"
	done
	check "with /proc and /sys: online, paranoid, smt, vulnerabilities known" \
		sh -c 'for f in "\"online\":null" "\"paranoid\":null" "\"vulnerabilities\":null" \
			"\"smt\":{\"control\":null,\"active\":null}"; do
			printf "%s" "$1" | grep -qF "$f" && exit 1; done; exit 0' - "$here"
	case $out in
	*'"arch":"x86_64"'*)
		check "empty root: hypervisor_flag null (not \"not a VM\")" \
			has "$out" '"hypervisor_flag":null'
		check "empty root: hwcap null (glibc hides the kernel's)" has "$out" '"hwcap":null'
		check "with /proc: hypervisor_flag and hwcap known" \
			sh -c '! printf "%s" "$1" | grep -qE "\"(hypervisor_flag|hwcap)\":null"' - "$here"
		;;
	esac
	check "empty root: power null (unreadable cpufreq)" \
		has "$out" '"power":{"governor":null,"driver":null}'
elif [ "$mode" = emulated ]; then
	if [ -z "$emulator" ]; then echo "1..0 # SKIP native build: no emulator"; exit 77; fi
	out=$(fingerprint)
	case $out in
	*'"arch":"x86_64"'*) sig=vendor_id ;;
	*'"arch":"aarch64"'*) sig='CPU implementer' ;;
	*'"arch":"ppc64le"'*) sig=timebase ;;
	*) echo "1..0 # SKIP unknown arch in: $(printf '%s' "$out" | head -c 200)"; exit 77 ;;
	esac
	if [ ! -r /proc/cpuinfo ] || grep -q "^$sig" /proc/cpuinfo; then
		echo "1..0 # SKIP the host's /proc/cpuinfo is unreadable or of the same architecture"
		exit 77
	fi
	# The host's cpuinfo (another architecture) says nothing of this CPU.
	for fact in '"vendor":null' '"model":null' '"flags":null' '"microcode":null'; do
		check "under $emulator, the host's /proc/cpuinfo is not used: $fact" has "$out" "$fact"
	done
else
	echo "usage: $0 forced|empty-root|emulated HARNESS [EMULATOR]" >&2
	exit 2
fi
echo "1..$n"
[ "$failed" = 0 ]
