/* SPDX-License-Identifier: MIT */
/*
 * kcross-harness: runs the registered benchmarks and prints a readable table,
 * or JSON lines (--json, docs/result-format.md) for the kcross command.
 * It is self-contained (links statically) so that it runs alone on a board
 * or in a test kernel's initramfs; `kcross import` stores its output later.
 */
#include <errno.h>
#include <getopt.h>
#include <sched.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "stats.h"

#define KH__STR(x) #x
#define KH_STR(x) KH__STR(x)

#if KC_HAVE_SYSCALL_ALT
# define KC__ALT_USAGE "|" KC_SYSMECH_ALT_NAME
#else
# define KC__ALT_USAGE ""
#endif

static const char usage[] =
	"usage: kcross-harness list [--suite S[,S...]] [--bench GLOB] [--json]\n"
	"       kcross-harness run [--suite S[,S...]] [--bench GLOB] [--samples N] [--quick]\n"
	"                          [--cpu C] [--min-batch-ms MS] [--warmup-ms MS] [--interleave]\n"
	"                          [--batch-multiple K] [--result-lines UNIT]\n"
	"                          [--json]\n"
	"       kcross-harness sysinfo [--json]\n"
	"       kcross-harness summarize [--json] SAMPLES_FILE [OVERHEAD_FILE]\n"
	"       kcross-harness --version\n"
	"\n"
	"summarize: files of numbers, one per line ('-' = stdin), summarised by the\n"
	"statistics rule of docs/result-format.md (median, quartiles, min, spread,\n"
	"95% CI of the median; the overhead decision with OVERHEAD_FILE).\n"
	"\n"
	"GLOB matches a benchmark's name or suite/name (fnmatch).  --interleave takes\n"
	"sample k of every selected benchmark in turn (robust ratios on a drifting\n"
	"machine; results are written together at the end).  --quick takes 11 samples\n"
	"after a 20 ms warm-up (defaults: 201 samples, 200 ms); batches keep their\n"
	"length (--min-batch-ms, default 2).  --batch-multiple K rounds every batch up\n"
	"to a multiple of K iterations (work the kernel does every k calls then falls\n"
	"alike in every batch when k divides K).  --samples, --cpu and K are whole numbers.\n"
	"--result-lines UNIT (ns/op or instructions/op) adds after each result one line\n"
	"'kcross-result: SUITE/NAME pass MEDIAN UNIT' (or skip, fail, unknown) for readers\n"
	"that match lines (a LAVA monitors action): MEDIAN by the statistics rule, from\n"
	"the figures as the JSON record writes them.\n"
	"Environment (an empty value is unset; a bad value is refused, exit 2):\n"
	"KCROSS_SYSCALL=" KC_SYSMECH_NATIVE_NAME KC__ALT_USAGE "|libc|auto forces the syscall mechanism,\n"
	"KCROSS_VDSO=0 disables the vDSO, KCROSS_RSEQ=off rseq (neither kcross nor glibc\n"
	"registers it: the harness executes itself again with glibc.pthread.rseq=0 added\n"
	"to GLIBC_TUNABLES; on and auto: the default), KCROSS_TIMER=clock_gettime the\n"
	"cycle counter (auto: the default), KCROSS_TEST_FAIL=GLOB forces the check of the\n"
	"matching benchmarks to fail (for tests of failure handling), KCROSS_TEST_DELAY=\n"
	"GLOB:NS adds NS nanoseconds (above 0, at most " KH_STR(KH_DELAY_MAX_NS) ") to every "
	"operation of the matching\n"
	"benchmarks, not to the empty loop (a planted slowdown, for tests of verdicts).\n"
	"Exit: 0 all ok or skipped, 1 a benchmark failed its check, 2 bad input,\n"
	"3 the output could not be written.\n";

struct opts {
	const char *cmd;
	const char *suite;
	const char *glob;
	bool json;
	bool interleave;
	const char *result_lines;	/* --result-lines UNIT, or NULL */
	struct kh_method m;
};

__attribute__((format(printf, 1, 2), noreturn))
static void die_usage(const char *fmt, ...)
{
	va_list ap;

	fputs("kcross-harness: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

static double parse_num(const char *opt, const char *s, double lo, double hi)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= lo && v <= hi))
		die_usage("%s wants a number from %g to %g, not '%s'", opt, lo, hi, s);
	return v;
}

static int parse_int(const char *opt, const char *s, long lo, long hi)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < lo || v > hi)
		die_usage("%s wants a whole number from %ld to %ld, not '%s'", opt, lo, hi, s);
	return (int)v;
}

static void parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "suite", required_argument, NULL, 's' },
		{ "bench", required_argument, NULL, 'b' },
		{ "samples", required_argument, NULL, 'n' },
		{ "quick", no_argument, NULL, 'q' },
		{ "cpu", required_argument, NULL, 'c' },
		{ "min-batch-ms", required_argument, NULL, 'B' },
		{ "warmup-ms", required_argument, NULL, 'W' },
		{ "batch-multiple", required_argument, NULL, 'M' },
		{ "json", no_argument, NULL, 'j' },
		{ "interleave", no_argument, NULL, 'I' },
		{ "result-lines", required_argument, NULL, 'R' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	bool quick = false, have_n = false, have_w = false;
	int c;

	memset(o, 0, sizeof(*o));
	o->m = (struct kh_method){ .samples = 201, .min_batch_ms = 2, .warmup_ms = 200, .cpu = -1,
				   .batch_multiple = 1 };
	opterr = 0;
	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			if (o->suite)
				die_usage("--suite given twice ('%s', '%s'): give one suite",
					  o->suite, optarg);
			o->suite = optarg;
			break;
		case 'b':
			if (o->glob)
				die_usage("--bench given twice ('%s', '%s'): give one GLOB "
					  "(it may match several benchmarks, e.g. 'getppid-*')",
					  o->glob, optarg);
			o->glob = optarg;
			break;
		case 'n': o->m.samples = parse_int("--samples", optarg, 3, 100000); have_n = true; break;
		case 'q': quick = true; break;
		case 'c': o->m.cpu = parse_int("--cpu", optarg, 0, CPU_SETSIZE - 1); break;
		case 'B': o->m.min_batch_ms = parse_num("--min-batch-ms", optarg, 0.01, 10000); break;
		case 'W': o->m.warmup_ms = parse_num("--warmup-ms", optarg, 0, 100000); have_w = true; break;
		case 'M': o->m.batch_multiple = (uint64_t)parse_int("--batch-multiple", optarg, 1, 1000000); break;
		case 'j': o->json = true; break;
		case 'I': o->interleave = true; break;
		case 'R':
			if (strcmp(optarg, "ns/op") && strcmp(optarg, "instructions/op"))
				die_usage("--result-lines wants ns/op or instructions/op, not '%s'",
					  optarg);
			o->result_lines = optarg;
			break;
		case 'h': fputs(usage, stdout); exit(0);
		case 'V': printf("kcross-harness %s (%s)\n", kc_version(), kc_git_rev()); exit(0);
		default:
			if (optopt)
				die_usage("option '--%s' needs a value or is unknown (see --help)",
					  argv[optind - 1] + 2);
			die_usage("unknown option '%s' (see --help)", argv[optind - 1]);
		}
	}
	if (quick) {
		/* Enough for a smoke run or a CI job, not for a figure; the
		 * batches stay as long (usage says so). */
		if (!have_n) o->m.samples = 11;
		if (!have_w) o->m.warmup_ms = 20;
	}
	if (optind >= argc)
		die_usage("missing command: list, run or sysinfo (see --help)");
	o->cmd = argv[optind++];
	if (optind < argc)
		die_usage("unexpected argument '%s' (see --help)", argv[optind]);
}

/* Is `suite` one of the comma-separated names in `list`? */
static bool in_list(const char *list, const char *suite)
{
	size_t len = strlen(suite);

	for (const char *p = list; p;) {
		const char *comma = strchr(p, ',');
		size_t n = comma ? (size_t)(comma - p) : strlen(p);

		if (n == len && !strncmp(p, suite, len))
			return true;
		p = comma ? comma + 1 : NULL;
	}
	return false;
}

static bool selected(const struct kh_bench *b, const struct opts *o)
{
	if (o->suite && !in_list(o->suite, b->suite))
		return false;
	return !o->glob || kh_bench_matches(b, o->glob);
}

/* Validate the selection: an unknown suite or an empty match is an error. */
static int count_selected(const struct opts *o)
{
	int n = 0;

	for (const char *p = o->suite; p;) {
		const char *comma = strchr(p, ',');
		int len = comma ? (int)(comma - p) : (int)strlen(p);
		bool known = false;
		char list[256] = "";

		for (const struct kh_bench *b = kh_registry(); b->name; b++)
			if ((int)strlen(b->suite) == len && !strncmp(p, b->suite, (size_t)len))
				known = true;
		if (!known) {
			/* The registry keeps each suite's rows together. */
			for (const struct kh_bench *b = kh_registry(); b->name; b++)
				if (b == kh_registry() || strcmp(b[-1].suite, b->suite))
					snprintf(list + strlen(list), sizeof(list) - strlen(list),
						 "%s%s", *list ? ", " : "", b->suite);
			die_usage("unknown suite '%.*s' (suites: %s)", len, p, list);
		}
		p = comma ? comma + 1 : NULL;
	}
	for (const struct kh_bench *b = kh_registry(); b->name; b++)
		n += selected(b, o);
	if (!n)
		die_usage("no benchmark matches '%s'%s%s (see 'list')", o->glob ? o->glob : "*",
			  o->suite ? " in suite " : "", o->suite ? o->suite : "");
	return n;
}

static int cmd_list(const struct opts *o)
{
	char needs[128];

	count_selected(o);
	for (const struct kh_bench *b = kh_registry(); b->name; b++) {
		const char *unmet;

		if (!selected(b, o))
			continue;
		unmet = kh_bench_unmet(b);
		kh_need_names(b->needs, needs, sizeof(needs));
		if (o->json) {
			struct kh_json j;

			kh_record_begin(&j, "bench");
			kh_json_str(&j, "suite", b->suite);
			kh_json_str(&j, "name", b->name);
			kh_json_str(&j, "summary", b->summary);
			kh_json_arr(&j, "needs");
			for (char *save = NULL, *t = strtok_r(needs, ",", &save); t;
			     t = strtok_r(NULL, ",", &save))
				kh_json_str(&j, NULL, t);
			kh_json_arr_end(&j);
			kh_json_bool(&j, "available", !unmet);
			kh_json_str(&j, "reason", unmet);
			kh_json_end(&j);
		} else {
			printf("%-8s %-24s %s%s%s%s\n", b->suite, b->name, b->summary,
			       unmet ? "  [skipped: " : "", unmet ? unmet : "",
			       unmet ? "]" : "");
		}
	}
	return 0;
}

/* errno of the first failed write to stdout seen, for check_output(). */
static int write_errno;

/* Output already lost (e.g. > /dev/full): measuring on is pointless. */
static void stop_if_output_lost(void)
{
	int e = errno;	/* set by the write that failed, if one did */

	if (!ferror(stdout) && !fflush(stdout))
		return;
	write_errno = ferror(stdout) && e ? e : errno;
	exit(3);	/* check_output() says why */
}

static int prepare(const struct opts *o, struct kh_timer *t, struct kh_counters *ctr,
		   int *cpu)
{
	int err = kc_syscall_init_error();

	if (err) {
		char avail[64] = "";

		for (int m = 0; m < KC_SYSMECH_COUNT; m++)
			if (kc_syscall_available() & 1u << m)
				snprintf(avail + strlen(avail), sizeof(avail) - strlen(avail),
					 "%s%s", *avail ? ", " : "", kc_sysmech_name(m));
		die_usage("KCROSS_SYSCALL=%s: %s (this machine offers: %s)",
			  kc_syscall_forced(), err == -EINVAL ? "unknown mechanism"
			  : "not available here", avail);
	}
	*cpu = kh_pin_cpu(o->m.cpu);
	if (*cpu < 0) {
		if (o->m.cpu >= 0)
			die_usage("cannot pin to CPU %d: %s", o->m.cpu,
				  *cpu == -EINVAL ? "not in this process's allowed CPUs"
				  : strerror(-*cpu));
		*cpu = -1;	/* run unpinned, and say so in the results */
	}
	kh_timer_init(t, o->m.warmup_ms < 50 ? 20 : 50);
	kh_counters_open(ctr);
	return 0;
}

static int cmd_sysinfo(const struct opts *o)
{
	struct kh_timer t;
	struct kh_counters ctr;
	struct kh_json j;
	int cpu;

	prepare(o, &t, &ctr, &cpu);
	if (o->json) {
		kh_record_begin(&j, "fingerprint");
	} else {
		kh_json_begin_text(&j, stdout);
	}
	kh_fingerprint_write(&j, &t, &ctr, cpu);
	kh_json_end(&j);
	stop_if_output_lost();
	kh_counters_close(&ctr);
	return 0;
}

/* A result saying why b cannot run here; false if it can. */
static bool skip_unmet(const struct kh_bench *b, int cpu, struct kh_result *r)
{
	const char *unmet = kh_bench_unmet(b);

	if (!unmet)
		return false;
	memset(r, 0, sizeof(*r));
	r->status = KH_SKIP;
	r->cpu = cpu;
	snprintf(r->reason, sizeof(r->reason), "%s", unmet);
	return true;
}

static void report(const struct opts *o, const struct kh_bench *b, struct kh_result *r,
		   const struct kh_timer *t, const struct kh_counters *ctr, int counts[3])
{
	counts[r->status]++;
	kh_profile_reported();
	if (o->json)
		kh_result_emit_json(b, r, t, ctr);
	else
		kh_result_print_text(b, r, t);
	if (o->result_lines)
		kh_result_print_line(b, r, o->result_lines);
	stop_if_output_lost();
	kh_result_free(r);
}

/*
 * A KH_SUITE_NO_PERF_EVENTS benchmark runs with the harness's perf events
 * closed, unless /proc cannot count its switches instead (an initramfs or a
 * chroot without /proc): then the events stay, as the count's fallback.
 */
static bool perf_events_unwanted(const struct kh_bench *b)
{
	return (kh_bench_suite_flags(b) & KH_SUITE_NO_PERF_EVENTS)
		&& access("/proc/self/task", R_OK) == 0;
}

/*
 * --interleave: every selected benchmark is prepared (checked, warmed up,
 * batch sized) first, then sample k of each is taken in turn, so that slow
 * drifts of the machine fall on all of them alike and their ratios are
 * robust.  Results come out together at the end.
 */
static void run_interleaved(const struct opts *o, const struct kh_timer *t,
			    struct kh_counters *ctr, int cpu, int counts[3])
{
	int n = count_selected(o), k = 0;
	struct kh_measure *ms = calloc((size_t)n, sizeof(*ms));
	struct kh_result *r = calloc((size_t)n, sizeof(*r));
	bool *skipped = calloc((size_t)n, sizeof(*skipped));

	if (!ms || !r || !skipped)
		die_usage("out of memory for %d interleaved benchmarks", n);
	/* Samples are taken in turn: one suite that wants no perf events means
	 * none for the whole run (harness.h, KH_SUITE_NO_PERF_EVENTS). */
	for (const struct kh_bench *b = kh_registry(); b->name; b++)
		if (selected(b, o) && perf_events_unwanted(b))
			kh_counters_suspend(ctr);
	for (const struct kh_bench *b = kh_registry(); b->name; b++) {
		if (!selected(b, o))
			continue;
		skipped[k] = skip_unmet(b, cpu, &r[k]);
		if (!skipped[k])
			kh_measure_prepare(&ms[k], b, &o->m, t, ctr, cpu, &r[k]);
		k++;
	}
	for (int s = 0; s < o->m.samples; s++)
		for (k = 0; k < n; k++)
			if (!skipped[k])
				kh_measure_sample(&ms[k], s);
	k = 0;
	for (const struct kh_bench *b = kh_registry(); b->name; b++) {
		if (!selected(b, o))
			continue;
		if (!skipped[k])
			kh_measure_finish(&ms[k]);
		report(o, b, &r[k], t, ctr, counts);
		k++;
	}
	free(ms);
	free(r);
	free(skipped);
}

static int cmd_run(const struct opts *o)
{
	struct kh_timer t;
	struct kh_counters ctr;
	struct kh_json j;
	int cpu, counts[3] = { 0, 0, 0 };
	uint64_t start = kh_clock_raw_ns();

	count_selected(o);
	prepare(o, &t, &ctr, &cpu);
	if (o->json) {
		kh_record_begin(&j, "fingerprint");
		kh_fingerprint_write(&j, &t, &ctr, cpu);
		kh_json_end(&j);
		kh_record_begin(&j, "plan");
		kh_json_arr(&j, "benchmarks");
		for (const struct kh_bench *b = kh_registry(); b->name; b++) {
			if (!selected(b, o))
				continue;
			kh_json_obj(&j, NULL);
			kh_json_str(&j, "suite", b->suite);
			kh_json_str(&j, "name", b->name);
			kh_json_obj_end(&j);
		}
		kh_json_arr_end(&j);
		kh_json_int(&j, "samples", o->m.samples);
		kh_json_num(&j, "min_batch_ms", o->m.min_batch_ms);
		kh_json_num(&j, "warmup_ms", o->m.warmup_ms);
		kh_json_bool(&j, "interleave", o->interleave);
		kh_json_int(&j, "batch_multiple", (long long)o->m.batch_multiple);
		if (cpu >= 0)
			kh_json_int(&j, "cpu", cpu);
		else
			kh_json_null(&j, "cpu");
		kh_json_end(&j);
		stop_if_output_lost();
	} else {
		printf("# kcross-harness %s: %s, timer %s at %.6g MHz, syscall mechanism %s, CPU %d\n",
		       kc_version(), KC_ARCH_NAME, t.source, t.hz / 1e6,
		       kc_sysmech_name(kc_syscall_mechanism()), cpu);
		printf("# ns/op; CI95 of the median; spread = IQR/median; dist = disturbed samples;\n"
		       "# * = the empty loop was subtracted (docs/result-format.md, statistics rule)\n");
		printf("%-24s %12s %19s %10s %7s %6s %5s\n", "benchmark", "median ns/op",
		       "CI95 of median", "min", "spread", "n", "dist");
	}
	if (o->interleave)
		run_interleaved(o, &t, &ctr, cpu, counts);
	else
		for (const struct kh_bench *b = kh_registry(); b->name; b++) {
			struct kh_result r;

			if (!selected(b, o))
				continue;
			if (!skip_unmet(b, cpu, &r)) {
				if (perf_events_unwanted(b))
					kh_counters_suspend(&ctr);
				else
					kh_counters_resume(&ctr);
				kh_measure(b, &o->m, &t, &ctr, cpu, &r);
			}
			report(o, b, &r, &t, &ctr, counts);
		}
	if (o->json) {
		kh_record_begin(&j, "end");
		kh_json_int(&j, "ok", counts[KH_OK]);
		kh_json_int(&j, "skipped", counts[KH_SKIP]);
		kh_json_int(&j, "failed", counts[KH_FAIL]);
		kh_json_num(&j, "elapsed_s", (double)(kh_clock_raw_ns() - start) * 1e-9);
		kh_json_end(&j);
	}
	kh_counters_close(&ctr);
	kh_profile_finish();
	return counts[KH_FAIL] ? 1 : 0;
}

/*
 * Every environment forcing is validated before anything runs: the
 * library's and the harness's own (settings.c), one line each.  Then
 * KCROSS_RSEQ=off may execute the harness again (argv), without glibc's rseq.
 */
static void check_forcings(struct opts *o, char **argv)
{
	const char *err = kh_settings_error();

	if (err)
		die_usage("%s", err);
	err = kh_settings_exec_without_rseq(argv);
	if (err)
		die_usage("%s", err);
	kh_settings_method(&o->m);
	kh_profile_init(kh_setting_named("KCROSS_PROFILE"));
}

/*
 * Output that could not be written is a failed run (exit 3, one line):
 * checked at exit, whatever the command, and after every result of a run
 * so that a run whose output is lost stops.
 */
static void check_output(void)
{
	int err = 0;

	if (fflush(stdout))
		err = errno;
	else if (ferror(stdout))
		err = write_errno ? write_errno : EIO;	/* an earlier write failed */
	if (fclose(stdout) && !err)
		err = errno;
	if (err) {
		fprintf(stderr, "kcross-harness: cannot write output: %s\n", strerror(err));
		_exit(3);
	}
}

int main(int argc, char **argv)
{
	struct opts o;

	/* A closed pipe is a write error to report, not a silent death. */
	signal(SIGPIPE, SIG_IGN);
	atexit(check_output);
	if (argc > 1 && !strcmp(argv[1], "summarize"))
		return kh_summarize_main(argc - 1, argv + 1);
	parse(argc, argv, &o);
	check_forcings(&o, argv);
	if (!strcmp(o.cmd, "list"))
		return cmd_list(&o);
	if (!strcmp(o.cmd, "run"))
		return cmd_run(&o);
	if (!strcmp(o.cmd, "sysinfo"))
		return cmd_sysinfo(&o);
	die_usage("unknown command '%s': use list, run or sysinfo", o.cmd);
}
