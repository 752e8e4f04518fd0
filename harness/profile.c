/* SPDX-License-Identifier: MIT */
/*
 * Profile windows for the labs' TCG plugin (lab/plugin/kcross-profile.c,
 * issue 16), only when KCROSS_PROFILE is set (settings.c): ordinary runs
 * call nothing here but a test of one flag per batch, outside the timed region.
 *
 * Around each sample batch and each empty-loop batch the harness calls a
 * marker function, kh_profile_sample or kh_profile_empty, just before its
 * start read (context.c, kh__bracket_open), and kh_profile_close just after
 * its end read; as each benchmark's result is reported (main.c, report: one
 * result record each, in order, skipped ones too), kh_profile_dump, so that
 * the lab pairs the plugin's windows with the result records in order.  The
 * markers do nothing: the plugin, given their addresses (the lab reads them
 * from this binary's symbols), counts the instructions executed between them.
 * They live in their own section, which the linker places after .text, above
 * every address the guest's /init runs (the lab checks).
 *
 * After the run (kh_profile_finish: reading /proc/kallsyms moves the kernel's
 * caches, and the run's figures must be those of a plain counting boot) the
 * harness writes the kernel's reference symbols as
 * /proc/kallsyms gives them ("@@kcross-profile kallsyms _text ADDR _etext
 * ADDR"): the lab applies the slide (KASLR) to the kernel's System.map and
 * checks the map is this kernel's.  KCROSS_PROFILE=kallsyms also writes every
 * text symbol ("@@kcross-profile ksym ADDR NAME"), for a kernel that comes
 * without System.map.
 */
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define MARKER __attribute__((noipa, used, section("kcross_profile")))

MARKER void kh_profile_sample(void) { __asm__ volatile(""); }
MARKER void kh_profile_empty(void) { __asm__ volatile(""); }
MARKER void kh_profile_close(void) { __asm__ volatile(""); }
MARKER void kh_profile_dump(void) { __asm__ volatile(""); }

static bool profiling, all_symbols;

bool kh_profile_on(void)
{
	return profiling;
}

static void kallsyms(bool all)
{
	char line[512], text[32] = "", etext[32] = "";
	FILE *f = fopen("/proc/kallsyms", "r");
	static char buf[1 << 16];	/* the symbols in large writes: a console is slow per write */

	if (!f) {
		fprintf(stderr, "@@kcross-profile kallsyms unreadable\n");
		return;
	}
	setvbuf(stderr, buf, _IOFBF, sizeof(buf));
	while (fgets(line, sizeof(line), f)) {
		char addr[32], type[4], name[256];

		if (sscanf(line, "%31s %3s %255s", addr, type, name) != 3)
			continue;
		if (!strcmp(name, "_text"))
			snprintf(text, sizeof(text), "%s", addr);
		else if (!strcmp(name, "_etext"))
			snprintf(etext, sizeof(etext), "%s", addr);
		if (all && (type[0] == 't' || type[0] == 'T') && !strchr(line, '['))
			fprintf(stderr, "@@kcross-profile ksym %s %s\n", addr, name);
	}
	fclose(f);
	fprintf(stderr, "@@kcross-profile kallsyms _text %s _etext %s\n", text[0] ? text : "-",
		etext[0] ? etext : "-");
	fflush(stderr);
	setvbuf(stderr, NULL, _IONBF, 0);
}

/* mode: KCROSS_PROFILE's validated value (main.c reads it: this file stays
 * below the settings in the harness's layers), or NULL. */
void kh_profile_init(const char *mode)
{
	profiling = mode != NULL;
	all_symbols = profiling && !strcmp(mode, "kallsyms");
}

void kh_profile_finish(void)
{
	if (profiling)
		kallsyms(all_symbols);
}

void kh_profile_open(int window)
{
	if (window == KH_WINDOW_SAMPLE)
		kh_profile_sample();
	else
		kh_profile_empty();
}

void kh_profile_reported(void)
{
	if (profiling)
		kh_profile_dump();
}
