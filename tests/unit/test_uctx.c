/* SPDX-License-Identifier: MIT */
/*
 * The uctx and spin suites run (each row once, briefly, outside the
 * method): every row is ok or skipped with its reason, never failed, and
 * the rows that must run here do:
 *
 *   uctx/floor, floor-ret, swapcontext   ok (B ran once per round trip)
 *   uctx/boost-fcontext   ok when CMake found libboost-context-dev
 *                         (KCROSS_HAVE_BOOST_CONTEXT), else skipped saying
 *                         "built without libboost-context-dev"; and a second
 *                         copy of bench/uctx.c compiled here without the
 *                         macro skips it so, whatever this build found
 *   uctx/kc_ctx, kc_ctx-shared-fpenv, kc_sched-yield   ok when <kcross/ctx.h>
 *                         is there, else skipped "kc_ctx not built in"
 *   spin/hint-*           this arch's hints only (others' are no rows), ok
 *   spin/sibling-*        the same hints and plain, ok or skipped naming
 *                         the missing SMT sibling
 */
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "harness.h"

#if KCROSS_HAVE_BOOST_CONTEXT
# define BUILT_WITH_BOOST 1
#else
# define BUILT_WITH_BOOST 0
#endif
#if __has_include(<kcross/ctx.h>)
# define BUILT_WITH_KC_CTX 1
#else
# define BUILT_WITH_KC_CTX 0
#endif

/* bench/uctx.c again, as a build without Boost.Context compiles it. */
#undef KCROSS_HAVE_BOOST_CONTEXT
#define kh_suite_uctx test_suite_uctx_without_boost
#include "bench/uctx.c"
#undef kh_suite_uctx

#define ITERS 1000

static struct kh_timer timer;
static struct kh_counters counters;
static struct kh_timing timing;

/* Run row b once with ITERS iterations; *reason gets a copy of its reason. */
static int run_row(const struct kh_bench *b, char *reason, size_t len)
{
	struct kh_bench_ctx *c = malloc(sizeof(*c));	/* large: thread_cpu[] */
	int st;

	if (!c) {
		tap_ok(0, "out of memory");
		exit(1);
	}
	kh_bench_ctx_init(c, &timing, &timer, &counters, b->arg, 0);
	kh_bench_ctx_batch(c, ITERS, false);
	st = b->fn(c);
	snprintf(reason, len, "%s", c->reason);
	free(c);
	return st;
}

static const char *status_name(int st)
{
	return st == KH_OK ? "ok" : st == KH_SKIP ? "skipped" : "failed";
}

/* Row must be ok (want_ok) or skipped with a reason containing `skip`. */
static void expect(const char *label, const struct kh_bench *b, bool want_ok, const char *skip)
{
	char reason[200];
	int st = run_row(b, reason, sizeof(reason));

	if (want_ok)
		tap_ok(st == KH_OK, "%s: ok (got %s%s%s)", label, status_name(st),
		       reason[0] ? ": " : "", reason);
	else
		tap_ok(st == KH_SKIP && strstr(reason, skip), "%s: skipped, \"%s\" (got %s: %s)",
		       label, skip, status_name(st), reason);
}

/* Which arch each spin row's hint belongs to, written out again here as the
 * ISA manuals give them. */
static const struct {
	const char *hint, *arch;
} arch_of[] = {
	{ "pause", "x86_64" },
	{ "yield", "aarch64" }, { "isb", "aarch64" }, { "sevl-wfe", "aarch64" },
	{ "or27", "ppc64le" }, { "or1", "ppc64le" }, { "or31", "ppc64le" },
	{ "or2", "ppc64le" },
};

/* How many hints this arch has. */
static int hints_here(void)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(arch_of) / sizeof(arch_of[0]); i++)
		n += !strcmp(arch_of[i].arch, KC_ARCH_NAME);
	return n;
}

/* The arch of a spin row's hint (NULL: none, the plain loop). */
static const char *hint_arch(const char *hint)
{
	for (size_t i = 0; i < sizeof(arch_of) / sizeof(arch_of[0]); i++)
		if (!strcmp(arch_of[i].hint, hint))
			return arch_of[i].arch;
	if (strcmp(hint, "plain"))
		tap_ok(0, "spin row with an unknown hint %s", hint);
	return NULL;
}

/* A sibling row of this arch: ok where the CPU has an SMT sibling, else
 * skipped saying so (which of the two is up to the machine). */
static void sibling_row(const char *label, const struct kh_bench *b)
{
	char reason[200];
	int st = run_row(b, reason, sizeof(reason));

	if (st == KH_SKIP)
		tap_ok(strstr(reason, "SMT sibling") != NULL, "%s: skipped naming the SMT sibling "
		       "(%s)", label, reason);
	else
		tap_ok(st == KH_OK, "%s: ok with an SMT sibling (got %s: %s)", label,
		       status_name(st), reason);
}

static const struct kh_bench *row(const struct kh_bench *rows, const char *suite,
				  const char *name)
{
	for (const struct kh_bench *b = rows; b->name; b++)
		if ((!b->suite || !strcmp(b->suite, suite)) && !strcmp(b->name, name))
			return b;
	return NULL;
}

int main(void)
{
	const struct kh_bench *all = kh_registry(), *b;
	int uctx = 0, spin = 0;
	char label[96];

	if (kh_pin_cpu(-1) < 0)
		tap_diag("cannot pin; the rows run unpinned");
	kh_timer_init(&timer, 5);
	kh_counters_open(&counters);

	for (b = all; b->name; b++) {
		bool is_uctx = !strcmp(b->suite, "uctx"), is_spin = !strcmp(b->suite, "spin");
		bool ok;
		const char *skip = "";

		if (!is_uctx && !is_spin)
			continue;
		uctx += is_uctx;
		spin += is_spin;
		snprintf(label, sizeof(label), "%s/%s", b->suite, b->name);
		if (is_uctx && !strcmp(b->name, "boost-fcontext")) {
			ok = BUILT_WITH_BOOST;
			skip = "built without libboost-context-dev";
		} else if (is_uctx && !strncmp(b->name, "kc_", 3)) {
			ok = BUILT_WITH_KC_CTX;
			skip = "kc_ctx not built in";
		} else if (is_uctx) {
			ok = true;
		} else {
			const char *arch = hint_arch(strchr(b->name, '-') + 1);

			if (!tap_ok(!arch || !strcmp(arch, KC_ARCH_NAME), "%s: %s%s (this is %s)",
				    label, arch ? "a hint of " : "no hint", arch ? arch : "",
				    KC_ARCH_NAME))
				continue;
			if (!strncmp(b->name, "sibling-", 8)) {
				sibling_row(label, b);
				continue;
			}
			ok = true;
		}
		expect(label, b, ok, skip);
	}
	tap_ok(uctx == 7, "the uctx suite has its 7 rows (%d)", uctx);
	tap_ok(spin == 1 + 2 * hints_here(), "the spin suite has its %d rows here: hint and "
	       "sibling rows of %d hints, sibling-plain (%d)", 1 + 2 * hints_here(),
	       hints_here(), spin);

	/* The copy compiled without KCROSS_HAVE_BOOST_CONTEXT. */
	b = row(test_suite_uctx_without_boost.benches, "uctx", "boost-fcontext");
	tap_ok(b != NULL, "the Boost row is listed in a build without Boost.Context too");
	if (b)
		expect("uctx/boost-fcontext built without the library", b, false,
		       "built without libboost-context-dev (apt-get install libboost-context-dev)");
	if ((b = row(test_suite_uctx_without_boost.benches, "uctx", "floor")))
		expect("uctx/floor in that build", b, true, "");
	tap_diag("this build: Boost.Context %s, <kcross/ctx.h> %s",
		 BUILT_WITH_BOOST ? "found" : "not found", BUILT_WITH_KC_CTX ? "found" : "absent");
	kh_counters_close(&counters);
	return tap_done();
}
