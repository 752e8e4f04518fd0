/* SPDX-License-Identifier: MIT */
/*
 * examples/cpu.c - the current CPU, NUMA node and concurrency id.
 *
 *   cc -o cpu cpu.c $(pkg-config --cflags --libs --static kcross)
 *
 * kc_cpu(), kc_node() and kc_cid() read the thread's rseq area: one load.
 * Without rseq (old kernel, qemu-user, a seccomp filter, ...) they fall back
 * to the vDSO's getcpu, then the getcpu system call; the answers are the
 * same, only slower.  kc_rseq_info() says which case this process is in.
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <time.h>

#include <kcross/kcross.h>

int main(void)
{
	struct kc_rseq_info info = kc_rseq_info();
	unsigned int cpu, node;
	struct timespec ts;
	cpu_set_t one;
	int c;

	if (info.active)
		printf("rseq: registered by %s, %u bytes (kernel fills %u)\n",
		       kc_rseq_owner_name(info.owner), info.size, info.feature_size);
	else
		printf("rseq: unavailable (%s): kc_cpu() falls back to getcpu via %s\n",
		       info.why ? info.why : "not registered", kc_getcpu_impl());

	/* Pin to the CPU we are on, so that the answers cannot differ. */
	c = kc_cpu();
	if (c < 0)
		return 1;
	CPU_ZERO(&one);
	CPU_SET(c, &one);
	if (sched_setaffinity(0, sizeof(one), &one) == 0) {
		if (kc_getcpu(&cpu, &node) != 0)
			return 1;
		printf("kc_cpu: %d, kc_getcpu: cpu %u node %u (via %s)\n", kc_cpu(), cpu, node,
		       kc_getcpu_impl());
		if ((unsigned int)kc_cpu() != cpu || (unsigned int)kc_node() != node)
			return 1;
	}
	printf("kc_node: %d, kc_cid: %d\n", kc_node(), kc_cid());
	if (kc_node() < 0 || kc_cid() < 0)
		return 1;

	/* The vDSO clock, with the system call as fallback; 0 or -errno. */
	if (kc_clock_gettime(CLOCK_MONOTONIC, &ts) != 0)
		return 1;
	printf("kc_clock_gettime via %s: %lld.%09ld\n", kc_clock_gettime_impl(),
	       (long long)ts.tv_sec, ts.tv_nsec);
	puts("cpu example: ok");
	return 0;
}
