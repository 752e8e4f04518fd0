/* SPDX-License-Identifier: MIT */
/*
 * libFuzzer target: kc_vdso_parse on arbitrary bytes, then every lookup the
 * library and the unit tests make.  Memory errors are ASan's to find; the
 * one property checked here is that a found symbol lies inside the input.
 */
#include <stddef.h>
#include <stdint.h>

#include <kcross/vdso.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const names[] = {
	KC_VDSO_CLOCK_GETTIME,
	KC_VDSO_GETTIMEOFDAY,
	KC_VDSO_CLOCK_GETRES,
#ifdef KC_VDSO_GETCPU
	KC_VDSO_GETCPU,
#endif
#ifdef KC_VDSO_TIME
	KC_VDSO_TIME,
#endif
	/* Names in the synthetic seeds (tests/unit/elf_builder.h users). */
	"kc_dup", "kc_other", "kc_hidden", "kc_unversioned", "kc_sym_07",
	"",
};

static const char *const versions[] = { NULL, KC_VDSO_VERSION, "KC_TEST_2" };

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct kc_vdso v;

	if (kc_vdso_parse(&v, data, size))
		return 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		for (size_t j = 0; j < sizeof(versions) / sizeof(versions[0]); j++) {
			const uint8_t *p = kc_vdso_lookup(&v, versions[j], names[i]);

			if (p && (p < data || p >= data + size))
				__builtin_trap();
		}
	}
	return 0;
}
