/* SPDX-License-Identifier: MIT */
/*
 * Run-time choice of the system call mechanism.
 *
 * The choice lives in one word, kc__sysmech, that the inline kc_sysN test
 * (encoded by KC__SYSMECH_WORD: the native instruction is the value its arch
 * tests fastest).
 * It starts (statically) at the architecture's baseline instruction, which
 * is valid everywhere, so a call made before the constructor below ran, from
 * another constructor say, is still correct.  The constructor then upgrades
 * it to the fastest mechanism offered (the arch's alternative when it has one
 * and AT_HWCAP2 says the machine offers it) or to the one KCROSS_SYSCALL names.
 * No architecture's instruction is named here: the arch header names them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#include <kcross/settings.h>
#include <kcross/syscall.h>

unsigned int kc__sysmech = KC__SYSMECH_WORD(KC_SYSMECH_NATIVE);

static int init_error;
static const char *forced;

/* The names come from the arch header; the alternative's only where it has one. */
static const char *const mech_names[KC_SYSMECH_COUNT] = {
	[KC_SYSMECH_LIBC] = "libc",
	[KC_SYSMECH_NATIVE] = KC_SYSMECH_NATIVE_NAME,
#if KC_HAVE_SYSCALL_ALT
	[KC_SYSMECH_ALT] = KC_SYSMECH_ALT_NAME,
#endif
};

long kc__sys_libc(long n, long a1, long a2, long a3, long a4, long a5, long a6)
{
	long r = syscall(n, a1, a2, a3, a4, a5, a6);

	return r == -1 ? -errno : r;
}

/* KCROSS_SYSCALL's valid values: this architecture's mechanism names, and "auto". */
const char *const kc__syscall_setting_values[] = {
	"libc", KC_SYSMECH_NATIVE_NAME,
#if KC_HAVE_SYSCALL_ALT
	KC_SYSMECH_ALT_NAME,
#endif
	"auto", NULL,
};

const char *kc_sysmech_name(enum kc_sysmech m)
{
	return (unsigned int)m < KC_SYSMECH_COUNT && mech_names[m] ? mech_names[m] : "unknown";
}

enum kc_sysmech kc_syscall_mechanism(void)
{
	return (enum kc_sysmech)(__atomic_load_n(&kc__sysmech, __ATOMIC_RELAXED) ^
				 KC__SYSMECH_WORD(0));
}

/* What this architecture offers given an AT_HWCAP2 value. */
static unsigned int offered(unsigned long hwcap2)
{
	unsigned int mask = 1u << KC_SYSMECH_LIBC | 1u << KC_SYSMECH_NATIVE;

	if (KC_HAVE_SYSCALL_ALT && (hwcap2 & KC_SYSMECH_ALT_HWCAP2))
		mask |= 1u << KC_SYSMECH_ALT;
	return mask;
}

int kc_syscall_choose(unsigned long hwcap2, const char *force,
		      enum kc_sysmech *out)
{
	unsigned int mask = offered(hwcap2);

	if (!force || !*force || !strcmp(force, "auto")) {
		*out = mask & 1u << KC_SYSMECH_ALT ? KC_SYSMECH_ALT : KC_SYSMECH_NATIVE;
		return 0;
	}
	for (unsigned int m = 0; m < KC_SYSMECH_COUNT; m++) {
		if (!mech_names[m] || strcmp(force, mech_names[m]))
			continue;
		if (!(mask & 1u << m))
			return -ENOTSUP;
		*out = (enum kc_sysmech)m;
		return 0;
	}
	return -EINVAL;
}

unsigned int kc_syscall_available(void)
{
	return offered(getauxval(AT_HWCAP2));
}

int kc_syscall_select(enum kc_sysmech m)
{
	if ((unsigned int)m >= KC_SYSMECH_COUNT || !(kc_syscall_available() & 1u << m))
		return -ENOTSUP;
	__atomic_store_n(&kc__sysmech, KC__SYSMECH_WORD(m), __ATOMIC_RELAXED);
	return 0;
}

int kc_syscall_init_error(void)
{
	return init_error;
}

const char *kc_syscall_forced(void)
{
	return forced;
}

__attribute__((constructor)) static void kc__syscall_init(void)
{
	enum kc_sysmech m;

	char err[160];

	forced = kc_setting("KCROSS_SYSCALL", kc__syscall_setting_values, err, sizeof(err));
	if (err[0]) {
		init_error = -EINVAL;
		return;
	}
	init_error = kc_syscall_choose(getauxval(AT_HWCAP2), forced, &m);
	if (!init_error)
		__atomic_store_n(&kc__sysmech, KC__SYSMECH_WORD(m), __ATOMIC_RELAXED);
}
