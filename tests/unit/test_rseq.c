/* SPDX-License-Identifier: MIT */
/*
 * rseq registration and the CPU/node/cid reads, in every situation the
 * library must handle:
 *
 *   (default)  glibc registered: kcross uses its area
 *   tunable    GLIBC_TUNABLES=glibc.pthread.rseq=0: kcross registers its own,
 *              in every thread, lazily, and after fork
 *   foreign    someone else registered first (not glibc): EINVAL, fallback
 *   seccomp    rseq refused with ENOSYS by a seccomp filter: fallback
 *   dlopen     libkcross.so loaded with dlopen (initial-exec TLS must fit)
 *   off        KCROSS_RSEQ=off with glibc's tunable off too: nothing registered
 *              (the kernel takes a registration of ours), fallback
 *   off-glibc  KCROSS_RSEQ=off alone: glibc's registration is left unused
 *              (and said so), fallback
 *
 * Each mode other than the default is this program re-executed with
 * KC_TEST_MODE (and KCROSS_RSEQ) set; the set-up that must precede kcross's own constructor
 * (priority 101) runs in a priority-100 constructor here.
 */
#include <dlfcn.h>
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <kcross/kcross.h>
#include "refuse_rseq.h"
#include "tap.h"

static const char *mode(void)
{
	const char *m = getenv("KC_TEST_MODE");

	return m ? m : "default";
}

/* ------------------------------------------------ set-up before kcross */

static __thread struct kc_rseq_abi foreign_area __attribute__((aligned(32)));


static long setup_rc;

/* Priority 100 (reserved range: the point is to run before the library's
 * 101, as a sandbox or another runtime would have done earlier still). */
#pragma GCC diagnostic ignored "-Wprio-ctor-dtor"

__attribute__((constructor(100))) static void before_kcross(void)
{
	if (!strcmp(mode(), "foreign"))
		setup_rc = syscall(SYS_rseq, &foreign_area, 32, 0, 0x12345678) ? -errno : 0;
	else if (!strcmp(mode(), "seccomp"))
		setup_rc = refuse_rseq();
}

/* ---------------------------------------------------------- the checks */

static int getcpu_sys(unsigned *cpu, unsigned *node)
{
	return (int)syscall(SYS_getcpu, cpu, node, NULL);
}

/* Pinned to each allowed CPU in turn, the reads agree with the kernel. */
static void check_reads(const char *who)
{
	cpu_set_t allowed, one;
	int n = 0, bad = 0, badnode = 0, badcid = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);

	sched_getaffinity(0, sizeof(allowed), &allowed);
	for (int c = 0; c < CPU_SETSIZE; c++) {
		unsigned cpu, node;

		if (!CPU_ISSET(c, &allowed))
			continue;
		CPU_ZERO(&one);
		CPU_SET(c, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;
		getcpu_sys(&cpu, &node);
		n++;
		bad += kc_cpu() != (int)cpu;
		badnode += kc_node() != (int)node;
		badcid += kc_cid() < 0 || kc_cid() >= ncpu;
	}
	sched_setaffinity(0, sizeof(allowed), &allowed);
	tap_ok(n > 0 && !bad, "%s: kc_cpu() equals getcpu on each of %d CPUs (%d wrong)", who, n, bad);
	tap_ok(n > 0 && !badnode, "%s: kc_node() equals getcpu's node (%d wrong)", who, badnode);
	tap_ok(n > 0 && !badcid, "%s: kc_cid() within [0, %ld) (%d out)", who, ncpu, badcid);
}

static void *thread_fn(void *arg)
{
	int *active = arg;

	*active = kc_rseq_register_current_thread() == 0 && kc_rseq_cpu_raw() >= 0;
	check_reads("thread");
	return NULL;
}

/* A thread whose own seccomp filter refuses rseq: only it falls back. */
static void *refused_thread_fn(void *arg)
{
	struct kc_rseq_info *out = arg;
	unsigned cpu;

	if (refuse_rseq()) {
		out->error = 1;	/* cannot arrange: reported by the caller */
		return NULL;
	}
	*out = kc_rseq_info();
	getcpu_sys(&cpu, NULL);
	if (kc_cpu() != (int)cpu)
		out->error = 2;
	return NULL;
}

static bool rseq_expected(void)
{
	/* Without rseq in the kernel (qemu-user) no mode can have it. */
	return syscall(SYS_rseq, NULL, 0, 0, 0) != -1 || errno != ENOSYS;
}

static void check_mode(void)
{
	struct kc_rseq_info i = kc_rseq_info();
	const char *m = mode();
	bool kernel = rseq_expected();
	pthread_t t;
	int active = -1;

	tap_diag("mode %s: owner %s, size %u, feature size %u, align %u, error %d (%s)", m,
		 kc_rseq_owner_name(i.owner), i.size, i.feature_size, i.align, i.error,
		 i.why ? i.why : "-");
	if (!strcmp(m, "seccomp")) {
		if (setup_rc)
			tap_skip("cannot install a seccomp filter here (%ld): only the fallback is checked",
				 setup_rc);
		else
			tap_ok(i.owner == KC_RSEQ_OWNER_NONE && i.error == -ENOSYS,
			       "ENOSYS from the seccomp filter gives the fallback");
	} else if (!strcmp(m, "off")) {	/* before !kernel: it holds without rseq too */
		long rc = syscall(SYS_rseq, &foreign_area, 32, 0, 0x12345678) ? -errno : 0;

		tap_ok(i.owner == KC_RSEQ_OWNER_NONE && !i.active && i.size == 0 &&
		       i.why && !strcmp(i.why, "KCROSS_RSEQ=off: rseq left unregistered"),
		       "KCROSS_RSEQ=off: owner none, not active, and why");
		tap_ok(i.libc_size <= 0, "glibc's tunable off: glibc did not register (%d)",
		       i.libc_size);
		if (kernel)
			tap_ok(rc == 0, "the kernel has no registration for this thread: it "
			       "takes one (%ld)", rc);
		if (rc == 0)
			syscall(SYS_rseq, &foreign_area, 32, 1, 0x12345678);
	} else if (!strcmp(m, "off-glibc")) {
		tap_ok(i.owner == KC_RSEQ_OWNER_NONE && !i.active && i.why &&
		       strstr(i.why, "glibc's registration left unused"),
		       "KCROSS_RSEQ=off: glibc's registration left unused, and said so (%s)",
		       i.why ? i.why : "-");
		tap_ok(i.libc_size > 0, "glibc registered (its __rseq_size %d)", i.libc_size);
	} else if (!kernel) {
		tap_ok(i.owner == KC_RSEQ_OWNER_NONE && i.error == -ENOSYS,
		       "no rseq in this kernel: owner none, -ENOSYS");
	} else if (!strcmp(m, "default")) {
		tap_ok(i.owner == KC_RSEQ_OWNER_LIBC, "glibc's registration is used");
		tap_ok(i.size >= 32, "registered size >= 32 (%u)", i.size);
	} else if (!strcmp(m, "tunable")) {
		tap_ok(i.owner == KC_RSEQ_OWNER_KCROSS, "own registration when glibc's is off");
		tap_ok(i.size >= 32 && i.size % i.align == 0, "length %u >= 32, multiple of align %u",
		       i.size, i.align);
	} else if (!strcmp(m, "foreign")) {
		tap_ok(setup_rc == 0, "a foreign registration was made first (%ld)", setup_rc);
		tap_ok(i.owner == KC_RSEQ_OWNER_NONE && i.error == -EINVAL,
		       "it is detected (EINVAL) and the fallback used");
	}
	tap_ok((kc_rseq_cpu_raw() >= 0) == (i.owner != KC_RSEQ_OWNER_NONE),
	       "the area's cpu_id says whether rseq is active (%d)", kc_rseq_cpu_raw());
	check_reads("main thread");

	/* A thread created after init registers (lazily, for ours). */
	pthread_create(&t, NULL, thread_fn, &active);
	pthread_join(t, NULL);
	tap_ok(active == (i.owner != KC_RSEQ_OWNER_NONE), "new thread's registration state (%d)",
	       active);

	if (!strcmp(m, "tunable") && i.owner == KC_RSEQ_OWNER_KCROSS) {
		struct kc_rseq_info r = { 0 };

		pthread_create(&t, NULL, refused_thread_fn, &r);
		pthread_join(t, NULL);
		if (r.error == 1) {
			tap_skip("cannot install a per-thread seccomp filter here");
		} else {
			tap_ok(!r.active && r.error == -ENOSYS && r.owner == KC_RSEQ_OWNER_KCROSS,
			       "a thread refused rseq falls back alone (active %d, error %d)",
			       r.active, r.error);
			pthread_create(&t, NULL, thread_fn, &active);
			pthread_join(t, NULL);
			tap_ok(active == 1 && kc_rseq_info().active,
			       "other threads keep rseq after one was refused");
		}
	}

	/* fork: the child inherits the registration with its copy of TLS. */
	{
		pid_t pid = fork();
		int st;

		if (pid == 0) {
			unsigned cpu;

			getcpu_sys(&cpu, NULL);
			_exit((kc_rseq_cpu_raw() >= 0) == (i.owner != KC_RSEQ_OWNER_NONE) &&
			      kc_cpu() == (int)cpu ? 0 : 1);
		}
		waitpid(pid, &st, 0);
		tap_ok(WIFEXITED(st) && WEXITSTATUS(st) == 0, "after fork the child reads right");
	}
}

/* libkcross.so loaded at run time into a process with rseq tunable off. */
static void check_dlopen(const char *so)
{
	void *h = dlopen(so, RTLD_NOW | RTLD_LOCAL);
	int (*cpu_slow)(void);
	struct kc_rseq_info (*info)(void);

	if (!tap_ok(h != NULL, "dlopen(%s): %s", so, h ? "ok" : dlerror()))
		return;
	info = (struct kc_rseq_info (*)(void))dlsym(h, "kc_rseq_info");
	cpu_slow = (int (*)(void))dlsym(h, "kc__cpu_slow");
	if (tap_ok(info && cpu_slow, "symbols found")) {
		struct kc_rseq_info i = info();
		unsigned cpu;

		getcpu_sys(&cpu, NULL);
		tap_diag("dlopen'ed: owner %s size %u", kc_rseq_owner_name(i.owner), i.size);
		tap_ok(cpu_slow() == (int)cpu, "the dlopen'ed library reads the CPU");
	}
}

static int reexec(char **argv, const char *m, const char *tunable, const char *rseq)
{
	pid_t pid = fork();
	int st;

	if (pid == 0) {
		setenv("KC_TEST_MODE", m, 1);
		if (tunable)
			setenv("GLIBC_TUNABLES", tunable, 1);
		if (rseq)
			setenv("KCROSS_RSEQ", rseq, 1);
		else
			unsetenv("KCROSS_RSEQ");
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

/* KCROSS_RSEQ's values: auto, on, off; anything else refused in one line. */
static void check_setting(void)
{
	static const char *const good[] = { "auto", "on", "off" };
	const char *e;

	for (size_t k = 0; k < sizeof(good) / sizeof(good[0]); k++) {
		setenv("KCROSS_RSEQ", good[k], 1);
		e = kc_settings_error();
		tap_ok(!e, "KCROSS_RSEQ=%s accepted (%s)", good[k], e ? e : "ok");
	}
	setenv("KCROSS_RSEQ", "0", 1);
	e = kc_settings_error();
	tap_ok(e && !strcmp(e, "KCROSS_RSEQ=0: not one of auto, on, off"),
	       "KCROSS_RSEQ=0 refused: %s", e ? e : "(accepted)");
	unsetenv("KCROSS_RSEQ");
}

/* Does glibc register rseq here (this process, started as it was)? */
static bool glibc_registers(void)
{
	return kc_rseq_info().libc_size > 0;
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--dlopen")) {
		check_dlopen(argv[2]);
		return tap_done();
	}
	check_mode();
	if (!strcmp(mode(), "default")) {
		static const char *const modes[][3] = {
			{ "tunable", "glibc.pthread.rseq=0", NULL },
			{ "foreign", "glibc.pthread.rseq=0", NULL },
			{ "seccomp", "glibc.pthread.rseq=0", NULL },
			{ "off", "glibc.pthread.rseq=0", "off" },
			{ "off-glibc", NULL, "off" },
		};

		check_setting();
		fflush(stdout);
		for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
			int rc;

			if (!strcmp(modes[k][0], "off-glibc") && !glibc_registers()) {
				tap_skip("mode off-glibc: glibc registers no rseq here");
				continue;
			}
			rc = reexec(argv, modes[k][0], modes[k][1], modes[k][2]);

			if (rc == 127)
				tap_skip("mode %s: cannot re-execute this program here "
					 "(qemu-user without binfmt_misc?)", modes[k][0]);
			else
				tap_ok(rc == 0, "mode %s passed (exit %d)", modes[k][0], rc);
		}
	}
	return tap_done();
}
