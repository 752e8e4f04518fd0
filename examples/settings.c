/* SPDX-License-Identifier: MIT */
/*
 * examples/settings.c - environment forcings, validated one way.
 *
 *   cc -o settings settings.c $(pkg-config --cflags --libs --static kcross)
 *   ./settings
 *   EXAMPLE_COLOUR=blue ./settings      # the program's own forcing
 *   KCROSS_SYSCALL=bogus ./settings     # exit 2, one line naming the valid values
 *
 * kc_settings_error() checks the library's own (KCROSS_SYSCALL, KCROSS_VDSO,
 * KCROSS_RSEQ);
 * kc_setting() validates a program's own variable the same way: unset or
 * empty is no forcing, a value outside the list is one error line.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include <kcross/kcross.h>

int main(void)
{
	static const char *const colours[] = { "red", "green", "blue", NULL };
	const char *bad = kc_settings_error();
	const char *colour;
	char err[200];

	if (bad) {
		fprintf(stderr, "settings: %s\n", bad);
		return 2;
	}
	colour = kc_setting("EXAMPLE_COLOUR", colours, err, sizeof(err));
	if (err[0]) {
		fprintf(stderr, "settings: %s\n", err);
		return 2;
	}
	/* What a fingerprint records: every forcing, unset as such. */
	for (int i = 0; kc_library_settings[i]; i++) {
		const char *v = kc_setting(kc_library_settings[i], NULL, NULL, 0);

		printf("%s=%s\n", kc_library_settings[i], v ? v : "(unset)");
	}
	printf("EXAMPLE_COLOUR=%s\n", colour ? colour : "(unset)");
	puts("settings example: ok");
	return 0;
}
