/* SPDX-License-Identifier: MIT */
/*
 * kcross-profile: the labs' TCG plugin (issue 16), loaded into a counting
 * guest's QEMU by `kcross lab ARCH --profile` / `--trace BENCH`.
 *
 * It counts every executed guest instruction exactly, one inline counter per
 * translated instruction (not per block: a block left early by an exception
 * such as `sc` counts only the instructions that ran), and reports them only
 * inside the windows the guest harness opens and closes around its timed
 * loops (harness/profile.c, KCROSS_PROFILE=1).  The harness calls four
 * marker functions whose entry addresses the lab reads from its symbols and
 * passes here:
 *
 *   sample=ADDR  a benchmark's sample batch begins   (window kind 's')
 *   empty=ADDR   an empty-loop batch begins          (window kind 'e')
 *   close=ADDR   the batch ended
 *   dump=ADDR    the benchmark's windows are all done
 *
 * and kernel=ADDR, the first kernel address (the arch's kernel half), out=PATH
 * the host file written, trace=1 to also record the first sample window's
 * instructions in order (at most tracemax of them).
 *
 * The output, one record a line (python/kcross/lab/profile_data.py reads it):
 *
 *   kcross-profile 1 <target name> api=<min>-<cur>
 *   W <kind> <user> <kernel>       a window closed: its instructions
 *   C <addr> <count>               ... each address it executed, how often
 *   T <addr>                       the traced window's instructions, in order
 *   I <addr> <bytes> <disassembly> an address seen in a window, once (its
 *                                  bytes in hex, in memory order)
 *   D                              the dump marker: one benchmark done
 *   end <windows>                  QEMU exited normally
 *
 * The QEMU plugin API is declared here (Debian installs no qemu-plugin.h):
 * only the functions used, as QEMU 7.2 documents them (API version 1).
 */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------- the QEMU plugin API */
#define KP_EXPORT __attribute__((visibility("default")))
#ifndef KP_API_VERSION
#define KP_API_VERSION 1	/* the API version this plugin is written to */
#endif

typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t {
	const char *target_name;
	struct {
		int min;
		int cur;
	} version;
	bool system_emulation;
	union {
		struct {
			int smp_vcpus;
			int max_vcpus;
		} system;
	};
} qemu_info_t;
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb *tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void *userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void *userdata);

void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb *tb);
struct qemu_plugin_insn *qemu_plugin_tb_get_insn(const struct qemu_plugin_tb *tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn *insn);
const void *qemu_plugin_insn_data(const struct qemu_plugin_insn *insn);
size_t qemu_plugin_insn_size(const struct qemu_plugin_insn *insn);
char *qemu_plugin_insn_disas(const struct qemu_plugin_insn *insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn *insn,
						enum qemu_plugin_op op, void *ptr, uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn *insn,
					    qemu_plugin_vcpu_udata_cb_t cb,
					    enum qemu_plugin_cb_flags flags, void *userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void *userdata);
void qemu_plugin_outs(const char *string);

KP_EXPORT int qemu_plugin_version = KP_API_VERSION;

/* ------------------------------------------------------- the instructions */

/* One translated instruction: its address and bytes (user addresses are
 * shared by /init and the harness, and the kernel patches itself), the inline
 * counter QEMU adds to, and the counter's value when the window opened. */
struct insn {
	uint64_t count;		/* the inline counter: first, 8-aligned */
	uint64_t snap;
	uint64_t vaddr;
	uint8_t bytes[16];
	uint8_t nbytes;
	bool kernel;
	bool shown;		/* its I line is written */
	char *disas;
	struct insn *next;	/* hash chain */
};

#define HASH_BITS 20
static struct insn *table[1u << HASH_BITS];
/* The records, in chunks that never move (QEMU adds to &count): walked in
 * order at every window's start and end. */
#define CHUNK 65536
static struct insn *chunk[4096];
static size_t n_all;
#define EACH(r) for (size_t i_ = 0; i_ < n_all; i_++) \
		for (struct insn *r = &chunk[i_ / CHUNK][i_ % CHUNK]; r; r = NULL)

enum { M_SAMPLE, M_EMPTY, M_CLOSE, M_DUMP, M_COUNT };
static const char *const marker_arg[M_COUNT] = { "sample", "empty", "close", "dump" };
static uint64_t marker[M_COUNT];
static uint64_t kernel_base;
static FILE *out;
static bool trace_on, traced;
static size_t trace_max;	/* tracemax=: kcross.lab.plugin.TRACE_MAX, required with trace=1 */
static struct insn **trace;
static size_t n_trace;
static char window;		/* 0: closed; 's' or 'e': open */
static uint64_t windows;
static bool failed;

static size_t hash(uint64_t vaddr)
{
	return (size_t)((vaddr * 0x9e3779b97f4a7c15ull) >> (64 - HASH_BITS));
}

static struct insn *record(const struct qemu_plugin_insn *qi)
{
	uint64_t vaddr = qemu_plugin_insn_vaddr(qi);
	size_t size = qemu_plugin_insn_size(qi);
	const void *data = qemu_plugin_insn_data(qi);
	size_t n = size < sizeof(((struct insn *)0)->bytes) ? size : sizeof(((struct insn *)0)->bytes);
	struct insn **slot = &table[hash(vaddr)], *r;

	for (r = *slot; r; r = r->next)
		if (r->vaddr == vaddr && r->nbytes == n && !memcmp(r->bytes, data, n))
			return r;
	if (n_all % CHUNK == 0) {
		if (n_all / CHUNK >= sizeof(chunk) / sizeof(chunk[0]) ||
		    !(chunk[n_all / CHUNK] = calloc(CHUNK, sizeof(struct insn))))
			abort();
	}
	r = &chunk[n_all / CHUNK][n_all % CHUNK];
	n_all++;
	r->vaddr = vaddr;
	r->nbytes = (uint8_t)n;
	memcpy(r->bytes, data, n);
	r->kernel = vaddr >= kernel_base;
	r->disas = qemu_plugin_insn_disas(qi);
	r->next = *slot;
	*slot = r;
	return r;
}

static void open_window(char kind)
{
	EACH(r)
		r->snap = r->count;
	window = kind;
	if (trace_on && !traced && kind == 's') {
		n_trace = 0;
		if (!trace && !(trace = malloc(trace_max * sizeof(*trace))))
			abort();
	}
}

static void close_window(void)
{
	uint64_t user = 0, kernel = 0;

	EACH(r)
		if (r->count != r->snap)
			*(r->kernel ? &kernel : &user) += r->count - r->snap;
	fprintf(out, "W %c %" PRIu64 " %" PRIu64 "\n", window, user, kernel);
	EACH(r)
		if (r->count != r->snap)
			fprintf(out, "C %" PRIx64 " %" PRIu64 "\n", r->vaddr, r->count - r->snap);
	if (trace && window == 's' && !traced) {
		for (size_t i = 0; i < n_trace; i++)
			fprintf(out, "T %" PRIx64 "\n", trace[i]->vaddr);
		traced = true;
	}
	windows++;
	window = 0;
}

/* The I lines of the addresses the benchmark's windows ran, not yet shown. */
static void show_new(void)
{
	EACH(r)
		if (!r->shown && r->count != r->snap) {
			r->shown = true;
			fprintf(out, "I %" PRIx64 " ", r->vaddr);
			for (int b = 0; b < r->nbytes; b++)
				fprintf(out, "%02x", r->bytes[b]);
			fprintf(out, " %s\n", r->disas ? r->disas : "?");
		}
}

static void on_marker(unsigned int vcpu, void *data)
{
	int m = (int)(intptr_t)data;

	(void)vcpu;
	if (failed)
		return;
	switch (m) {
	case M_SAMPLE:
	case M_EMPTY:
		if (window)	/* never nested: the harness closes each window */
			close_window();
		open_window(m == M_SAMPLE ? 's' : 'e');
		break;
	case M_CLOSE:
		if (window) {
			/* the window's counts stay in snap..count for show_new */
			close_window();
			show_new();
		}
		break;
	case M_DUMP:
		fputs("D\n", out);
		fflush(out);
		break;
	}
}

static void on_traced(unsigned int vcpu, void *data)
{
	(void)vcpu;
	if (window == 's' && !traced && n_trace < trace_max)
		trace[n_trace++] = data;
}

static void on_translate(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);

	(void)id;
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *qi = qemu_plugin_tb_get_insn(tb, i);
		struct insn *r = record(qi);

		for (int m = 0; m < M_COUNT; m++)
			if (r->vaddr == marker[m])
				qemu_plugin_register_vcpu_insn_exec_cb(qi, on_marker,
								       QEMU_PLUGIN_CB_NO_REGS,
								       (void *)(intptr_t)m);
		if (trace_on)
			qemu_plugin_register_vcpu_insn_exec_cb(qi, on_traced,
							       QEMU_PLUGIN_CB_NO_REGS, r);
		qemu_plugin_register_vcpu_insn_exec_inline(qi, QEMU_PLUGIN_INLINE_ADD_U64,
							   &r->count, 1);
	}
}

static void at_exit(qemu_plugin_id_t id, void *data)
{
	(void)id;
	(void)data;
	if (out) {
		if (!failed)
			fprintf(out, "end %" PRIu64 "\n", windows);
		fclose(out);
		out = NULL;
	}
}

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	*v = strtoull(s, &end, 0);
	return *s && !*end;
}

KP_EXPORT int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t *info, int argc,
				  char **argv)
{
	const char *path = NULL;
	bool have[M_COUNT] = { false }, have_kernel = false;
	char line[300];

	if (info->version.min > KP_API_VERSION || info->version.cur < KP_API_VERSION) {
		snprintf(line, sizeof(line), "kcross-profile: this QEMU offers plugin API "
			 "versions %d to %d; the plugin needs %d\n", info->version.min,
			 info->version.cur, KP_API_VERSION);
		qemu_plugin_outs(line);
		return 1;
	}
	if (!info->system_emulation) {
		qemu_plugin_outs("kcross-profile: needs full-system emulation\n");
		return 1;
	}
	for (int i = 0; i < argc; i++) {
		const char *eq = strchr(argv[i], '=');
		size_t k = eq ? (size_t)(eq - argv[i]) : 0;
		const char *v = eq ? eq + 1 : "";
		uint64_t num;
		bool ok = eq != NULL;

		if (ok && k == 3 && !strncmp(argv[i], "out", 3)) {
			path = v;
		} else if (ok && k == 6 && !strncmp(argv[i], "kernel", 6)) {
			ok = have_kernel = parse_u64(v, &kernel_base);
		} else if (ok && k == 5 && !strncmp(argv[i], "trace", 5)) {
			ok = parse_u64(v, &num) && num <= 1;
			trace_on = num == 1;
		} else if (ok && k == 8 && !strncmp(argv[i], "tracemax", 8)) {
			ok = parse_u64(v, &num) && num > 0;
			trace_max = (size_t)num;
		} else {
			int m;

			for (m = 0; m < M_COUNT; m++)
				if (ok && strlen(marker_arg[m]) == k && !strncmp(argv[i], marker_arg[m], k))
					break;
			ok = m < M_COUNT && parse_u64(v, &marker[m]);
			if (ok)
				have[m] = true;
		}
		if (!ok) {
			snprintf(line, sizeof(line), "kcross-profile: bad argument '%.200s'\n", argv[i]);
			qemu_plugin_outs(line);
			return 1;
		}
	}
	for (int m = 0; m < M_COUNT; m++)
		if (!have[m])
			path = NULL;
	if (!path || !have_kernel) {
		qemu_plugin_outs("kcross-profile: needs out=PATH, kernel=ADDR, sample=, empty=, "
				 "close= and dump= addresses\n");
		return 1;
	}
	if (trace_on && !trace_max) {
		qemu_plugin_outs("kcross-profile: trace=1 needs tracemax=N\n");
		return 1;
	}
	out = fopen(path, "w");
	if (!out) {
		snprintf(line, sizeof(line), "kcross-profile: cannot write %.200s\n", path);
		qemu_plugin_outs(line);
		return 1;
	}
	setvbuf(out, NULL, _IOFBF, 1 << 20);
	fprintf(out, "kcross-profile 1 %s api=%d-%d\n", info->target_name ? info->target_name : "?",
		info->version.min, info->version.cur);
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_translate);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;
}
