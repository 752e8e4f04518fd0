/* SPDX-License-Identifier: MIT */
/*
 * kc_clock_gettime / kc_getcpu against the raw system calls, on the path the
 * init stub chose, and again in a forked child with KCROSS_VDSO=0 (the
 * forced system call path); its TAP output is shown as diagnostics and its
 * exit status is one test here.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <kcross/clock.h>
#include <kcross/vdso.h>
#include "tap.h"

#define NTHREADS 8

static int forced_syscall(void)
{
	const char *e = getenv("KCROSS_VDSO");

	return e && !strcmp(e, "0");
}

static long ts_cmp(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? (a->tv_sec < b->tv_sec ? -1 : 1) :
	       (long)(a->tv_nsec - b->tv_nsec);
}

/* ------------------------------------------- first use, from many threads */

static pthread_barrier_t start;
static int thread_rc[NTHREADS];

static void *first_use(void *arg)
{
	int *rc = arg;
	unsigned int cpu = ~0u, want = ~0u;

	pthread_barrier_wait(&start);
	*rc = kc_getcpu(&cpu, NULL);
	/* The thread may migrate between the two calls; only sanity here. */
	if (!*rc && (kc_getcpu_syscall(&want, NULL) || cpu >= CPU_SETSIZE))
		*rc = -1000;
	return NULL;
}

/* kc_getcpu's init stub raced by NTHREADS first callers. */
static void check_racing_init(void)
{
	pthread_t t[NTHREADS];
	int bad = 0, made = 0;

	pthread_barrier_init(&start, NULL, NTHREADS);
	for (int i = 0; i < NTHREADS; i++)
		made += !pthread_create(&t[i], NULL, first_use, &thread_rc[i]);
	if (made != NTHREADS) {
		/* The barrier would never open: leave the stub to the later checks. */
		tap_skip("could not start %d threads: racing first use not tested", NTHREADS);
		exit(tap_done());
	}
	for (int i = 0; i < NTHREADS; i++) {
		pthread_join(t[i], NULL);
		bad += thread_rc[i] != 0;
	}
	pthread_barrier_destroy(&start);
	tap_ok(bad == 0, "%d threads racing through kc_getcpu's init stub all succeed", NTHREADS);
}

/* ----------------------------------------------------------------- checks */

static void check_impls(int forced)
{
	const char *want_cgt, *want_cpu = "syscall";

	want_cgt = !forced && kc_vdso_sym(KC_VDSO_CLOCK_GETTIME) ? "vdso" : "syscall";
#ifdef KC_VDSO_GETCPU
	if (!forced && kc_vdso_sym(KC_VDSO_GETCPU))
		want_cpu = "vdso";
#endif
	tap_ok(!strcmp(kc_clock_gettime_impl(), want_cgt),
	       "kc_clock_gettime_impl() is \"%s\" (want \"%s\": vDSO %s, KCROSS_VDSO%s)",
	       kc_clock_gettime_impl(), want_cgt,
	       kc_vdso_self() ? "present" : "absent", forced ? "=0" : " unset");
	tap_ok(!strcmp(kc_getcpu_impl(), want_cpu),
	       "kc_getcpu_impl() is \"%s\" (want \"%s\")", kc_getcpu_impl(), want_cpu);
}

static void check_clocks(void)
{
	static const struct { clockid_t id; const char *name; } clocks[] = {
		{ CLOCK_MONOTONIC, "CLOCK_MONOTONIC" },
		{ CLOCK_REALTIME, "CLOCK_REALTIME" },
		{ CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW" },
		{ CLOCK_BOOTTIME, "CLOCK_BOOTTIME" },
		{ CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE" },
		{ CLOCK_PROCESS_CPUTIME_ID, "CLOCK_PROCESS_CPUTIME_ID" },
	};
	struct timespec ts;

	for (unsigned int i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		struct timespec a, b, c;
		int ra = kc_clock_gettime_syscall(clocks[i].id, &a);
		int rb = kc_clock_gettime(clocks[i].id, &b);
		int rc = kc_clock_gettime_syscall(clocks[i].id, &c);

		tap_ok(!ra && !rb && !rc && ts_cmp(&a, &b) <= 0 && ts_cmp(&b, &c) <= 0,
		       "kc_clock_gettime(%s) is bracketed by the syscall: "
		       "%lld.%09ld <= %lld.%09ld <= %lld.%09ld", clocks[i].name,
		       (long long)a.tv_sec, a.tv_nsec, (long long)b.tv_sec, b.tv_nsec,
		       (long long)c.tv_sec, c.tv_nsec);
	}
	/* 123 is past MAX_CLOCKS; -1 is a CPU clock with an invalid "which". */
	tap_eq_long(kc_clock_gettime(123, &ts), -EINVAL, "kc_clock_gettime(123)");
	tap_eq_long(kc_clock_gettime_syscall(123, &ts), -EINVAL, "clock_gettime syscall (123)");
	tap_eq_long(kc_clock_gettime(-1, &ts), -EINVAL, "kc_clock_gettime(-1)");
	tap_eq_long(kc_clock_gettime_syscall(-1, &ts), -EINVAL, "clock_gettime syscall (-1)");
}

static void check_getcpu(void)
{
	unsigned int tried = 0, bad = 0;
	cpu_set_t orig, one;

	if (sched_getaffinity(0, sizeof(orig), &orig)) {
		tap_skip("sched_getaffinity failed: pinned getcpu comparison skipped");
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		unsigned int c1 = ~0u, n1 = ~0u, c2 = ~0u, n2 = ~0u, c3 = ~0u, n3 = ~0u;
		int r1, r2, r3, r4;

		if (!CPU_ISSET(cpu, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		tried++;
		r1 = kc_getcpu(&c1, &n1);
		r2 = kc_getcpu_syscall(&c2, &n2);
		r3 = kc_getcpu(&c3, NULL);
		r4 = kc_getcpu(NULL, &n3);
		if (r1 || r2 || r3 || r4 || kc_getcpu(NULL, NULL) ||
		    c1 != (unsigned int)cpu || c2 != c1 || c3 != c1 || n1 != n2 || n3 != n2) {
			tap_diag("pinned to CPU %d: kc_getcpu %d cpu %u node %u (NULL node: cpu %u; "
				 "NULL cpu: node %u), syscall %d cpu %u node %u",
				 cpu, r1, c1, n1, c3, n3, r2, c2, n2);
			bad++;
		}
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	tap_ok(tried > 0 && bad == 0,
	       "kc_getcpu equals the syscall pinned to each of %u CPUs, either pointer NULL too",
	       tried);
}

/* --------------------------------------------------- KCROSS_VDSO=0 child */

static void run_checks(int forced)
{
	/*
	 * kc_getcpu's stub is resolved by racing callers, kc_clock_gettime's
	 * by the _impl query: both ways of making the choice are exercised.
	 */
	check_racing_init();
	check_impls(forced);
	check_clocks();
	check_getcpu();
}

/*
 * Fork before anything has used kc_clock_gettime or kc_getcpu: the child's
 * function pointers are still at their init stubs, which read KCROSS_VDSO
 * when they run, so setting it in the child forces the system call path
 * exactly as setting it at start-up would.  (A fork rather than a re-exec:
 * qemu-user cannot exec a foreign binary without binfmt_misc.)  The child's
 * TAP goes to a pipe that the parent shows as diagnostics.
 */
static pid_t start_forced_child(int *out)
{
	int pfd[2];
	pid_t pid;

	fflush(stdout);
	if (pipe(pfd))
		return -1;
	pid = fork();
	if (pid < 0) {
		close(pfd[0]);
		close(pfd[1]);
		return -1;
	}
	if (!pid) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		close(pfd[1]);
		setenv("KCROSS_VDSO", "0", 1);
		run_checks(1);
		exit(tap_done());
	}
	close(pfd[1]);
	*out = pfd[0];
	return pid;
}

static void finish_forced_child(pid_t pid, int fd)
{
	char line[512];
	int status;
	FILE *f;

	if (pid < 0) {
		tap_ok(0, "could not fork the KCROSS_VDSO=0 child: %s", strerror(errno));
		return;
	}
	f = fdopen(fd, "r");
	while (f && fgets(line, sizeof(line), f))
		printf("#   %s", line);
	if (f)
		fclose(f);
	if (waitpid(pid, &status, 0) != pid)
		status = -1;
	tap_ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	       "the KCROSS_VDSO=0 child passes (status %#x)", status);
}

int main(void)
{
	int fd = -1;
	pid_t child = start_forced_child(&fd);

	run_checks(forced_syscall());
	finish_forced_child(child, fd);
	return tap_done();
}
