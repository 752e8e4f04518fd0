/* SPDX-License-Identifier: MIT */
/*
 * kcross-harness summarize [--json] SAMPLES_FILE [OVERHEAD_FILE]
 *
 * Summarises a file of numbers (one per line, ministat style; '-' is
 * standard input) by the statistics rule of docs/result-format.md, the same
 * code the harness's table uses: median, quartiles, minimum, spread, the
 * 95% CI of the median, and with a second file of empty-loop figures the
 * overhead decision.  Useful in a guest, and the way kcross's tests check
 * that the C and Python implementations of the rule agree.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "stats.h"

__attribute__((format(printf, 1, 2), noreturn))
static void die(const char *fmt, ...)
{
	va_list ap;

	fputs("kcross-harness: summarize: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(2);
}

/* A decimal number as Python's float() reads it, finite and >= 0. */
static bool parse_value(char *s, double *v)
{
	char *end;

	for (char *p = s; *p; p++)
		if (!isdigit((unsigned char)*p) && !strchr(".eE+-", *p))
			return false;	/* no nan, inf, hex, or stray text */
	errno = 0;
	*v = strtod(s, &end);
	return end != s && !*end && errno != ERANGE && isfinite(*v);
}

/* Read a file of numbers; blank lines and lines starting with '#' are skipped. */
static double *read_numbers(const char *path, int *n)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "r") : stdin;
	const char *name = strcmp(path, "-") ? path : "<stdin>";
	char line[512];
	size_t cap = 0;
	double *v = NULL;
	long lineno = 0;

	if (!f)
		die("%s: %s", path, strerror(errno));
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		char *s = line, *e;
		double x;

		lineno++;
		if (!strchr(line, '\n') && !feof(f))
			die("%s:%ld: line too long", name, lineno);
		while (isspace((unsigned char)*s))
			s++;
		e = s + strlen(s);
		while (e > s && isspace((unsigned char)e[-1]))
			*--e = 0;
		if (!*s || *s == '#')
			continue;
		if (!parse_value(s, &x))
			die("%s:%ld: '%.40s' is not a finite number", name, lineno, s);
		if (x < 0)
			die("%s:%ld: %s is negative (ns/op figures cannot be)", name, lineno, s);
		if (*n == 100000000)
			die("%s: more than 100000000 numbers", name);
		if ((size_t)*n == cap) {
			double *nv;

			cap = cap ? 2 * cap : 1024;
			if (!(nv = realloc(v, cap * sizeof(*v))))
				die("%s: out of memory", name);
			v = nv;
		}
		v[(*n)++] = x;
	}
	if (ferror(f))
		die("%s: %s", name, strerror(errno));
	if (f != stdin)
		fclose(f);
	if (!*n)
		die("%s: no numbers", name);
	return v;
}

static void json_num(const char *key, double v, bool comma)
{
	if (isfinite(v))
		printf("\"%s\":%.17g%s", key, v, comma ? "," : "");
	else
		printf("\"%s\":null%s", key, comma ? "," : "");
}

int kh_summarize_main(int argc, char **argv)
{
	const char *files[2] = { NULL, NULL };
	double *x, *o = NULL;
	int n, n_o = 0, nfiles = 0, need = kh_ci_min_samples(KH_CI_CONFIDENCE);
	bool json = false, dashdash = false;
	struct kh_summary s;
	const char *reason;

	for (int i = 1; i < argc; i++) {
		if (!dashdash && !strcmp(argv[i], "--json")) {
			json = true;
		} else if (!dashdash && !strcmp(argv[i], "--help")) {
			puts("usage: kcross-harness summarize [--json] SAMPLES_FILE [OVERHEAD_FILE]\n"
			     "Files of numbers, one per line ('-' = stdin); the statistics rule of\n"
			     "docs/result-format.md: median, quartiles, min, spread, 95% CI of the\n"
			     "median, and the overhead decision when OVERHEAD_FILE is given.");
			return 0;
		} else if (!dashdash && !strcmp(argv[i], "--")) {
			dashdash = true;
		} else if (!dashdash && argv[i][0] == '-' && argv[i][1]) {
			die("unknown option '%s' (usage: kcross-harness summarize [--json] "
			    "SAMPLES_FILE [OVERHEAD_FILE])", argv[i]);
		} else if (nfiles < 2) {
			files[nfiles++] = argv[i];
		} else {
			die("unexpected argument '%s' (usage: kcross-harness summarize [--json] "
			    "SAMPLES_FILE [OVERHEAD_FILE])", argv[i]);
		}
	}
	if (!nfiles)
		die("missing SAMPLES_FILE (usage: kcross-harness summarize [--json] "
		    "SAMPLES_FILE [OVERHEAD_FILE]; '-' is standard input)");
	if (nfiles == 2 && !strcmp(files[0], "-") && !strcmp(files[1], "-"))
		die("only one of the two files can be standard input ('-')");
	x = read_numbers(files[0], &n);
	if (n < need)
		die("%s: %d number%s: a %.0f%% CI of the median needs at least %d",
		    files[0], n, n == 1 ? "" : "s", KH_CI_CONFIDENCE * 100, need);
	if (nfiles == 2)
		o = read_numbers(files[1], &n_o);
	if (kh_summarize(x, n, o, n_o, &s))
		die("out of memory");
	reason = kh_overhead_reason(s.overhead);
	if (json) {
		printf("{\"n\":%d,", s.n);
		json_num("median", s.median, true);
		json_num("q1", s.q1, true);
		json_num("q3", s.q3, true);
		json_num("min", s.min, true);
		json_num("spread", s.spread, true);
		json_num("ci_low", s.ci_low, true);
		json_num("ci_high", s.ci_high, true);
		printf("\"ci_low_rank\":%d,\"ci_high_rank\":%d,", s.ci_low_rank, s.ci_high_rank);
		json_num("ci_confidence", s.ci_confidence, true);
		json_num("overhead_median", s.overhead_median, true);
		printf("\"subtracted\":%s,", s.overhead == KH_OVERHEAD_SUBTRACTED ? "true" : "false");
		if (reason)
			printf("\"overhead_reason\":\"%s\"}\n", reason);
		else
			printf("\"overhead_reason\":null}\n");
	} else {
		printf("n %d  median %.6g%s  CI%.0f %.6g .. %.6g (ranks %d..%d, %.1f%%)  "
		       "min %.6g  q1 %.6g  q3 %.6g  spread ", s.n, s.median,
		       s.overhead == KH_OVERHEAD_SUBTRACTED ? "*" : "", KH_CI_CONFIDENCE * 100,
		       s.ci_low, s.ci_high, s.ci_low_rank, s.ci_high_rank,
		       100 * s.ci_confidence, s.min, s.q1, s.q3);
		if (isfinite(s.spread))
			printf("%.2f%%", 100 * s.spread);
		else
			printf("-");
		if (reason)
			printf("  overhead %.6g: %s", s.overhead_median, reason);
		putchar('\n');
	}
	free(x);
	free(o);
	if (fflush(stdout) || ferror(stdout)) {
		/* exit 3: the output could not be written (as for `run`); _exit
		 * so that no exit-time check of stdout adds a second line */
		fprintf(stderr, "kcross-harness: summarize: cannot write the summary: %s\n",
			strerror(errno));
		_exit(3);
	}
	return 0;
}
