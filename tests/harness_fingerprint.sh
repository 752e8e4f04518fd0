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
#   harness_fingerprint.sh rseq HARNESS [EMULATOR]
#       KCROSS_RSEQ=off: the fingerprint says rseq is not registered, by no
#       one (glibc's registration turned off by its tunable: the harness
#       executes itself again with GLIBC_TUNABLES=glibc.pthread.rseq=0 added,
#       other tunables kept), and kc_cpu() still runs (its fallback); by
#       default rseq is registered (glibc's where glibc registers it).
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
	env -u KCROSS_SYSCALL -u KCROSS_VDSO -u KCROSS_RSEQ -u KCROSS_TIMER -u KCROSS_TEST_FAIL \
		-u KCROSS_TEST_DELAY -u GLIBC_TUNABLES "$@" \
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
	rseq=$(fingerprint KCROSS_RSEQ=on)
	check "KCROSS_RSEQ recorded as given, after the library's others" \
		has "$rseq" '"KCROSS_VDSO":null,"KCROSS_RSEQ":"on","KCROSS_TIMER":null'
	empty_rseq=$(fingerprint KCROSS_RSEQ=)
	check "empty KCROSS_RSEQ: absent, as unset" has "$empty_rseq" "$none"
	bad_rseq=$(fingerprint KCROSS_RSEQ=0)
	check "invalid KCROSS_RSEQ refused, never recorded" \
		sh -c '! printf "%s" "$1" | grep -qF "KCROSS_RSEQ\":" &&
		       printf "%s" "$1" | grep -qF "KCROSS_RSEQ=0: not one of auto, on, off"' \
		- "$bad_rseq"
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
elif [ "$mode" = rseq ]; then
	plain=$(fingerprint)
	off=$(fingerprint KCROSS_RSEQ=off)
	check "KCROSS_RSEQ=off recorded" has "$off" '"KCROSS_RSEQ":"off"'
	check "KCROSS_RSEQ=off: not registered, by no one, and says why" \
		has "$off" '"rseq":{"registered":false,"owner":null,"size":null,'
	check "KCROSS_RSEQ=off: the reason names the setting" \
		has "$off" '"unavailable_reason":"KCROSS_RSEQ=off: rseq left unregistered"'
	check "KCROSS_RSEQ=off: glibc's registration is off too (its __rseq_size not above 0)" \
		sh -c '! printf "%s" "$1" | grep -qE "\"libc_size\":[1-9]"' - "$off"
	check "KCROSS_RSEQ=off: per-CPU operations in their atomic fallback" \
		has "$off" '"percpu_mode":"atomic"'
	ran=$(env -u KCROSS_RSEQ -u GLIBC_TUNABLES KCROSS_RSEQ=off $emulator "$harness" run \
		--json --quick --bench 'cpuid/*' 2>&1 || true)
	kc_cpu=$(printf '%s' "$ran" | grep -F '"suite":"cpuid","name":"kc_cpu",' || true)
	check "KCROSS_RSEQ=off: kc_cpu() runs (its fallback)" has "$kc_cpu" '"status":"ok"'
	check "KCROSS_RSEQ=off: rseq-load is skipped, saying why" \
		has "$ran" '"status":"skipped","reason":"KCROSS_RSEQ=off: rseq left unregistered"'
	case $plain in
	*'"rseq":{"registered":false'*)
		echo "# rseq is not registered here by default (${emulator:-no rseq}): the" \
		     "default's checks are moot"
		;;
	*)
		check "by default: registered" has "$plain" '"rseq":{"registered":true,'
		case $plain in
		*'"libc_size":null'*|*'"libc_size":0'*)
			check "by default, without glibc's: kcross's own" \
				has "$plain" '"owner":"kcross"' ;;
		*)
			check "by default, with glibc's registration: glibc's" \
				has "$plain" '"owner":"glibc"'
			long=$(fingerprint KCROSS_RSEQ=off "GLIBC_TUNABLES=$(printf '%05000d' 0)")
			check "a GLIBC_TUNABLES too long to extend: refused in one line" \
				has "$long" "KCROSS_RSEQ=off: GLIBC_TUNABLES is too long" ;;
		esac
		;;
	esac
	if command -v strace >/dev/null 2>&1 && [ -z "$emulator" ] &&
	   printf '%s' "$plain" | grep -qE '"libc_size":[1-9]'; then
		exec=$(env -u KCROSS_RSEQ KCROSS_RSEQ=off \
			GLIBC_TUNABLES=glibc.malloc.check=0:glibc.pthread.rseq=1 \
			strace -v -s 300 -e trace=execve "$harness" sysinfo --json 2>&1 >/dev/null || true)
		check "executed again once, the other tunables kept, rseq=1 replaced" \
			sh -c '[ "$(printf "%s" "$1" | grep -c "^execve(")" = 2 ] &&
			       printf "%s" "$1" | grep -qF \
			       "\"GLIBC_TUNABLES=glibc.malloc.check=0:glibc.pthread.rseq=0\""' - "$exec"
	fi
else
	echo "usage: $0 forced|empty-root|emulated|rseq HARNESS [EMULATOR]" >&2
	exit 2
fi
echo "1..$n"
[ "$failed" = 0 ]
