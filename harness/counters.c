/* SPDX-License-Identifier: MIT */
/*
 * perf_event_open counters for the measuring thread.
 *
 * Three groups, each read with one read(2): hardware events counted in user
 * mode only (exclude_kernel), the same in kernel mode only (exclude_user), and
 * the software events.  Hardware events are absent on many VMs (this
 * project's own CI runs on one); that is recorded per event with the errno,
 * never treated as zero.  A group whose leader cannot be opened is tried
 * event by event, so one unsupported event does not hide the others.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "harness.h"

const char *const kh_event_names[KH_EV_COUNT] = {
	[KH_EV_CYCLES_U] = "cycles:u",
	[KH_EV_CYCLES_K] = "cycles:k",
	[KH_EV_INSNS_U] = "instructions:u",
	[KH_EV_INSNS_K] = "instructions:k",
	[KH_EV_BRMISS_U] = "branch-misses:u",
	[KH_EV_BRMISS_K] = "branch-misses:k",
	[KH_EV_TASK_CLOCK] = "task-clock",
	[KH_EV_CSW] = "context-switches",
	[KH_EV_MIGRATIONS] = "cpu-migrations",
	[KH_EV_PAGE_FAULTS] = "page-faults",
};

static const struct {
	uint32_t type;
	uint64_t config;
	int group;		/* 0 hw user, 1 hw kernel, 2 software */
} ev_def[KH_EV_COUNT] = {
	[KH_EV_CYCLES_U] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0 },
	[KH_EV_CYCLES_K] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1 },
	[KH_EV_INSNS_U] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0 },
	[KH_EV_INSNS_K] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 1 },
	[KH_EV_BRMISS_U] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 0 },
	[KH_EV_BRMISS_K] = { PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 1 },
	[KH_EV_TASK_CLOCK] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK, 2 },
	[KH_EV_CSW] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES, 2 },
	[KH_EV_MIGRATIONS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS, 2 },
	[KH_EV_PAGE_FAULTS] = { PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 2 },
};

#define READ_FORMAT (PERF_FORMAT_GROUP | PERF_FORMAT_TOTAL_TIME_ENABLED | \
		     PERF_FORMAT_TOTAL_TIME_RUNNING)

static int open_event(enum kh_event e, int group_fd)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = ev_def[e].type;
	a.config = ev_def[e].config;
	a.read_format = READ_FORMAT;
	a.exclude_hv = 1;
	a.exclude_kernel = ev_def[e].group == 0;
	a.exclude_user = ev_def[e].group == 1;
	/* Leaders start enabled; members follow their leader. */
	return (int)syscall(SYS_perf_event_open, &a, 0, -1, group_fd, 0);
}

/* kernel.perf_event_paranoid; false when it cannot be read (no /proc). */
static bool read_paranoid(int *v)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	bool ok;

	if (!f)
		return false;
	ok = fscanf(f, "%d", v) == 1;
	fclose(f);
	return ok;
}

void kh_counters_open(struct kh_counters *c)
{
	int members[3] = { 0, 0, 0 };

	c->suspended = false;
	c->paranoid = 0;
	c->paranoid_known = read_paranoid(&c->paranoid);
	for (int g = 0; g < 3; g++)
		c->group_fd[g] = -1;
	for (int e = 0; e < KH_EV_COUNT; e++) {
		int g = ev_def[e].group;
		int fd = open_event((enum kh_event)e, c->group_fd[g]);

		/* A member the group cannot take (too few hardware counters)
		 * stays unavailable rather than being read at another time
		 * than its siblings. */
		c->fd[e] = fd;
		c->errnum[e] = fd < 0 ? errno : 0;
		c->slot[e] = -1;
		if (fd < 0)
			continue;
		if (c->group_fd[g] < 0)
			c->group_fd[g] = fd;
		c->slot[e] = members[g]++;
	}
}

void kh_counters_close(struct kh_counters *c)
{
	for (int e = 0; e < KH_EV_COUNT; e++)
		if (c->fd[e] >= 0)
			close(c->fd[e]);
}

/* errnum of an event closed by kh_counters_suspend (no errno means this). */
#define KH_SUSPENDED (-1)

void kh_counters_suspend(struct kh_counters *c)
{
	bool any = false;

	for (int e = 0; e < KH_EV_COUNT; e++)
		if (c->fd[e] >= 0) {
			close(c->fd[e]);
			c->fd[e] = -1;
			c->errnum[e] = KH_SUSPENDED;
			c->slot[e] = -1;
			any = true;
		}
	for (int g = 0; g < 3; g++)
		c->group_fd[g] = -1;
	c->suspended = true;
	if (any) {
		struct timespec ts = { KH_PERF_KEY_DELAY_MS / 1000,
				       (KH_PERF_KEY_DELAY_MS % 1000) * 1000000L };

		while (nanosleep(&ts, &ts) && errno == EINTR)
			;
	}
}

void kh_counters_resume(struct kh_counters *c)
{
	if (c->suspended)
		kh_counters_open(c);
}

bool kh_counter_available(const struct kh_counters *c, enum kh_event e)
{
	return c->fd[e] >= 0;
}

const char *kh_counter_reason(const struct kh_counters *c, enum kh_event e)
{
	switch (c->errnum[e]) {
	case 0:
		return NULL;
	case KH_SUSPENDED:
		return "closed while this benchmark ran: any perf event on the system slows every "
		       "context switch (the kernel's perf sched hooks)";
	case ENOENT:
	case EOPNOTSUPP:
		return ev_def[e].type == PERF_TYPE_HARDWARE
			? "not supported by this CPU or hypervisor (no PMU exposed)"
			: "event not supported by this kernel";
	case EACCES:
	case EPERM:
		return "not permitted (perf_event_paranoid or missing CAP_PERFMON)";
	case ENOSYS:
		return "perf_event_open not available (kernel config or seccomp)";
	case ENODEV:
		return "no PMU for this event";
	case EINVAL:
		return "rejected by the kernel (EINVAL)";
	default:
		return strerror(c->errnum[e]);
	}
}

void kh_counters_read(const struct kh_counters *c, struct kh_snapshot *s)
{
	/* nr, time_enabled, time_running, then one value per member. */
	uint64_t buf[3 + KH_EV_COUNT];

	for (int g = 0; g < 3; g++) {
		if (c->group_fd[g] < 0)
			continue;
		if (read(c->group_fd[g], buf, sizeof(buf)) < (ssize_t)(3 * sizeof(uint64_t)))
			continue;
		for (int e = 0; e < KH_EV_COUNT; e++) {
			if (c->fd[e] < 0 || ev_def[e].group != g || (uint64_t)c->slot[e] >= buf[0])
				continue;
			s->value[e] = buf[3 + c->slot[e]];
			s->enabled[e] = buf[1];
			s->running[e] = buf[2];
		}
	}
}
