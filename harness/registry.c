/* SPDX-License-Identifier: MIT */
/*
 * The registry joins the suites into the one list that `list` and `run`
 * walk.  Each bench/NAME.c defines its suite (name, rows) beside its
 * benchmarks; this file only names the suites, in the order they run.
 */
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "bench/bench.h"
#include "bench/cpuid_methods.h"

extern const struct kh_suite kh_suite_syscall, kh_suite_cpuid, kh_suite_percpu,
	kh_suite_percpu_scaling, kh_suite_ctxsw, kh_suite_uctx, kh_suite_spin;

static const struct kh_suite *const suites[] = {
	&kh_suite_syscall,
	&kh_suite_cpuid,
	&kh_suite_percpu,
	&kh_suite_percpu_scaling,
	&kh_suite_ctxsw,
	&kh_suite_uctx,
	&kh_suite_spin,
};

const struct kh_bench *kh_registry(void)
{
	static struct kh_bench *all;
	size_t n = 0, k = 0;

	if (all)
		return all;
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		for (const struct kh_bench *b = suites[i]->benches; b->name; b++)
			n++;
	all = calloc(n + 1, sizeof(*all));
	if (!all) {
		fputs("kcross-harness: out of memory for the benchmark list\n", stderr);
		exit(2);
	}
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		for (const struct kh_bench *b = suites[i]->benches; b->name; b++) {
			all[k] = *b;
			all[k++].suite = suites[i]->name;
		}
	return all;
}

unsigned int kh_bench_suite_flags(const struct kh_bench *b)
{
	for (size_t i = 0; i < sizeof(suites) / sizeof(suites[0]); i++)
		if (b->suite == suites[i]->name)
			return suites[i]->flags;
	return 0;
}

bool kh_bench_matches(const struct kh_bench *b, const char *glob)
{
	char full[160];

	snprintf(full, sizeof(full), "%s/%s", b->suite, b->name);
	return !fnmatch(glob, b->name, 0) || !fnmatch(glob, full, 0);
}

static const char *need_vdso(const char *sym)
{
	if (!kc_vdso_self())
		return "no usable vDSO in this process (AT_SYSINFO_EHDR absent or unparsable)";
	if (!sym || !kc_vdso_sym(sym))
		return "the vDSO does not export this function";
	return NULL;
}

static const char *unmet_clock_gettime(void)
{
	return need_vdso(KC_VDSO_CLOCK_GETTIME);
}

static const char *unmet_getcpu(void)
{
#ifdef KC_VDSO_GETCPU
	return need_vdso(KC_VDSO_GETCPU);
#else
	return "this architecture's vDSO exports no getcpu";
#endif
}

static const char *unmet_devices(void)
{
	if (access("/dev/zero", R_OK) || access("/dev/null", R_OK | W_OK))
		return "/dev/zero or /dev/null missing (mount devtmpfs)";
	return NULL;
}

static const char *unmet_rseq(void)
{
	return kh_cm_unmet_rseq();
}

static const char *unmet_rdpid(void)
{
	return kh_cm_unmet_rdpid();
}

static const char *unmet_rdtscp(void)
{
	return kh_cm_unmet_rdtscp();
}

static const char *unmet_cpunode(void)
{
	return kh_cm_unmet_lsl();
}

static const struct {
	unsigned int bit;
	const char *name;
	const char *(*unmet)(void);
} needs[] = {
	{ KH_NEED_VDSO_CLOCK_GETTIME, "vdso-clock_gettime", unmet_clock_gettime },
	{ KH_NEED_VDSO_GETCPU, "vdso-getcpu", unmet_getcpu },
	{ KH_NEED_IA32_EMULATION, "ia32-emulation", kh_probe_ia32 },
	{ KH_NEED_DEV_NULL_ZERO, "dev-null-zero", unmet_devices },
	{ KH_NEED_RSEQ, "rseq", unmet_rseq },
	{ KH_NEED_RDPID, "rdpid", unmet_rdpid },
	{ KH_NEED_RDTSCP, "rdtscp", unmet_rdtscp },
	{ KH_NEED_X86_CPUNODE, "x86-cpunode-segment", unmet_cpunode },
};

const char *kh_bench_unmet(const struct kh_bench *b)
{
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++) {
		const char *why;

		if ((b->needs & needs[i].bit) && (why = needs[i].unmet()))
			return why;
	}
	return NULL;
}

const char *kh_need_names(unsigned int bits, char *buf, size_t len)
{
	size_t off = 0;

	buf[0] = 0;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (bits & needs[i].bit && off < len)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? "," : "", needs[i].name);
	return buf;
}
