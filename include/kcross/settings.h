/* SPDX-License-Identifier: MIT */
/*
 * kcross/settings.h - environment variables that force a choice.
 *
 * Every forcing (KCROSS_SYSCALL, KCROSS_VDSO, KCROSS_RSEQ here; the harness
 * adds its own) is read and validated the same way: an unset or empty
 * variable is not a forcing; a value outside the variable's list is an error
 * with one line naming the valid values; a valid value is returned as given,
 * so that it can be recorded (the harness writes every one into its
 * fingerprint).
 */
#ifndef KCROSS_SETTINGS_H
#define KCROSS_SETTINGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * The value of environment variable `name` when it is one of `valid` (a
 * NULL-terminated list; `valid` NULL accepts any non-empty value); NULL when
 * it is unset, empty, or invalid.  When invalid and `err` is not NULL, one
 * line "NAME=value: not one of a, b, c" is written to err (else err[0] = 0).
 */
const char *kc_setting(const char *name, const char *const *valid, char *err, size_t errlen);

/* The library's own forcings: NULL when every one is valid (or unset), else
 * the first error line (a static buffer). */
const char *kc_settings_error(void);

/* The library's forcings by name, NULL-terminated: what a fingerprint lists. */
extern const char *const kc_library_settings[];

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_SETTINGS_H */
