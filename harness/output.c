/* SPDX-License-Identifier: MIT */
/*
 * Output of results: the JSON `result` record (docs/result-format.md) and
 * the readable text table line.  The record carries the raw samples and the
 * empty loop's samples; the table line summarises them by the statistics
 * rule (stats.c), as kcross does.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "stats.h"

void kh_result_flag(struct kh_result *r, const char *flag, const char *fmt, ...)
{
	va_list ap;

	if (r->n_flags >= KH_MAX_FLAGS)
		return;
	r->flags[r->n_flags].flag = flag;
	va_start(ap, fmt);
	vsnprintf(r->flags[r->n_flags].detail, sizeof(r->flags[0].detail), fmt, ap);
	va_end(ap);
	r->n_flags++;
}

static void write_flags(struct kh_json *j, const struct kh_result *r)
{
	kh_json_arr(j, "flags");
	for (int i = 0; i < r->n_flags; i++) {
		kh_json_obj(j, NULL);
		kh_json_str(j, "flag", r->flags[i].flag);
		kh_json_str(j, "detail", r->flags[i].detail);
		kh_json_obj_end(j);
	}
	kh_json_arr_end(j);
}

static void kh_result_write_extra(struct kh_json *j, const struct kh_result *r)
{
	bool ok = r->status == KH_OK && r->thread_cpu;
	double ops = (double)r->iters * r->n * r->threads;

	if (ok)
		kh_json_int(j, "threads", r->threads);
	else
		kh_json_null(j, "threads");
	kh_json_arr(j, "thread_cpus");
	for (int i = 0; ok && i < r->threads; i++) {
		if (r->thread_cpu[i] >= 0)
			kh_json_int(j, NULL, r->thread_cpu[i]);
		else
			kh_json_null(j, NULL);
	}
	kh_json_arr_end(j);
	kh_json_num(j, "throughput_ops_per_s", ok ? r->throughput : NAN);
	kh_json_num(j, "aborts_per_million",
		    ok && r->counts_aborts && ops > 0 ? (double)r->aborts * 1e6 / ops : NAN);
	/* Per iteration of one thread (the op), as samples are. */
	kh_json_num(j, "switches_per_op", ok && r->switches_per_op > 0 ? r->switches_per_op : NAN);
	kh_json_num(j, "switches_counted_per_op",
		    ok && r->counts_switches && r->iters && r->n
		    ? (double)r->switches / ((double)r->iters * r->n) : NAN);
}

static const char *kh_result_text_extra(const struct kh_result *r, double median)
{
	static char buf[240];
	double ops = (double)r->iters * r->n * r->threads;
	size_t off = 0;

	buf[0] = 0;
	if (r->status != KH_OK || !r->thread_cpu)
		return buf;
	if (r->threads > 1) {
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " [%d threads on", r->threads);
		for (int i = 0; i < r->threads && off < sizeof(buf) - 40; i++)
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, "%s%d",
						i ? "," : " ", r->thread_cpu[i]);
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, ", %.4g Mops/s]",
					r->throughput * 1e-6);
	}
	if (r->counts_aborts && off < sizeof(buf))
		off += (size_t)snprintf(buf + off, sizeof(buf) - off, " [aborts %.3g/M ops]",
					ops > 0 ? (double)r->aborts * 1e6 / ops : 0.0);
	if (r->switches_per_op > 0 && off < sizeof(buf)) {
		off += (size_t)snprintf(buf + off, sizeof(buf) - off,
					" [%.2f ns/switch, %.3g switches/op", median / r->switches_per_op,
					r->switches_per_op);
		if (r->counts_switches && r->iters && r->n && off < sizeof(buf))
			off += (size_t)snprintf(buf + off, sizeof(buf) - off, ", counted %.3g",
						(double)r->switches / ((double)r->iters * r->n));
		if (off < sizeof(buf))
			snprintf(buf + off, sizeof(buf) - off, "]");
	}
	return buf;
}

static void write_numbers(struct kh_json *j, const char *key, const double *v, int n)
{
	kh_json_arr(j, key);
	for (int s = 0; v && s < n; s++)
		kh_json_num(j, NULL, v[s]);
	kh_json_arr_end(j);
}

void kh_record_begin(struct kh_json *j, const char *type)
{
	kh_json_begin(j, stdout);
	kh_json_str(j, "type", type);
	kh_json_int(j, "schema", KH_RESULT_SCHEMA);
}

void kh_result_emit_json(const struct kh_bench *b, const struct kh_result *r,
			const struct kh_timer *t, const struct kh_counters *ctr)
{
	static const char *const status[] = { "ok", "skipped", "failed" };
	uint64_t ops = r->iters * (uint64_t)r->n;
	bool ok = r->status == KH_OK;
	struct kh_json j;

	kh_record_begin(&j, "result");
	kh_json_str(&j, "suite", b->suite);
	kh_json_str(&j, "name", b->name);
	kh_json_str(&j, "summary", b->summary);
	kh_json_str(&j, "status", status[r->status]);
	kh_json_str(&j, "reason", r->status == KH_OK ? NULL : r->reason);
	kh_json_str(&j, "unit", "ns/op");
	if (r->cpu >= 0)
		kh_json_int(&j, "cpu", r->cpu);
	else
		kh_json_null(&j, "cpu");
	kh_json_uint(&j, "iters", r->iters);
	/* Raw figures, never corrected: the reader applies the rule. */
	write_numbers(&j, "samples", ok ? r->ns : NULL, r->n);
	write_numbers(&j, "ticks", ok ? r->ticks : NULL, r->n);
	if (ok && r->oh_ns && r->oh_ticks) {
		kh_json_obj(&j, "overhead");
		write_numbers(&j, "samples", r->oh_ns, r->n);
		write_numbers(&j, "ticks", r->oh_ticks, r->n);
		kh_json_obj_end(&j);
	} else {
		kh_json_null(&j, "overhead");
	}
	kh_json_obj(&j, "counters");
	for (int e = 0; r->status == KH_OK && e < KH_EV_COUNT; e++) {
		if (!kh_counter_available(ctr, e))
			continue;
		kh_json_obj(&j, kh_event_names[e]);
		kh_json_uint(&j, "total", r->counter_total[e]);
		kh_json_num(&j, "per_op", ops ? (double)r->counter_total[e] / (double)ops : NAN);
		kh_json_bool(&j, "scaled", r->counter_scaled[e]);
		kh_json_obj_end(&j);
	}
	kh_json_obj_end(&j);
	kh_json_obj(&j, "counters_unavailable");
	for (int e = 0; e < KH_EV_COUNT; e++)
		if (!kh_counter_available(ctr, e))
			kh_json_str(&j, kh_event_names[e], kh_counter_reason(ctr, e));
	kh_json_obj_end(&j);
	kh_json_arr(&j, "disturbed");
	for (int i = 0; i < r->n_disturbed; i++)
		kh_json_int(&j, NULL, r->disturbed[i]);
	kh_json_arr_end(&j);
	kh_json_str(&j, "mechanism", kc_sysmech_name(kc_syscall_mechanism()));
	kh_json_str(&j, "timer", t->source);
	kh_json_num(&j, "elapsed_s", r->elapsed_s);
	kh_result_write_extra(&j, r);
	write_flags(&j, r);
	kh_json_end(&j);
}

/*
 * One row of the table: the median (marked '*' when the empty loop was
 * subtracted), the 95% CI of the median, the minimum, the spread (IQR /
 * median), n and the disturbed samples, all by the statistics rule; then
 * multi-thread and rseq extras, and one line per flag.  The columns are
 * named by the header in main.c.
 */
void kh_result_print_text(const struct kh_bench *b, const struct kh_result *r,
			 const struct kh_timer *t)
{
	struct kh_summary s;
	char ci[48] = "-", spread[16] = "-";

	if (r->status != KH_OK) {
		printf("%-24s %s: %s\n", b->name, r->status == KH_SKIP ? "skipped" : "FAILED",
		       r->reason);
		fflush(stdout);
		return;
	}
	if (kh_summarize(r->ns, r->n, r->oh_ns, r->oh_ns ? r->n : 0, &s)) {
		printf("%-24s (out of memory for its summary)\n", b->name);
		fflush(stdout);
		return;
	}
	if (s.ci_low_rank)
		snprintf(ci, sizeof(ci), "%.2f-%.2f", s.ci_low, s.ci_high);
	if (isfinite(s.spread))
		snprintf(spread, sizeof(spread), "%.1f%%", 100 * s.spread);
	printf("%-24s %11.2f%c %19s %10.2f %7s %6d %5d%s\n", b->name, s.median,
	       s.overhead == KH_OVERHEAD_SUBTRACTED ? '*' : ' ', ci, s.min, spread,
	       r->n, r->n_disturbed, kh_result_text_extra(r, s.median));
	for (int i = 0; i < r->n_flags; i++)
		printf("%-24s   flag %s: %s\n", "", r->flags[i].flag, r->flags[i].detail);
	fflush(stdout);
	(void)t;
}

/*
 * --result-lines UNIT: after each result, one line for a reader that matches lines with
 * a regular expression instead of parsing JSON (a LAVA "monitors" test action):
 *
 *   kcross-result: SUITE/NAME pass MEDIAN UNIT
 *   kcross-result: SUITE/NAME skip          (fail: the check failed; unknown: no figure)
 *
 * MEDIAN is the statistics rule's, computed from the figures as the JSON record writes
 * them (each read back from its printed form), so it is the figure a reader of the record
 * computes (kcross stores it), to the last printed digit.  UNIT names what the figures
 * are (the harness measures ns/op; in a counting lab's guest those are instructions).
 */
void kh_result_print_line(const struct kh_bench *b, const struct kh_result *r, const char *unit)
{
	struct kh_summary s;
	double *x = NULL, *o = NULL;
	const char *result = r->status == KH_SKIP ? "skip" : "fail";
	bool have = false;

	if (r->status == KH_OK && r->n > 0 && r->oh_ns) {
		x = malloc((size_t)r->n * sizeof(*x));
		o = malloc((size_t)r->n * sizeof(*o));
		if (x && o) {
			for (int i = 0; i < r->n; i++) {
				x[i] = kh_json_num_as_written(r->ns[i]);
				o[i] = kh_json_num_as_written(r->oh_ns[i]);
			}
			have = kh_summarize(x, r->n, o, r->n, &s) == 0 && isfinite(s.median);
		}
	}
	if (r->status == KH_OK)
		result = have ? "pass" : "unknown";
	if (have)
		printf("kcross-result: %s/%s %s %.10g %s\n", b->suite, b->name, result, s.median, unit);
	else
		printf("kcross-result: %s/%s %s\n", b->suite, b->name, result);
	fflush(stdout);
	free(x);
	free(o);
}
