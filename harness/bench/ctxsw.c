/* SPDX-License-Identifier: MIT */
/*
 * Suite ctxsw: the kernel's context switch, between two threads or two
 * processes of this harness.
 *
 *   yield     two threads pinned to the measuring CPU call sched_yield in
 *             turn (the FreeBSD two-thread test): one iteration is A's yield
 *             to B and B's back, 2 switches.
 *   pipe      a one-byte ping-pong over two pipes, threads or processes,
 *             on the measuring CPU or across two CPUs: an iteration is a
 *             round trip, 2 switches.
 *   futex     the same round trip on a futex word (FUTEX_WAKE/FUTEX_WAIT).
 *   eventfd   the same round trip over two eventfds.
 *   -fp/-vec  after every switch each side writes the FP (x86-64 SSE xmm,
 *             aarch64 d, ppc64le f) or vector registers (x86-64 AVX ymm,
 *             aarch64 q, ppc64le VSX), so that the kernel has live state to
 *             save and restore: the difference to the plain row is that
 *             cost (plus the few register writes themselves).
 *
 * Every row declares its switches per iteration (c->switches_per_op) and
 * counts the switches of both sides over the timed loop: voluntary_ctxt_switches
 * + nonvoluntary_ctxt_switches of /proc/PID/task/TID/status (sched_yield
 * counts as a non-voluntary switch), read only before and after the loop;
 * the perf software event context-switches of each thread where /proc is
 * missing (a perf event costs its thread at every switch: see bench_ctxsw).
 * The method (measure.c) compares the two and flags "counts-mismatch".
 *
 * Partners are created for each batch, outside the timed loop, which holds
 * only the ping-pong.  Child processes die with the harness
 * (PR_SET_PDEATHSIG) and are reaped at the end of the batch.
 *
 * The ping-pong's reads and writes are system calls made by kc_sys3 (the
 * harness's mechanism, as the syscall suite's read and write rows), not
 * glibc's read() and write().  Those are cancellation points: in a process
 * that has ever had a second thread (the harness always has, and its
 * partner processes are forks of it) glibc wraps each in two atomic
 * read-modify-writes of the thread's cancellation state, which a
 * single-threaded program (perf bench sched pipe's workers) does not pay.
 * On the Intel VM (Xeon, KVM, Linux 6.18, glibc 2.36) that was about 5% of
 * a pipe round trip between two processes (median TSC ticks per round trip
 * 4,878 in a process that never had a thread, 5,105 in one that had one,
 * 4,840 there with the system calls made directly): most of the harness's
 * 1.065 against perf bench (docs/verdicts.md, "Agreement with perf bench").
 */
#include <errno.h>
#include <linux/futex.h>
#include <linux/perf_event.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "bench/bench.h"

#if defined(KC_ARCH_X86_64)
# include <cpuid.h>
#endif

/* The row's parameter: a mechanism and flags. */
enum {
	M_YIELD = 1, M_PIPE = 2, M_FUTEX = 3, M_EVENTFD = 4, M_MASK = 0xf,
	F_PROCS = 0x10,		/* processes (fork) instead of threads */
	F_ACROSS = 0x20,	/* partner on another allowed CPU */
	F_FP = 0x40,		/* touch the FP registers after every switch */
	F_VEC = 0x80,		/* touch the vector registers after every switch */
};

/* ------------------------------------------------ FP and vector touching */

/*
 * Write the caller-saved FP or vector registers with a non-zero pattern, so
 * that the state is live (not in its initial configuration, which x86's
 * XSAVE may skip) and modified since the kernel last restored it.
 */
#if defined(KC_ARCH_X86_64)
static const char *fp_unmet(void)
{
	return NULL;	/* SSE2 is part of x86-64 */
}

static const char *vec_unmet(void)
{
	unsigned int a, b, c, d, lo, hi;

	if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_AVX))
		return "this CPU has no AVX (CPUID.1:ECX[28])";
	if (!(c & bit_OSXSAVE))
		return "the kernel has not enabled XSAVE (CPUID.1:ECX[27] OSXSAVE clear)";
	__asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	if ((lo & 6) != 6)
		return "the kernel has not enabled the AVX state (XCR0 bits 1-2)";
	return NULL;
}

static inline void touch_fp(void)
{
	__asm__ volatile("pcmpeqd %%xmm0, %%xmm0\n\t"
			 "movdqa %%xmm0, %%xmm1\n\tmovdqa %%xmm0, %%xmm2\n\t"
			 "movdqa %%xmm0, %%xmm3\n\tmovdqa %%xmm0, %%xmm4\n\t"
			 "movdqa %%xmm0, %%xmm5\n\tmovdqa %%xmm0, %%xmm6\n\t"
			 "movdqa %%xmm0, %%xmm7\n\tmovdqa %%xmm0, %%xmm8\n\t"
			 "movdqa %%xmm0, %%xmm9\n\tmovdqa %%xmm0, %%xmm10\n\t"
			 "movdqa %%xmm0, %%xmm11\n\tmovdqa %%xmm0, %%xmm12\n\t"
			 "movdqa %%xmm0, %%xmm13\n\tmovdqa %%xmm0, %%xmm14\n\t"
			 "movdqa %%xmm0, %%xmm15"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

/* VEX-encoded only, and the upper halves left live on purpose (no
 * vzeroupper until the batch is over: touch_end). */
static inline void touch_vec(void)
{
	__asm__ volatile("vpcmpeqd %%ymm0, %%ymm0, %%ymm0\n\t"
			 "vmovdqa %%ymm0, %%ymm1\n\tvmovdqa %%ymm0, %%ymm2\n\t"
			 "vmovdqa %%ymm0, %%ymm3\n\tvmovdqa %%ymm0, %%ymm4\n\t"
			 "vmovdqa %%ymm0, %%ymm5\n\tvmovdqa %%ymm0, %%ymm6\n\t"
			 "vmovdqa %%ymm0, %%ymm7\n\tvmovdqa %%ymm0, %%ymm8\n\t"
			 "vmovdqa %%ymm0, %%ymm9\n\tvmovdqa %%ymm0, %%ymm10\n\t"
			 "vmovdqa %%ymm0, %%ymm11\n\tvmovdqa %%ymm0, %%ymm12\n\t"
			 "vmovdqa %%ymm0, %%ymm13\n\tvmovdqa %%ymm0, %%ymm14\n\t"
			 "vmovdqa %%ymm0, %%ymm15"
			 ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7",
			 "xmm8", "xmm9", "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15");
}

static void touch_end(int flags)
{
	if (flags & F_VEC)
		__asm__ volatile("vzeroupper" ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4",
				 "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",
				 "xmm12", "xmm13", "xmm14", "xmm15");
}
#elif defined(KC_ARCH_AARCH64)
# ifndef HWCAP_FP
#  define HWCAP_FP (1UL << 0)
# endif
# ifndef HWCAP_ASIMD
#  define HWCAP_ASIMD (1UL << 1)
# endif
static const char *fp_unmet(void)
{
	return getauxval(AT_HWCAP) & HWCAP_FP ? NULL : "no FP unit (AT_HWCAP lacks HWCAP_FP)";
}

static const char *vec_unmet(void)
{
	return getauxval(AT_HWCAP) & HWCAP_ASIMD ? NULL
		: "no Advanced SIMD unit (AT_HWCAP lacks HWCAP_ASIMD)";
}

/* v0-v7 and v16-v31: the registers a call may clobber (AAPCS64). */
# define KH_V_CLOBBERS "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7", "v16", "v17", \
	"v18", "v19", "v20", "v21", "v22", "v23", "v24", "v25", "v26", "v27", "v28", \
	"v29", "v30", "v31"
static inline void touch_fp(void)
{
	__asm__ volatile("fmov d0, #1.0\n\tfmov d1, d0\n\tfmov d2, d0\n\tfmov d3, d0\n\t"
			 "fmov d4, d0\n\tfmov d5, d0\n\tfmov d6, d0\n\tfmov d7, d0\n\t"
			 "fmov d16, d0\n\tfmov d17, d0\n\tfmov d18, d0\n\tfmov d19, d0\n\t"
			 "fmov d20, d0\n\tfmov d21, d0\n\tfmov d22, d0\n\tfmov d23, d0\n\t"
			 "fmov d24, d0\n\tfmov d25, d0\n\tfmov d26, d0\n\tfmov d27, d0\n\t"
			 "fmov d28, d0\n\tfmov d29, d0\n\tfmov d30, d0\n\tfmov d31, d0"
			 ::: KH_V_CLOBBERS);
}

static inline void touch_vec(void)
{
	__asm__ volatile("movi v0.16b, #0xa5\n\tmov v1.16b, v0.16b\n\tmov v2.16b, v0.16b\n\t"
			 "mov v3.16b, v0.16b\n\tmov v4.16b, v0.16b\n\tmov v5.16b, v0.16b\n\t"
			 "mov v6.16b, v0.16b\n\tmov v7.16b, v0.16b\n\tmov v16.16b, v0.16b\n\t"
			 "mov v17.16b, v0.16b\n\tmov v18.16b, v0.16b\n\tmov v19.16b, v0.16b\n\t"
			 "mov v20.16b, v0.16b\n\tmov v21.16b, v0.16b\n\tmov v22.16b, v0.16b\n\t"
			 "mov v23.16b, v0.16b\n\tmov v24.16b, v0.16b\n\tmov v25.16b, v0.16b\n\t"
			 "mov v26.16b, v0.16b\n\tmov v27.16b, v0.16b\n\tmov v28.16b, v0.16b\n\t"
			 "mov v29.16b, v0.16b\n\tmov v30.16b, v0.16b\n\tmov v31.16b, v0.16b"
			 ::: KH_V_CLOBBERS);
}

static void touch_end(int flags)
{
	(void)flags;
}
#elif defined(KC_ARCH_PPC64LE)
# ifndef PPC_FEATURE_HAS_FPU
#  define PPC_FEATURE_HAS_FPU 0x08000000UL
# endif
# ifndef PPC_FEATURE_HAS_VSX
#  define PPC_FEATURE_HAS_VSX 0x00000080UL
# endif
static const char *fp_unmet(void)
{
	return getauxval(AT_HWCAP) & PPC_FEATURE_HAS_FPU ? NULL
		: "no FP unit (AT_HWCAP lacks PPC_FEATURE_HAS_FPU)";
}

static const char *vec_unmet(void)
{
	return getauxval(AT_HWCAP) & PPC_FEATURE_HAS_VSX ? NULL
		: "no VSX unit (AT_HWCAP lacks PPC_FEATURE_HAS_VSX)";
}

/* f0-f13 (vs0-vs13) and v0-v19 (vs32-vs51): volatile in the ELFv2 ABI. */
# define KH_F_CLOBBERS "fr0", "fr1", "fr2", "fr3", "fr4", "fr5", "fr6", "fr7", "fr8", \
	"fr9", "fr10", "fr11", "fr12", "fr13"
static inline void touch_fp(void)
{
	__asm__ volatile("fmr 0, 0\n\tfmr 1, 0\n\tfmr 2, 0\n\tfmr 3, 0\n\tfmr 4, 0\n\t"
			 "fmr 5, 0\n\tfmr 6, 0\n\tfmr 7, 0\n\tfmr 8, 0\n\tfmr 9, 0\n\t"
			 "fmr 10, 0\n\tfmr 11, 0\n\tfmr 12, 0\n\tfmr 13, 0"
			 ::: KH_F_CLOBBERS);
}

static inline void touch_vec(void)
{
	__asm__ volatile("xxlxor 32, 32, 32\n\txxlnor 32, 32, 32\n\t"
			 "xxlor 33, 32, 32\n\txxlor 34, 32, 32\n\txxlor 35, 32, 32\n\t"
			 "xxlor 36, 32, 32\n\txxlor 37, 32, 32\n\txxlor 38, 32, 32\n\t"
			 "xxlor 39, 32, 32\n\txxlor 40, 32, 32\n\txxlor 41, 32, 32\n\t"
			 "xxlor 42, 32, 32\n\txxlor 43, 32, 32\n\txxlor 44, 32, 32\n\t"
			 "xxlor 45, 32, 32\n\txxlor 46, 32, 32\n\txxlor 47, 32, 32\n\t"
			 "xxlor 48, 32, 32\n\txxlor 49, 32, 32\n\txxlor 50, 32, 32\n\t"
			 "xxlor 51, 32, 32\n\txxlor 0, 32, 32\n\txxlor 1, 32, 32\n\t"
			 "xxlor 2, 32, 32\n\txxlor 3, 32, 32\n\txxlor 4, 32, 32\n\t"
			 "xxlor 5, 32, 32\n\txxlor 6, 32, 32\n\txxlor 7, 32, 32\n\t"
			 "xxlor 8, 32, 32\n\txxlor 9, 32, 32\n\txxlor 10, 32, 32\n\t"
			 "xxlor 11, 32, 32\n\txxlor 12, 32, 32\n\txxlor 13, 32, 32"
			 ::: KH_F_CLOBBERS, "v0", "v1", "v2", "v3", "v4", "v5", "v6", "v7",
			 "v8", "v9", "v10", "v11", "v12", "v13", "v14", "v15", "v16", "v17",
			 "v18", "v19");
}

static void touch_end(int flags)
{
	(void)flags;
}
#else
static const char *fp_unmet(void)
{
	return "no FP touching code for this architecture";
}

static const char *vec_unmet(void)
{
	return "no vector touching code for this architecture";
}

static inline void touch_fp(void)
{
}

static inline void touch_vec(void)
{
}

static void touch_end(int flags)
{
	(void)flags;
}
#endif

/* After a switch: touch what the row asks for (flags is a constant per
 * batch; the branch is predicted). */
static inline __attribute__((always_inline)) void touch(int flags)
{
	if (flags & F_FP)
		touch_fp();
	if (flags & F_VEC)
		touch_vec();
}

/* -------------------------------------------------------- switch counting */

/*
 * One participant's switch count: its /proc status file's voluntary +
 * nonvoluntary switches, else (fd >= 0) the perf software event
 * context-switches opened on its thread or process.
 */
struct swc {
	pid_t pid, tid;		/* tid 0: the measuring thread's harness counter */
	int fd;
	uint64_t before;
};

static pid_t gettid_(void)
{
	return (pid_t)syscall(SYS_gettid);
}

static bool proc_switches(pid_t pid, pid_t tid, uint64_t *v)
{
	char path[64], line[128];
	unsigned long long n;
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, (int)tid);
	if (!(f = fopen(path, "r")))
		return false;
	*v = 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "voluntary_ctxt_switches: %llu", &n) == 1 ||
		    sscanf(line, "nonvoluntary_ctxt_switches: %llu", &n) == 1) {
			*v += n;
			found++;
		}
	fclose(f);
	return found == 2;
}

static bool swc_read(const struct swc *s, uint64_t *v)
{
	uint64_t buf[3];

	if (s->fd >= 0) {
		/* value, time enabled, time running (READ_FORMAT of counters.c
		 * without the group) */
		if (read(s->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return false;
		*v = buf[0];
		return true;
	}
	return proc_switches(s->pid, s->tid, v);
}

/*
 * Set up the count of the partner thread or process (pid, tid); -1 when
 * neither way works here (the reason in c).  /proc first: it is read only
 * before and after the loop, while a perf event attached to a thread is
 * switched out and in with it, which on this project's VM added about a
 * microsecond to every round trip (pipe-procs-same-cpu 7.7-8.1 us with the
 * partner's event, 6.7-6.9 us without, perf bench sched pipe 6.7-7.0 us in
 * the same minutes).  The perf event is the fallback (no /proc mounted).
 */
static int swc_open(struct kh_bench_ctx *c, struct swc *s, pid_t pid, pid_t tid)
{
	struct perf_event_attr a;
	uint64_t v;

	s->pid = pid;
	s->tid = tid;
	s->fd = -1;
	if (proc_switches(pid, tid, &v))
		return 0;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
	a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
	a.exclude_hv = 1;
	s->fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, 0);
	if (s->fd < 0) {
		kh_fail(c, "cannot count the context switches of thread %d: "
			"/proc/%d/task/%d/status and perf's context-switches event both "
			"unavailable", (int)tid, (int)pid, (int)tid);
		return -1;
	}
	return 0;
}

static void swc_close(struct swc *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

/*
 * The counts of both sides, around the timed loop: side[0] the measuring
 * thread, side[1] its partner.  Before: read just before KH_LOOP; after:
 * just after it, when both sides are blocked or done.
 */
struct count2 {
	struct swc side[2];
};

static int count_open(struct kh_bench_ctx *c, struct count2 *k, pid_t pid, pid_t tid)
{
	if (swc_open(c, &k->side[0], getpid(), gettid_()))
		return -1;
	if (swc_open(c, &k->side[1], pid, tid)) {
		swc_close(&k->side[0]);
		return -1;
	}
	return 0;
}

static void count_before(struct count2 *k)
{
	for (int i = 0; i < 2; i++)
		if (!swc_read(&k->side[i], &k->side[i].before))
			k->side[i].before = UINT64_MAX;
}

/* Add the switches of both sides to c->switches; false if a read failed. */
static bool count_after(struct kh_bench_ctx *c, struct count2 *k)
{
	uint64_t v, total = 0;
	bool ok = true;

	for (int i = 0; i < 2; i++) {
		if (k->side[i].before == UINT64_MAX || !swc_read(&k->side[i], &v))
			ok = false;
		else
			total += v - k->side[i].before;
		swc_close(&k->side[i]);
	}
	if (ok) {
		c->switches += total;
		c->counts_switches = true;
	}
	return ok;
}

/* ------------------------------------------------------------- placement */

/* The measuring CPU and, for across-CPU rows, another allowed one. */
static int partner_cpu(struct kh_bench_ctx *c, int flags, int *self, int *other)
{
	const cpu_set_t *allowed = kh_allowed_cpus();
	cpu_set_t mine;

	*self = *other = -1;
	if (!sched_getaffinity(0, sizeof(mine), &mine) && CPU_COUNT(&mine) == 1)
		for (int i = 0; i < CPU_SETSIZE; i++)
			if (CPU_ISSET(i, &mine))
				*self = i;
	if (*self < 0)
		return kh_fail(c, "the measuring thread is not pinned to one CPU");
	*other = *self;
	if (!(flags & F_ACROSS))
		return KH_OK;
	for (int k = 1; k < CPU_SETSIZE; k++) {
		int cpu = (*self + k) % CPU_SETSIZE;

		if (CPU_ISSET(cpu, allowed)) {
			*other = cpu;
			return KH_OK;
		}
	}
	return kh_skip(c, "an across-CPU row needs two allowed CPUs; this process may use "
		       "only CPU %d", *self);
}

static void set_cpu(cpu_set_t *s, int cpu)
{
	CPU_ZERO(s);
	CPU_SET(cpu, s);
}

/* -------------------------------------------------------------- partners */

struct pp {
	int flags;
	uint64_t iters;
	int to[2], back[2];	/* pipes (or eventfds in [0] and [1] alike) */
	uint32_t word;		/* futex */
	int ready;		/* yield: the partner is yielding */
	uint32_t stop;		/* the measuring side has read the counts */
	pid_t tid;
	uint64_t partner_ok;	/* round trips the partner completed */
};

static long futex(uint32_t *w, int op, uint32_t v)
{
	return syscall(SYS_futex, w, op, v, NULL, NULL, 0);
}

static inline void futex_wait_for(uint32_t *w, uint32_t want)
{
	uint32_t v;

	while ((v = __atomic_load_n(w, __ATOMIC_ACQUIRE)) != want)
		futex(w, FUTEX_WAIT_PRIVATE, v);
}

static inline void futex_post(uint32_t *w, uint32_t v)
{
	__atomic_store_n(w, v, __ATOMIC_RELEASE);
	futex(w, FUTEX_WAKE_PRIVATE, 1);
}

/* The partner's side: answer iters round trips (stop early on an error or
 * when the measuring side closed its end). */
static void partner_loop(struct pp *p)
{
	int mech = p->flags & M_MASK;
	uint64_t one = 1, v, done = 0;
	uint32_t seq = 0;
	char b;

	switch (mech) {
	case M_YIELD:
		__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
		while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE)) {
			sched_yield();
			touch(p->flags);
		}
		break;
	case M_PIPE:
		b = 'r';	/* ready: the measuring side waits for this, untimed */
		if (write(p->back[1], &b, 1) != 1)
			break;
		for (; done < p->iters; done++) {
			if (kc_sys3(SYS_read, p->to[0], (long)&b, 1) != 1)
				break;
			touch(p->flags);
			if (kc_sys3(SYS_write, p->back[1], (long)&b, 1) != 1)
				break;
		}
		break;
	case M_EVENTFD:
		/* stop: the measuring side gave up before its loop and woke us
		 * (closing an eventfd does not wake its reader). */
		if (write(p->back[0], &one, 8) != 8)	/* ready */
			break;
		for (; done < p->iters; done++) {
			if (kc_sys3(SYS_read, p->to[0], (long)&v, 8) != 8 ||
			    __atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
				break;
			touch(p->flags);
			if (kc_sys3(SYS_write, p->back[0], (long)&one, 8) != 8)
				break;
		}
		break;
	case M_FUTEX:
		for (; done < p->iters; done++) {
			futex_wait_for(&p->word, ++seq);
			if (__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
				break;
			touch(p->flags);
			futex_post(&p->word, ++seq);
		}
		break;
	}
	touch_end(p->flags);
	__atomic_store_n(&p->partner_ok, done, __ATOMIC_RELEASE);
}

/* A partner thread stays until its count has been read: an exited
 * thread's /proc/self/task/TID is gone. */
static void *partner_thread(void *arg)
{
	struct pp *p = arg;

	__atomic_store_n(&p->tid, gettid_(), __ATOMIC_RELEASE);
	partner_loop(p);
	while (!__atomic_load_n(&p->stop, __ATOMIC_ACQUIRE))
		futex(&p->stop, FUTEX_WAIT_PRIVATE, 0);
	return NULL;
}

/* The measuring side's round trip, the loop's whole body. */
static inline __attribute__((always_inline)) uint64_t round_trip(struct pp *p, int mech,
								 int flags, uint32_t *seq)
{
	uint64_t one = 1, v;
	char b = 'x';
	uint64_t got = 0;

	switch (mech) {
	case M_YIELD:
		got = sched_yield() == 0;
		break;
	case M_PIPE:
		got = kc_sys3(SYS_write, p->to[1], (long)&b, 1) == 1;
		got += kc_sys3(SYS_read, p->back[0], (long)&b, 1) == 1;
		break;
	case M_EVENTFD:
		got = kc_sys3(SYS_write, p->to[0], (long)&one, 8) == 8;
		got += kc_sys3(SYS_read, p->back[0], (long)&v, 8) == 8;
		break;
	case M_FUTEX:
		futex_post(&p->word, ++*seq);
		futex_wait_for(&p->word, ++*seq);
		got = 2;
		break;
	}
	touch(flags);
	return got;
}

static void close_fds(struct pp *p)
{
	for (int i = 0; i < 2; i++) {
		if (p->to[i] >= 0)
			close(p->to[i]);
		if (p->back[i] >= 0)
			close(p->back[i]);
		p->to[i] = p->back[i] = -1;
	}
}

static int make_channels(struct kh_bench_ctx *c, struct pp *p)
{
	int mech = p->flags & M_MASK;

	p->to[0] = p->to[1] = p->back[0] = p->back[1] = -1;
	if (mech == M_PIPE && (pipe(p->to) || pipe(p->back)))
		goto fail;
	if (mech == M_EVENTFD &&
	    ((p->to[0] = eventfd(0, EFD_CLOEXEC)) < 0 || (p->back[0] = eventfd(0, EFD_CLOEXEC)) < 0))
		goto fail;
	return KH_OK;
fail:
	close_fds(p);
	return kh_fail(c, "cannot create the %s: %s", mech == M_PIPE ? "pipes" : "eventfds",
		       strerror(errno));
}

/* Wait, untimed, for a pipe or eventfd partner's "ready" (it is then at
 * its first read): a partner's start-up (a new process's first steps) must
 * not land in the first round trip.  False if it never came. */
static bool wait_ready(struct pp *p)
{
	uint64_t v;
	char b;

	switch (p->flags & M_MASK) {
	case M_PIPE:
		return read(p->back[0], &b, 1) == 1;
	case M_EVENTFD:
		return read(p->back[0], &v, 8) == 8;
	default:
		return true;
	}
}

/*
 * The timed loop of the measuring side, counted.  Returns the round trips
 * it completed, as the body's return values say (`want` per iteration).
 */
static uint64_t timed(struct kh_bench_ctx *c, struct pp *p, struct count2 *k, uint64_t *want)
{
	int mech = p->flags & M_MASK, flags = p->flags & (F_FP | F_VEC);
	uint64_t got = 0;
	uint32_t seq = 0;

	*want = (mech == M_YIELD ? 1 : 2) * c->iters;
	count_before(k);
	/* One loop per (mechanism, touch) pair, each with constant arguments: the
	 * inlined round_trip then holds only that operation, no dispatch. */
#define KH_CTXSW_LOOP(M, F) \
	case (M) | (F): KH_LOOP(c, got += round_trip(p, (M), (F), &seq)); break
#define KH_CTXSW_LOOPS(M) \
	KH_CTXSW_LOOP(M, 0); KH_CTXSW_LOOP(M, F_FP); KH_CTXSW_LOOP(M, F_VEC); \
	KH_CTXSW_LOOP(M, F_FP | F_VEC)
	switch (mech | flags) {
	KH_CTXSW_LOOPS(M_YIELD);
	KH_CTXSW_LOOPS(M_PIPE);
	KH_CTXSW_LOOPS(M_EVENTFD);
	KH_CTXSW_LOOPS(M_FUTEX);
	}
#undef KH_CTXSW_LOOPS
#undef KH_CTXSW_LOOP
	touch_end(flags);
	return got;
}

static int check_done(struct kh_bench_ctx *c, struct pp *p, uint64_t got, uint64_t want,
		      struct count2 *k, bool counted)
{
	if (got != want)
		return kh_fail(c, "the measuring side completed %llu of %llu operations",
			       (unsigned long long)got, (unsigned long long)want);
	if ((p->flags & M_MASK) != M_YIELD && p->partner_ok != p->iters)
		return kh_fail(c, "the partner answered %llu of %llu round trips",
			       (unsigned long long)p->partner_ok, (unsigned long long)p->iters);
	if (!counted)
		return kh_fail(c, "could not read the context switch count of thread %d after "
			       "the loop", (int)k->side[1].tid);
	return KH_OK;
}

static int run_threads(struct kh_bench_ctx *c, struct pp *p, int other)
{
	pthread_attr_t attr;
	pthread_t th;
	cpu_set_t cpus;
	struct count2 k;
	uint64_t got = 0, want = 0;
	bool counted = false;
	int err, st;

	if ((st = make_channels(c, p)) != KH_OK)
		return st;
	set_cpu(&cpus, other);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	err = pthread_create(&th, &attr, partner_thread, p);
	pthread_attr_destroy(&attr);
	if (err) {
		close_fds(p);
		return kh_fail(c, "cannot create the partner thread: %s", strerror(err));
	}
	/* Its tid, for its count; a yield partner also waits to be started. */
	while (!__atomic_load_n(&p->tid, __ATOMIC_ACQUIRE) ||
	       ((p->flags & M_MASK) == M_YIELD && !__atomic_load_n(&p->ready, __ATOMIC_ACQUIRE)))
		sched_yield();
	st = wait_ready(p) ? count_open(c, &k, getpid(), p->tid)
		: kh_fail(c, "the partner thread did not start answering");
	if (st == 0) {
		got = timed(c, p, &k, &want);
		counted = count_after(c, &k);
	} else {
		st = KH_FAIL;
	}
	__atomic_store_n(&p->stop, 1, __ATOMIC_RELEASE);
	futex(&p->stop, FUTEX_WAKE_PRIVATE, 1);
	if (st != KH_OK) {
		/* The partner waits for the first round trip: wake it to stop. */
		uint64_t one = 1;

		if ((p->flags & M_MASK) == M_FUTEX)
			futex_post(&p->word, 1);
		if ((p->flags & M_MASK) == M_EVENTFD && write(p->to[0], &one, 8) != 8)
			abort();	/* an eventfd write of 1 cannot fail */
	}
	close_fds(p);	/* a partner still waiting on a pipe sees EOF */
	pthread_join(th, NULL);
	if (st != KH_OK)
		return st;
	return check_done(c, p, got, want, &k, counted);
}

static int run_procs(struct kh_bench_ctx *c, struct pp *p, int other)
{
	pid_t parent = getpid(), child;
	struct count2 k;
	uint64_t got = 0, want = 0;
	bool counted = false;
	int st, status;

	if ((st = make_channels(c, p)) != KH_OK)
		return st;
	fflush(NULL);
	child = fork();
	if (child < 0) {
		close_fds(p);
		return kh_fail(c, "fork: %s", strerror(errno));
	}
	if (child == 0) {
		cpu_set_t one;
		char b;

		/* Die with the harness, even if it died before this line. */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent)
			_exit(3);
		set_cpu(&one, other);
		if (sched_setaffinity(0, sizeof(one), &one))
			_exit(2);
		close(p->to[1]);
		close(p->back[0]);
		partner_loop(p);
		/* Stay until the harness has read the count: EOF. */
		while (read(p->to[0], &b, 1) > 0)
			;
		_exit(p->partner_ok == p->iters ? 0 : 1);
	}
	close(p->to[0]);
	close(p->back[1]);
	p->to[0] = p->back[1] = -1;
	if (!wait_ready(p)) {
		st = kh_fail(c, "the partner process did not start answering");
	} else if (count_open(c, &k, child, child) == 0) {
		got = timed(c, p, &k, &want);
		counted = count_after(c, &k);
	} else {
		st = KH_FAIL;
	}
	close_fds(p);
	while (waitpid(child, &status, 0) < 0 && errno == EINTR)
		;
	if (st != KH_OK)
		return st;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return kh_fail(c, "the partner process %s %d",
			       WIFEXITED(status) ? "exited with" : "died of signal",
			       WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
	p->partner_ok = p->iters;	/* its exit status said so */
	return check_done(c, p, got, want, &k, counted);
}

/*
 * The measuring side runs in a thread of its own, pinned to the measuring
 * CPU, while the harness's thread sleeps in pthread_join: the harness's
 * perf events are attached to its own thread only, and a thread with perf
 * events pays for them at every switch (on this project's VM, about 0.9 us
 * per switch: pipe-threads-same-cpu 6.5-6.7 us per round trip in the
 * harness's thread, 4.6-4.9 us without events, perf bench sched pipe -T
 * 4.7 us).  The result's `counters` are then the sleeping harness thread's;
 * the loop's switches are in switches_counted_per_op.
 */
struct side {
	struct kh_bench_ctx *c;
	struct pp p;
	int self, other, st;
	int unshared_errno;	/* why unshare(CLONE_FILES) failed, or 0 */
};

static void *measuring_side(void *arg)
{
	struct side *m = arg;

	/*
	 * A file table of its own: shared by the harness's thread, each read
	 * and write would take and drop a reference to its file (Linux's
	 * fdget skips that only for an unshared table), which a process
	 * talking to another process does not pay.  The partner thread of a
	 * thread row shares this table, as two threads do.  The copies of
	 * the harness's descriptors in it close when this thread ends.
	 */
	if (unshare(CLONE_FILES))
		m->unshared_errno = errno;
	m->st = m->p.flags & F_PROCS ? run_procs(m->c, &m->p, m->other)
		: run_threads(m->c, &m->p, m->other);
	return NULL;
}

static int bench_ctxsw(struct kh_bench_ctx *c)
{
	int flags = (int)kh_arg(c), st, err;
	static struct side m;
	pthread_attr_t attr;
	const char *why;
	cpu_set_t cpus;
	pthread_t th;

	if ((flags & F_FP) && (why = fp_unmet()))
		return kh_skip(c, "%s", why);
	if ((flags & F_VEC) && (why = vec_unmet()))
		return kh_skip(c, "%s", why);
	memset(&m, 0, sizeof(m));
	if ((st = partner_cpu(c, flags, &m.self, &m.other)) != KH_OK)
		return st;
	m.c = c;
	m.p.flags = flags;
	m.p.iters = c->iters;
	/* A yield round and a ping-pong round trip both make two switches:
	 * the measuring side's out, the partner's out. */
	c->switches_per_op = 2;
	set_cpu(&cpus, m.self);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(cpus), &cpus);
	err = pthread_create(&th, &attr, measuring_side, &m);
	pthread_attr_destroy(&attr);
	if (err)
		return kh_fail(c, "cannot create the measuring thread: %s", strerror(err));
	pthread_join(th, NULL);
	return m.st;
}

#define Y M_YIELD
#define P M_PIPE
static const struct kh_bench benches[] = {
	{ "yield-same-cpu", "sched_yield between two threads pinned to one CPU (op: both yield)",
	  bench_ctxsw, 0, Y, NULL },
	{ "yield-same-cpu-fp", "yield-same-cpu, FP registers written after every switch",
	  bench_ctxsw, 0, Y | F_FP, NULL },
	{ "yield-same-cpu-vec", "yield-same-cpu, vector registers written after every switch",
	  bench_ctxsw, 0, Y | F_VEC, NULL },
	{ "pipe-threads-same-cpu", "1-byte pipe round trip between two threads on one CPU",
	  bench_ctxsw, 0, P, NULL },
	{ "pipe-threads-same-cpu-fp", "pipe-threads-same-cpu, FP registers written after every "
	  "switch", bench_ctxsw, 0, P | F_FP, NULL },
	{ "pipe-threads-same-cpu-vec", "pipe-threads-same-cpu, vector registers written after "
	  "every switch", bench_ctxsw, 0, P | F_VEC, NULL },
	{ "pipe-threads-across-cpus", "1-byte pipe round trip between two threads on two CPUs",
	  bench_ctxsw, 0, P | F_ACROSS, NULL },
	{ "pipe-procs-same-cpu", "1-byte pipe round trip between two processes on one CPU",
	  bench_ctxsw, 0, P | F_PROCS, NULL },
	{ "pipe-procs-across-cpus", "1-byte pipe round trip between two processes on two CPUs",
	  bench_ctxsw, 0, P | F_PROCS | F_ACROSS, NULL },
	{ "futex-same-cpu", "futex wake/wait round trip between two threads on one CPU",
	  bench_ctxsw, 0, M_FUTEX, NULL },
	{ "futex-across-cpus", "futex wake/wait round trip between two threads on two CPUs",
	  bench_ctxsw, 0, M_FUTEX | F_ACROSS, NULL },
	{ "eventfd-same-cpu", "eventfd round trip between two threads on one CPU",
	  bench_ctxsw, 0, M_EVENTFD, NULL },
	{ "eventfd-across-cpus", "eventfd round trip between two threads on two CPUs",
	  bench_ctxsw, 0, M_EVENTFD | F_ACROSS, NULL },
	{ NULL, NULL, NULL, 0, 0, NULL },
};
#undef Y
#undef P

/* No perf event open while these run (harness.h, KH_SUITE_NO_PERF_EVENTS). */
const struct kh_suite kh_suite_ctxsw = { "ctxsw", benches, KH_SUITE_NO_PERF_EVENTS };
