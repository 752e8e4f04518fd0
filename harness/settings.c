/* SPDX-License-Identifier: MIT */
/*
 * The harness's own environment forcings (the library validates its own,
 * kc_settings_error): each one's name and what makes a value valid, checked
 * before anything runs (main.c refuses a bad one: one line, exit 2), and
 * recorded by the fingerprint (fingerprint.c) as validated here.
 *
 *   KCROSS_TIMER       auto or clock_gettime (timer.c obeys it)
 *   KCROSS_TEST_FAIL   a glob of benchmarks whose check is forced to fail
 *   KCROSS_TEST_DELAY  GLOB:NS, NS nanoseconds planted in every operation
 *                      of the matching benchmarks (context.c plants them)
 *   KCROSS_PROFILE     1 or kallsyms: profile windows for the labs' plugin
 *                      (profile.c)
 *
 * The library's KCROSS_RSEQ=off needs the harness's help: glibc registers
 * rseq in every thread before main() unless GLIBC_TUNABLES says
 * glibc.pthread.rseq=0 at process start, so the harness executes itself
 * again with it (kh_settings_exec_without_rseq, below).
 *
 * An empty variable is unset, as everywhere (kc_setting).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <kcross/rseq.h>
#include <kcross/settings.h>

#include "harness.h"

#define GLOB_HELP "a glob of benchmark names, NAME or SUITE/NAME; see 'list'"
#define GLOB_MAX 160	/* KCROSS_TEST_DELAY's glob, its NUL included */

/* Does glob match a registered benchmark? */
static bool matches_any(const char *glob)
{
	for (const struct kh_bench *b = kh_registry(); b->name; b++)
		if (kh_bench_matches(b, glob))
			return true;
	return false;
}

static bool check_fail(const char *value, char *err, size_t len)
{
	if (matches_any(value))
		return true;
	snprintf(err, len, "KCROSS_TEST_FAIL=%s: matches no benchmark (valid: " GLOB_HELP ")",
		 value);
	return false;
}

/*
 * KCROSS_TEST_DELAY=GLOB:NS, split at the last colon (a benchmark name has
 * none): the glob (copied into glob, glen bytes) and ns.  false, with the error
 * line in err, when either part is not valid.
 */
static bool parse_delay(const char *value, char *glob, size_t glen, double *ns, char *err,
			size_t elen)
{
	const char *colon = strrchr(value, ':'), *num;
	char *end;

	if (!colon || colon == value || !colon[1]) {
		snprintf(err, elen, "KCROSS_TEST_DELAY=%s: not GLOB:NS (a glob of benchmark "
			 "names, NAME or SUITE/NAME, a colon, and the nanoseconds to add to each "
			 "of their operations, e.g. getppid-inline:6.5)", value);
		return false;
	}
	num = colon + 1;
	errno = 0;
	*ns = strtod(num, &end);
	if (errno || end == num || *end || !(*ns > 0 && *ns <= KH_DELAY_MAX_NS)) {
		snprintf(err, elen, "KCROSS_TEST_DELAY=%s: NS wants a number of nanoseconds "
			 "above 0 and at most %.0f, not '%s'", value, KH_DELAY_MAX_NS, num);
		return false;
	}
	if ((size_t)(colon - value) >= glen) {
		snprintf(err, elen, "KCROSS_TEST_DELAY=%.40s...: the glob is longer than %zu "
			 "characters", value, glen - 1);
		return false;
	}
	memcpy(glob, value, (size_t)(colon - value));
	glob[colon - value] = 0;
	if (!matches_any(glob)) {
		snprintf(err, elen, "KCROSS_TEST_DELAY=%s: '%s' matches no benchmark (valid: "
			 GLOB_HELP ")", value, glob);
		return false;
	}
	return true;
}

static bool check_delay(const char *value, char *err, size_t len)
{
	char glob[GLOB_MAX];
	double ns;

	return parse_delay(value, glob, sizeof(glob), &ns, err, len);
}

static const char *const profile_values[] = { "1", "kallsyms", NULL };

const struct kh_setting kh_settings[] = {
	{ "KCROSS_TIMER", kh_timer_setting_values, NULL, false },
	{ "KCROSS_TEST_FAIL", NULL, check_fail, false },
	{ "KCROSS_TEST_DELAY", NULL, check_delay, true },
	{ "KCROSS_PROFILE", profile_values, NULL, true },
	{ NULL, NULL, NULL, false },
};

const char *kh_setting_value(const struct kh_setting *s, char *err, size_t len)
{
	char own[400];
	const char *v;

	if (!err) {
		err = own;
		len = sizeof(own);
	}
	v = kc_setting(s->name, s->valid, err, len);
	if (v && s->check && !s->check(v, err, len))
		return NULL;
	return v;
}

/* The validated value of the harness's forcing `name`, or NULL. */
const char *kh_setting_named(const char *name)
{
	for (const struct kh_setting *s = kh_settings; s->name; s++)
		if (!strcmp(s->name, name))
			return kh_setting_value(s, NULL, 0);
	return NULL;
}

const char *kh_settings_error(void)
{
	static char err[400];
	const char *lib = kc_settings_error();

	if (lib)
		return lib;
	for (const struct kh_setting *s = kh_settings; s->name; s++) {
		kh_setting_value(s, err, sizeof(err));
		if (err[0])
			return err;
	}
	return NULL;
}

void kh_settings_method(struct kh_method *m)
{
	static char glob[GLOB_MAX];
	const char *v = kh_setting_named("KCROSS_TEST_DELAY");
	char err[400];

	m->force_fail = kh_setting_named("KCROSS_TEST_FAIL");
	m->delay_glob = NULL;
	m->delay_ns = 0;
	if (v && parse_delay(v, glob, sizeof(glob), &m->delay_ns, err, sizeof(err)))
		m->delay_glob = glob;
}

/* ------------------------------------------------------- KCROSS_RSEQ=off */

#define RSEQ_TUNABLE "glibc.pthread.rseq"
#define TUNABLES_MAX 4096	/* GLIBC_TUNABLES, rewritten */

/*
 * GLIBC_TUNABLES (NAME=VALUE entries separated by colons) with every
 * glibc.pthread.rseq entry dropped and glibc.pthread.rseq=0 added last,
 * into out; *had_off: the last such entry already said 0.  false when it
 * does not fit.
 */
static bool tunables_without_rseq(const char *now, char *out, size_t len, bool *had_off)
{
	size_t off = 0;

	*had_off = false;
	out[0] = 0;
	for (const char *p = now; p && *p;) {
		const char *colon = strchr(p, ':');
		size_t n = colon ? (size_t)(colon - p) : strlen(p);
		size_t name = strlen(RSEQ_TUNABLE);

		if (n > name && !strncmp(p, RSEQ_TUNABLE, name) && p[name] == '=') {
			*had_off = n == name + 2 && p[name + 1] == '0';
		} else if (n) {
			if (off + n + 1 >= len)
				return false;
			memcpy(out + off, p, n);
			off += n;
			out[off++] = ':';
			out[off] = 0;
		}
		p = colon ? colon + 1 : NULL;
	}
	return (size_t)snprintf(out + off, len - off, RSEQ_TUNABLE "=0") < len - off;
}

const char *kh_settings_exec_without_rseq(char **argv)
{
	static char err[400];
	static char tunables[TUNABLES_MAX];
	const char *v = kc_setting("KCROSS_RSEQ", NULL, NULL, 0);
	bool had_off;

	/* glibc's __rseq_size above 0: it registered (kc_rseq_info, libc_size). */
	if (!v || strcmp(v, "off") || kc_rseq_info().libc_size <= 0)
		return NULL;
	if (!tunables_without_rseq(getenv("GLIBC_TUNABLES"), tunables, sizeof(tunables),
				   &had_off)) {
		snprintf(err, sizeof(err), "KCROSS_RSEQ=off: GLIBC_TUNABLES is too long to add "
			 RSEQ_TUNABLE "=0 to (at most %d characters)", TUNABLES_MAX - 1);
		return err;
	}
	/* Set at this start already (our own exec, or the caller's): this glibc
	 * does not obey it (a set-user-ID start ignores GLIBC_TUNABLES). */
	if (had_off) {
		snprintf(err, sizeof(err), "KCROSS_RSEQ=off: glibc registered rseq although "
			 "GLIBC_TUNABLES has " RSEQ_TUNABLE "=0 (this glibc ignores it): cannot "
			 "run without rseq");
		return err;
	}
	if (setenv("GLIBC_TUNABLES", tunables, 1)) {
		snprintf(err, sizeof(err), "KCROSS_RSEQ=off: cannot set GLIBC_TUNABLES: %s",
			 strerror(errno));
		return err;
	}
	fflush(NULL);
	execv("/proc/self/exe", argv);
	execvp(argv[0], argv);	/* no /proc: the name it was started by */
	snprintf(err, sizeof(err), "KCROSS_RSEQ=off: cannot execute the harness again with "
		 "GLIBC_TUNABLES=%.200s (glibc registers rseq before main() otherwise): %s",
		 tunables, strerror(errno));
	return err;
}
