/* SPDX-License-Identifier: MIT */
/*
 * A seccomp filter that answers rseq(2) with ENOSYS and allows everything
 * else, for the calling thread and the threads it creates from now on: how
 * the tests reproduce a sandbox (or a kernel) without rseq.  Call it before
 * kcross's priority-101 constructor registers, i.e. from a constructor of
 * priority 100.  Returns 0 or -errno.
 */
#ifndef KCROSS_TESTS_REFUSE_RSEQ_H
#define KCROSS_TESTS_REFUSE_RSEQ_H

#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static inline int refuse_rseq(void)
{
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_rseq, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { .len = sizeof(f) / sizeof(f[0]), .filter = f };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0))
		return -errno;
	return syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) ? -errno : 0;
}

#endif
