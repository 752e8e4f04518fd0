/* SPDX-License-Identifier: MIT */
/*
 * Writes the fuzzer's seed corpus into DIR: this process's vDSO image (when
 * there is one) and synthetic images in each table layout, built by
 * tests/unit/elf_builder.h, so the corpus is useful on any host.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <kcross/vdso.h>
#include "elf_builder.h"

#define GLOBAL_FUNC ELF64_ST_INFO(STB_GLOBAL, STT_FUNC)

static int write_file(const char *dir, const char *name, const void *buf, size_t len)
{
	char path[4096];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "wb");
	if (!f || fwrite(buf, 1, len, f) != len || fclose(f)) {
		fprintf(stderr, "vdso_seeds: %s: %s\n", path, strerror(errno));
		return -1;
	}
	printf("seed %s (%zu bytes)\n", path, len);
	return 0;
}

int main(int argc, char **argv)
{
	static const char *const versions[] = { KC_VDSO_VERSION, "KC_TEST_2" };
	static const struct eb_sym syms[] = {
		{ KC_VDSO_CLOCK_GETTIME, GLOBAL_FUNC, 1, 2 },
		{ KC_VDSO_GETTIMEOFDAY, GLOBAL_FUNC, 1, 2 },
		{ KC_VDSO_CLOCK_GETRES, ELF64_ST_INFO(STB_WEAK, STT_FUNC), 1, 2 },
#ifdef KC_VDSO_GETCPU
		{ KC_VDSO_GETCPU, ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE), 1, 2 },
#endif
		{ "kc_dup", GLOBAL_FUNC, 1, 2 },
		{ "kc_dup", GLOBAL_FUNC, 1, 3 },
		{ "kc_other", GLOBAL_FUNC, 1, 3 },
		{ "kc_hidden", GLOBAL_FUNC, 1, 0x8000 | 2 },
		{ "kc_unversioned", GLOBAL_FUNC, 1, 1 },
		{ "kc_sym_07", GLOBAL_FUNC, 1, 2 },
		{ "kc_undef", GLOBAL_FUNC, SHN_UNDEF, 2 },
	};
	static const unsigned int layouts[] = {
		EB_SYSV_HASH | EB_GNU_HASH | EB_VERSIONS,
		EB_SYSV_HASH | EB_VERSIONS,
		EB_GNU_HASH | EB_VERSIONS,
		EB_GNU_HASH,
	};
	const struct kc_vdso *self = kc_vdso_self();
	char name[64];
	int rc = 0;

	if (argc != 2) {
		fprintf(stderr, "usage: %s DIR\n", argv[0]);
		return 2;
	}
	if (self) {
		size_t len;
		const void *img = kc_vdso_image(self, &len);

		rc |= write_file(argv[1], "live-vdso", img, len);
	} else {
		printf("no usable vDSO in this process: synthetic seeds only\n");
	}
	for (unsigned int i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		struct eb_image im;

		if (eb_build(&im, syms, sizeof(syms) / sizeof(syms[0]), versions, 2,
			     layouts[i], i & 1 ? 0xffffffffff700000ull : 0)) {
			fprintf(stderr, "vdso_seeds: out of memory\n");
			return 1;
		}
		snprintf(name, sizeof(name), "synthetic-%u", layouts[i]);
		rc |= write_file(argv[1], name, im.buf, im.len);
		eb_free(&im);
	}
	return rc ? 1 : 0;
}
