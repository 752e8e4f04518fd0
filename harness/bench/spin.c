/* SPDX-License-Identifier: MIT */
/*
 * The spin suite: what a spin-wait hint costs, and what it leaves to the
 * other hardware thread of the same core.
 *
 *   hint-NAME      one hint per operation, back to back, on the measuring
 *                  CPU: x86 pause; aarch64 yield, isb, sevl+wfe; ppc64 the
 *                  priority nops or 27,27,27 (yield), or 1,1,1 (low),
 *                  or 31,31,31 (very low), or 2,2,2 (medium, the default).
 *   sibling-NAME   a counting loop's iterations per second (the throughput
 *                  field; one operation is one iteration) while the SMT
 *                  sibling of its CPU spins with that hint; sibling-plain:
 *                  while the sibling spins with no hint at all.  The
 *                  counting loop runs in the harness's measuring thread, so
 *                  its timer and counters see it, and the spinner on the
 *                  sibling: SMT siblings are symmetric, so this is "a busy
 *                  sibling while the measuring CPU spins" with the roles'
 *                  CPUs exchanged.  Skipped, saying so, where the CPU has
 *                  no SMT sibling this process may use.
 *
 * Each arch lists its own hints (SPIN_HINTS); the rows, the timed loops and
 * the spinners follow from that list, so another arch's hints are not rows
 * here at all.  The ppc64 priority hints change the thread's priority until
 * another one does: each loop that used one ends with or 2,2,2 (medium),
 * outside the timing.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/bench.h"

/*
 * This arch's hints as X(id, "name", "as the summary shows it", "asm")
 * entries, and what undoes a hint's lasting effect (SPIN_RESTORE).  Each use
 * expands one loop per hint, so every timed loop holds one asm statement and
 * nothing else.
 */
#if defined(KC_ARCH_X86_64)
# define SPIN_HINTS X(H_PAUSE, "pause", "pause", "pause")
# define SPIN_RESTORE ""
#elif defined(KC_ARCH_AARCH64)
# define SPIN_HINTS X(H_YIELD, "yield", "yield", "yield")			\
		    X(H_ISB, "isb", "isb", "isb")				\
		    X(H_SEVL_WFE, "sevl-wfe", "sevl; wfe", "sevl\n\twfe")
# define SPIN_RESTORE ""
#elif defined(KC_ARCH_PPC64LE)
# define SPIN_HINTS X(H_OR27, "or27", "or 27,27,27", "or 27,27,27")	\
		    X(H_OR1, "or1", "or 1,1,1", "or 1,1,1")			\
		    X(H_OR31, "or31", "or 31,31,31", "or 31,31,31")		\
		    X(H_OR2, "or2", "or 2,2,2", "or 2,2,2")
# define SPIN_RESTORE "or 2,2,2"
#endif

enum hint {
	H_NONE,
#define X(id, name, text, insn) id,
	SPIN_HINTS
#undef X
	H_COUNT
};

/* Each hint as the summaries and messages show it. */
static const char *const hint_text[H_COUNT] = {
	[H_NONE] = "(no hint)",
#define X(id, name, text, insn) [id] = text,
	SPIN_HINTS
#undef X
};

static void spin_restore(void)
{
	__asm__ __volatile__(SPIN_RESTORE ::: "memory");
}

/* ----------------------------------------------------------- hint cost */

static int bench_hint(struct kh_bench_ctx *c)
{
	enum hint h = (enum hint)kh_arg(c);

	switch (h) {
#define X(id, name, text, insn) \
	case id: KH_LOOP(c, __asm__ __volatile__(insn ::: "memory")); break;
	SPIN_HINTS
#undef X
	default:
		return kh_fail(c, "hint %d has no loop on %s", (int)h, KC_ARCH_NAME);
	}
	spin_restore();
	return KH_OK;
}

/* -------------------------------------------------- sibling throughput */

/*
 * The first CPU of `list` (thread_siblings_list's format: "0-1", "0,4",
 * "0-3,8-11") other than `cpu` and in `allowed`; -1 with why not.
 */
static int sibling_in_list(int cpu, const char *list, const cpu_set_t *allowed, char *why,
			   size_t len)
{
	bool others = false;

	for (const char *p = list; *p;) {
		char *end;
		long lo = strtol(p, &end, 10), hi = lo;

		if (end == p)
			break;
		if (*end == '-')
			hi = strtol(end + 1, &end, 10);
		for (long s = lo; s <= hi && s < CPU_SETSIZE; s++) {
			if (s == cpu)
				continue;
			if (CPU_ISSET(s, allowed))
				return (int)s;
			others = true;
		}
		if (*end != ',')
			break;
		p = end + 1;
	}
	if (others)
		snprintf(why, len, "CPU %d's SMT sibling(s) (%s) are outside this process's "
			 "CPU set", cpu, list);
	else
		snprintf(why, len, "CPU %d has no SMT sibling (thread_siblings_list: %s)", cpu,
			 list[0] ? list : "empty");
	return -1;
}

/* The SMT sibling of `cpu` this process may use, or -1 with why not. */
static int smt_sibling(int cpu, char *why, size_t len)
{
	char path[96], list[256];
	FILE *f;

	snprintf(path, sizeof(path),
		 "/sys/devices/system/cpu/cpu%d/topology/thread_siblings_list", cpu);
	if (!(f = fopen(path, "r"))) {
		snprintf(why, len, "cannot read %s (%s): SMT siblings unknown", path,
			 strerror(errno));
		return -1;
	}
	if (!fgets(list, sizeof(list), f))
		list[0] = 0;
	fclose(f);
	list[strcspn(list, "\n")] = 0;
	return sibling_in_list(cpu, list, kh_allowed_cpus(), why, len);
}

struct spinner {
	enum hint h;
	int cpu;
	int ready, stop;
	pthread_t th;
};

static void *spinner_main(void *arg)
{
	struct spinner *s = arg;

	__atomic_store_n(&s->ready, 1, __ATOMIC_RELEASE);
	switch (s->h) {
#define X(id, name, text, insn)						\
	case id:							\
		while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))	\
			__asm__ __volatile__(insn ::: "memory");	\
		break;
	SPIN_HINTS
#undef X
	default:	/* H_NONE: the plain loop */
		while (!__atomic_load_n(&s->stop, __ATOMIC_RELAXED))
			;
	}
	spin_restore();
	return NULL;
}

/* The counting loop on this thread while a spinner with hint h runs on
 * CPU `sibling` (tests call it with any CPU). */
static int sibling_run(struct kh_bench_ctx *c, enum hint h, int sibling)
{
	struct spinner s = { .h = h, .cpu = sibling };
	pthread_attr_t attr;
	cpu_set_t one;
	uint64_t x = 0;
	int err;

	CPU_ZERO(&one);
	CPU_SET(s.cpu, &one);
	pthread_attr_init(&attr);
	pthread_attr_setaffinity_np(&attr, sizeof(one), &one);
	err = pthread_create(&s.th, &attr, spinner_main, &s);
	pthread_attr_destroy(&attr);
	if (err)
		return kh_fail(c, "cannot start the spinner (%s) on CPU %d: %s", hint_text[h],
			       s.cpu, strerror(err));
	while (!__atomic_load_n(&s.ready, __ATOMIC_ACQUIRE))
		sched_yield();
	/* The counting loop: one dependent add per iteration (on POWER the
	 * loop itself is GCC's mtctr/bdnz). */
	KH_LOOP(c, __asm__ __volatile__("" : "+r"(x)); x++);
	__atomic_store_n(&s.stop, 1, __ATOMIC_RELAXED);
	pthread_join(s.th, NULL);
	if (x != c->iters)
		return kh_fail(c, "the counting loop counted %llu in %llu iterations",
			       (unsigned long long)x, (unsigned long long)c->iters);
	return KH_OK;
}

static int bench_sibling(struct kh_bench_ctx *c)
{
	enum hint h = (enum hint)kh_arg(c);
	int cpu = sched_getcpu(), sibling;
	char why[400];

	if (cpu < 0)
		return kh_skip(c, "sched_getcpu: %s: the measuring CPU is unknown",
			       strerror(errno));
	if ((sibling = smt_sibling(cpu, why, sizeof(why))) < 0)
		return kh_skip(c, "%s", why);
	return sibling_run(c, h, sibling);
}

/* This arch's rows: hint-NAME for each of its hints, then sibling-plain and
 * sibling-NAME for each. */
static const struct kh_bench benches[] = {
#define X(id, name, text, insn) \
	{ "hint-" name, "one `" text "`, back to back (per hint executed)", bench_hint, 0, id, NULL },
	SPIN_HINTS
#undef X
	{ "sibling-plain", "counting-loop iterations/s while the SMT sibling spins with no hint",
	  bench_sibling, 0, H_NONE, NULL },
#define X(id, name, text, insn) \
	{ "sibling-" name, "counting-loop iterations/s while the SMT sibling spins with `" text \
	  "`", bench_sibling, 0, id, NULL },
	SPIN_HINTS
#undef X
	{ NULL, NULL, NULL, 0, 0, NULL },
};

const struct kh_suite kh_suite_spin = { "spin", benches, 0 };
