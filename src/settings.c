/* SPDX-License-Identifier: MIT */
/* Environment forcings, validated one way (see <kcross/settings.h>). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcross/settings.h>

const char *kc_setting(const char *name, const char *const *valid, char *err, size_t errlen)
{
	const char *v = getenv(name);
	size_t off;

	if (err && errlen)
		err[0] = 0;
	if (!v || !*v)
		return NULL;
	if (!valid)
		return v;
	for (const char *const *p = valid; *p; p++)
		if (!strcmp(v, *p))
			return v;
	if (err && errlen) {
		off = (size_t)snprintf(err, errlen, "%s=%s: not one of ", name, v);
		for (const char *const *p = valid; *p && off < errlen; p++)
			off += (size_t)snprintf(err + off, errlen - off, "%s%s",
						p == valid ? "" : ", ", *p);
	}
	return NULL;
}

/* The valid values of the library's forcings live beside their users. */
extern const char *const kc__syscall_setting_values[];
extern const char *const kc__vdso_setting_values[];
extern const char *const kc__rseq_setting_values[];

const char *const kc_library_settings[] = { "KCROSS_SYSCALL", "KCROSS_VDSO", "KCROSS_RSEQ",
					    NULL };

const char *kc_settings_error(void)
{
	static char err[200];
	const char *const *valid[] = { kc__syscall_setting_values, kc__vdso_setting_values,
				       kc__rseq_setting_values };

	for (int i = 0; kc_library_settings[i]; i++) {
		kc_setting(kc_library_settings[i], valid[i], err, sizeof(err));
		if (err[0])
			return err;
	}
	return NULL;
}
