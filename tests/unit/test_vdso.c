/* SPDX-License-Identifier: MIT */
/*
 * The vDSO parser: lookups on synthetic images against an oracle, one
 * corruption at a time on a known layout, a deterministic mutation loop
 * (run under ASan in the sanitizer build), and the live vDSO checked against
 * the system calls.  Without a live vDSO (qemu-user) only the live parts are
 * skipped.
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>

#include <kcross/clock.h>
#include <kcross/vdso.h>
#include "elf_builder.h"
#include "tap.h"

#define LINK_HIGH 0xffffffffff700000ull	/* the old x86-64 vDSO link address */
#define OTHER_VERSION "KC_TEST_2"

static const char *const arch_names[] = {
	KC_VDSO_CLOCK_GETTIME,
	KC_VDSO_GETTIMEOFDAY,
	KC_VDSO_CLOCK_GETRES,
#ifdef KC_VDSO_GETCPU
	KC_VDSO_GETCPU,
#endif
#ifdef KC_VDSO_TIME
	KC_VDSO_TIME,
#endif
};
#define N_ARCH (sizeof(arch_names) / sizeof(arch_names[0]))

static const char *const versions[] = { KC_VDSO_VERSION, OTHER_VERSION };

/* Versions every oracle check and mutated lookup is asked with. */
static const char *const probe_versions[] = {
	NULL, KC_VDSO_VERSION, OTHER_VERSION, "LINUX_0.0",
	EB_BASE_NAME,	/* the VER_FLG_BASE entry names the file, not a version */
};
#define N_PROBE_VER (sizeof(probe_versions) / sizeof(probe_versions[0]))

#define GLOBAL_FUNC ELF64_ST_INFO(STB_GLOBAL, STT_FUNC)

static struct eb_sym syms[64];
static char sym_names[24][16];
static unsigned int nsyms;

static void add_sym(const char *name, unsigned char info, uint16_t shndx, uint16_t versym)
{
	syms[nsyms++] = (struct eb_sym){ name, info, shndx, versym };
}

/* The symbol table of the synthetic images: every rule has a case. */
static void make_syms(void)
{
	for (unsigned int i = 0; i < N_ARCH; i++)
		add_sym(arch_names[i], GLOBAL_FUNC, 1, 2);
	add_sym("kc_weak", ELF64_ST_INFO(STB_WEAK, STT_FUNC), 1, 2);
	add_sym("kc_notype", ELF64_ST_INFO(STB_GLOBAL, STT_NOTYPE), 1, 2);
	add_sym("kc_other", GLOBAL_FUNC, 1, 3);
	add_sym("kc_hidden", GLOBAL_FUNC, 1, 0x8000 | 2);
	add_sym("kc_unversioned", GLOBAL_FUNC, 1, 1);
	add_sym("kc_local", ELF64_ST_INFO(STB_LOCAL, STT_FUNC), 1, 2);
	add_sym("kc_object", ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT), 1, 2);
	add_sym("kc_undef", GLOBAL_FUNC, SHN_UNDEF, 2);
	add_sym("kc_dup", GLOBAL_FUNC, 1, 2);	/* same name, two versions */
	add_sym("kc_dup", GLOBAL_FUNC, 1, 3);
	/* Enough symbols that every hash bucket holds a chain. */
	for (unsigned int i = 0; i < 24; i++) {
		snprintf(sym_names[i], sizeof(sym_names[i]), "kc_sym_%02u", i);
		add_sym(sym_names[i], GLOBAL_FUNC, 1, 2);
	}
}

/* The oracle: may input symbol k answer (version, its name)? */
static int eligible(unsigned int k, const char *version, unsigned int flags)
{
	const struct eb_sym *s = &syms[k];
	unsigned int type = ELF64_ST_TYPE(s->info), bind = ELF64_ST_BIND(s->info);
	unsigned int ndx = s->versym & 0x7fff;

	if ((type != STT_FUNC && type != STT_NOTYPE) ||
	    (bind != STB_GLOBAL && bind != STB_WEAK) || s->shndx == SHN_UNDEF)
		return 0;
	if (!version)
		return 1;
	return (flags & EB_VERSIONS) && ndx >= 2 &&
	       !strcmp(versions[ndx - 2], version);
}

/* Every (name, version) lookup gives exactly what the oracle allows. */
static void check_oracle(unsigned int flags, uint64_t vaddr)
{
	struct eb_image im;
	struct kc_vdso v;
	int r, bad = 0, hits = 0;

	if (eb_build(&im, syms, nsyms, versions, 2, flags, vaddr)) {
		tap_ok(0, "eb_build: out of memory");
		return;
	}
	r = kc_vdso_parse(&v, im.buf, im.len);
	tap_ok(r == 0, "synthetic image (%s%s%s, linked at %#llx) parses: %d",
	       flags & EB_SYSV_HASH ? "DT_HASH " : "",
	       flags & EB_GNU_HASH ? "DT_GNU_HASH " : "",
	       flags & EB_VERSIONS ? "versions" : "no versions",
	       (unsigned long long)vaddr, r);
	for (unsigned int k = 0; k < nsyms; k++) {
		for (unsigned int j = 0; j < N_PROBE_VER; j++) {
			const char *ver = probe_versions[j];
			void *got = kc_vdso_lookup(&v, ver, syms[k].name);
			int ok = got == NULL;

			/* Any eligible symbol of that name is a right answer. */
			for (unsigned int m = 0; m < nsyms; m++) {
				if (strcmp(syms[m].name, syms[k].name) ||
				    !eligible(m, ver, flags))
					continue;
				ok = got == eb_sym_addr(&im, m);
				if (ok)
					break;
			}
			if (!ok) {
				tap_diag("lookup(%s, %s) = %p wrong", ver ? ver : "NULL",
					 syms[k].name, got);
				bad++;
			}
			hits += got != NULL;
		}
	}
	tap_ok(bad == 0 && hits > 0, "%u names x %zu versions match the oracle (%d hits)",
	       nsyms, N_PROBE_VER, hits);
	tap_ok(!kc_vdso_lookup(&v, KC_VDSO_VERSION, "kc_absent") &&
	       !kc_vdso_lookup(&v, NULL, "") && !kc_vdso_lookup(&v, NULL, NULL),
	       "absent, empty and NULL names are not found");
	eb_free(&im);
}

/* ------------------------------------------------------------ corruptions */

static struct eb_image full;	/* all tables, linked high */

static unsigned char *dup_bytes(const unsigned char *b, size_t len)
{
	unsigned char *c = malloc(len ? len : 1);

	if (!c) {
		perror("malloc");
		exit(1);
	}
	memcpy(c, b, len);
	return c;
}

/* Every lookup answer lies in [b, b + len). */
static int lookups_in_bounds(const struct kc_vdso *v, const unsigned char *b, size_t len,
			     int *hits)
{
	static const char *const extra[] = { "kc_dup", "kc_sym_07", "kc_other", "kc_hidden" };
	int ok = 1;

	for (unsigned int j = 0; j < N_PROBE_VER; j++) {
		for (unsigned int i = 0; i < N_ARCH + 4; i++) {
			const char *name = i < N_ARCH ? arch_names[i] : extra[i - N_ARCH];
			const unsigned char *p = kc_vdso_lookup(v, probe_versions[j], name);

			if (p && (p < b || p >= b + len))
				ok = 0;
			if (p && hits)
				++*hits;
		}
	}
	return ok;
}

/*
 * Parse a corrupted copy of `full` (b, len): the result must be `want`,
 * and whatever the lookups return must lie inside the copy.
 */
static struct kc_vdso corrupt_check(const char *what, unsigned char *b, size_t len, int want)
{
	struct kc_vdso v;
	int r = kc_vdso_parse(&v, b, len);

	tap_ok(r == want && lookups_in_bounds(&v, b, len, NULL),
	       "%s: parse gives %d (want %d), lookups stay in bounds", what, r, want);
	return v;
}

#define PH(i)  (full.phoff + (i) * sizeof(Elf64_Phdr))
#define DYN(t) eb_find_dyn(full.buf, full.len, (t))
#define SYMNAME_OFF(i) (full.dynsym + (i) * sizeof(Elf64_Sym))

#define CORRUPT(what, want, ...) do {					\
	unsigned char *b = dup_bytes(full.buf, full.len);		\
	size_t len = full.len;						\
	__VA_ARGS__;							\
	corrupt_check(what, b, len, want);				\
	free(b);							\
} while (0)

/* A corruption that leaves a parseable image whose lookups must fail. */
#define CORRUPT_MISS(what, ver, name, ...) do {				\
	unsigned char *b = dup_bytes(full.buf, full.len);		\
	size_t len = full.len;						\
	struct kc_vdso v_;						\
	__VA_ARGS__;							\
	v_ = corrupt_check(what, b, len, 0);				\
	tap_ok(!kc_vdso_lookup(&v_, ver, name), "%s: %s not found", what, name); \
	free(b);							\
} while (0)

/* A change the format allows: the symbol must still be found. */
#define CORRUPT_FOUND(what, name, ...) do {				\
	unsigned char *b = dup_bytes(full.buf, full.len);		\
	size_t len = full.len;						\
	struct kc_vdso v_;						\
	__VA_ARGS__;							\
	v_ = corrupt_check(what, b, len, 0);				\
	tap_ok(kc_vdso_lookup(&v_, KC_VDSO_VERSION, name) != NULL,	\
	       "%s: %s found", what, name);				\
	free(b);							\
} while (0)

static void check_corruptions(void)
{
	struct kc_vdso v;
	int prefixes_ok = 1;
	uint64_t hi = full.vaddr;

	/* Every proper prefix: the PT_LOAD then extends past the end. */
	for (size_t n = 0; n < full.len; n++) {
		unsigned char *b = dup_bytes(full.buf, n);

		if (kc_vdso_parse(&v, b, n) == 0 || !lookups_in_bounds(&v, b, n, NULL))
			prefixes_ok = 0;
		free(b);
	}
	tap_ok(prefixes_ok, "all %zu proper prefixes are refused", full.len);
	CORRUPT("truncated to e_ident", -ENOEXEC, len = 8);
	CORRUPT("truncated inside the ELF header", -EINVAL, len = 40);

	CORRUPT("bad magic", -ENOEXEC, b[1] = 'X');
	CORRUPT("ELFCLASS32", -ENOEXEC, b[EI_CLASS] = ELFCLASS32);
	CORRUPT("wrong byte order", -ENOEXEC, b[EI_DATA] = EB_DATA == ELFDATA2LSB ? ELFDATA2MSB : ELFDATA2LSB);
	CORRUPT("EI_VERSION 0", -ENOEXEC, b[EI_VERSION] = 0);
	CORRUPT("ET_EXEC", -ENOEXEC, eb_put16(b, offsetof(Elf64_Ehdr, e_type), ET_EXEC));
	CORRUPT("foreign e_machine", -ENOEXEC, eb_put16(b, offsetof(Elf64_Ehdr, e_machine), EM_S390));

	CORRUPT("phdr table past the end", -EINVAL,
		eb_put64(b, offsetof(Elf64_Ehdr, e_phoff), len - sizeof(Elf64_Phdr) + 8));
	CORRUPT("e_phoff wraps around", -EINVAL,
		eb_put64(b, offsetof(Elf64_Ehdr, e_phoff), UINT64_MAX - 8));
	CORRUPT("e_phnum 65534", -EINVAL, eb_put16(b, offsetof(Elf64_Ehdr, e_phnum), 0xfffe));
	CORRUPT("e_phnum PN_XNUM", -EINVAL, eb_put16(b, offsetof(Elf64_Ehdr, e_phnum), PN_XNUM));
	CORRUPT("e_phentsize 32", -EINVAL, eb_put16(b, offsetof(Elf64_Ehdr, e_phentsize), 32));
	CORRUPT("no PT_LOAD", -EINVAL, eb_put32(b, PH(0), PT_NOTE));
	CORRUPT("no PT_DYNAMIC", -EINVAL, eb_put32(b, PH(1), PT_NOTE));
	CORRUPT("PT_LOAD past the end", -EINVAL,
		eb_put64(b, PH(0) + offsetof(Elf64_Phdr, p_filesz), len + 1));
	CORRUPT("PT_LOAD vaddr range wraps", -EINVAL,
		eb_put64(b, PH(0) + offsetof(Elf64_Phdr, p_vaddr), UINT64_MAX - 16));
	CORRUPT("PT_DYNAMIC outside the image", -EINVAL,
		eb_put64(b, PH(1) + offsetof(Elf64_Phdr, p_offset), len + 64));
	CORRUPT("PT_DYNAMIC size wraps", -EINVAL,
		eb_put64(b, PH(1) + offsetof(Elf64_Phdr, p_filesz), UINT64_MAX - 7));
	CORRUPT("empty PT_DYNAMIC", -EINVAL,
		eb_put64(b, PH(1) + offsetof(Elf64_Phdr, p_filesz), 0));

	CORRUPT("DT_SYMTAB outside every PT_LOAD", -EINVAL, eb_put64(b, DYN(DT_SYMTAB), hi + len));
	CORRUPT("DT_SYMTAB below the link address", -EINVAL, eb_put64(b, DYN(DT_SYMTAB), hi - 24));
	CORRUPT("no DT_SYMTAB", -EINVAL, eb_put64(b, DYN(DT_SYMTAB) - 8, DT_DEBUG));
	CORRUPT("DT_SYMENT 16", -EINVAL, eb_put64(b, DYN(DT_SYMENT), 16));
	CORRUPT("DT_STRTAB past the end", -EINVAL, eb_put64(b, DYN(DT_STRTAB), hi + len + 100));
	CORRUPT("no DT_STRTAB", -EINVAL, eb_put64(b, DYN(DT_STRTAB) - 8, DT_DEBUG));
	CORRUPT("DT_STRSZ past the end", -EINVAL, eb_put64(b, DYN(DT_STRSZ), len));
	CORRUPT("DT_STRSZ huge", -EINVAL, eb_put64(b, DYN(DT_STRSZ), UINT64_MAX));
	CORRUPT_MISS("st_name past DT_STRSZ", NULL, "kc_sym_07",
		     for (unsigned int i = 1; i < full.nsyms; i++)
			     eb_put32(b, SYMNAME_OFF(i), full.strsz + i));
	CORRUPT_MISS("DT_STRSZ cuts names short", NULL, "kc_sym_07",
		     eb_put64(b, DYN(DT_STRSZ), 2));
	CORRUPT("no hash table at all", -EINVAL,
		eb_put64(b, DYN(DT_HASH) - 8, DT_DEBUG);
		eb_put64(b, DYN(DT_GNU_HASH) - 8, DT_DEBUG));

	/* DT_HASH alone (the GNU table retagged away). */
	CORRUPT("DT_HASH nbucket 0", -EINVAL,
		eb_put64(b, DYN(DT_GNU_HASH) - 8, DT_DEBUG); eb_put32(b, full.hash, 0));
	CORRUPT("DT_HASH nchain past the symbol table", -EINVAL,
		eb_put32(b, full.hash + 4, 0x10000000));
	CORRUPT("DT_HASH nbucket past the end", -EINVAL, eb_put32(b, full.hash, 0xffffffff));
	CORRUPT_MISS("DT_HASH bucket index out of range", NULL, KC_VDSO_CLOCK_GETTIME,
		     eb_put64(b, DYN(DT_GNU_HASH) - 8, DT_DEBUG);
		     for (unsigned int i = 0; i < EB_NBUCKETS; i++)
			     eb_put32(b, full.hash + 8 + 4 * i, 0xfffffff0u));
	CORRUPT_MISS("DT_HASH chains that loop", NULL, "kc_absent",
		     eb_put64(b, DYN(DT_GNU_HASH) - 8, DT_DEBUG);
		     for (unsigned int i = 0; i < full.nsyms; i++)
			     eb_put32(b, full.hash + 8 + 4 * (EB_NBUCKETS + i), i));

	/* DT_GNU_HASH, preferred when both exist. */
	CORRUPT("GNU hash bloom size 0", -EINVAL, eb_put32(b, full.gnu_hash + 8, 0));
	CORRUPT("GNU hash bloom size 3", -EINVAL, eb_put32(b, full.gnu_hash + 8, 3));
	CORRUPT("GNU hash bloom size 2^31", -EINVAL, eb_put32(b, full.gnu_hash + 8, 0x80000000u));
	CORRUPT("GNU hash bloom shift 64", -EINVAL, eb_put32(b, full.gnu_hash + 12, 64));
	CORRUPT_FOUND("GNU hash bloom shift 40 (legal: selects bit 0)", KC_VDSO_CLOCK_GETTIME,
		      eb_put32(b, full.gnu_hash + 12, 40);
		      eb_put64(b, full.gnu_hash + 16, ~0ull);
		      eb_put64(b, full.gnu_hash + 24, ~0ull));
	CORRUPT("GNU hash nbuckets 0", -EINVAL, eb_put32(b, full.gnu_hash, 0));
	CORRUPT("GNU hash huge nbuckets", -EINVAL, eb_put32(b, full.gnu_hash, 0x40000000u));
	CORRUPT("GNU hash symoffset past the symbols", -EINVAL,
		eb_put32(b, full.gnu_hash + 4, full.nsyms + 1));
	CORRUPT("DT_GNU_HASH outside the image", -EINVAL,
		eb_put64(b, DYN(DT_GNU_HASH), hi + len - 8));
	CORRUPT_MISS("GNU hash bucket index out of range", NULL, KC_VDSO_CLOCK_GETTIME,
		     for (unsigned int i = 0; i < EB_NBUCKETS; i++)
			     eb_put32(b, full.gnu_hash + 16 + 8 * EB_BLOOM_WORDS + 4 * i,
				      0xfffffff0u));
	CORRUPT_MISS("GNU hash bucket below symoffset", NULL, KC_VDSO_CLOCK_GETTIME,
		     eb_put32(b, full.gnu_hash + 4, 5);
		     for (unsigned int i = 0; i < EB_NBUCKETS; i++)
			     eb_put32(b, full.gnu_hash + 16 + 8 * EB_BLOOM_WORDS + 4 * i, 1));
	CORRUPT_MISS("GNU hash chains without an end bit", NULL, "kc_absent",
		     eb_put64(b, full.gnu_hash + 16, ~0ull);
		     eb_put64(b, full.gnu_hash + 24, ~0ull);
		     for (unsigned int i = 0; i + 1 < full.nsyms; i++)
			     eb_put32(b, full.gnu_hash + 16 + 8 * EB_BLOOM_WORDS +
				      4 * (EB_NBUCKETS + i), 0));
	CORRUPT_MISS("GNU hash Bloom filter all zero", NULL, KC_VDSO_CLOCK_GETTIME,
		     eb_put64(b, full.gnu_hash + 16, 0);
		     eb_put64(b, full.gnu_hash + 24, 0));

	/* Where the format says "stop" or "no", the parser must not look on. */
	{
		unsigned char *b = dup_bytes(full.buf, full.len);
		size_t chains = full.gnu_hash + 16 + 8 * EB_BLOOM_WORDS + 4 * EB_NBUCKETS;
		const char *first = syms[full.order[0]].name, *second = syms[full.order[1]].name;

		/* Symbols 1 and 2 share bucket 0 (the builder sorts by bucket). */
		for (unsigned int i = 0; i + 1 < full.nsyms; i++)
			eb_put32(b, chains + 4 * i, eb_get32(b, chains + 4 * i) | 1);
		v = corrupt_check("GNU chains ended after one symbol", b, full.len, 0);
		tap_ok(eb_gnu_hash(first) % EB_NBUCKETS == eb_gnu_hash(second) % EB_NBUCKETS &&
		       kc_vdso_lookup(&v, NULL, first) && !kc_vdso_lookup(&v, NULL, second),
		       "an early end bit hides the rest of the bucket (%s found, %s not)",
		       first, second);
		memcpy(b, full.buf, full.len);
		eb_put32(b, chains + 4 * 1, eb_get32(b, chains + 4 * 1) ^ 0x100);
		v = corrupt_check("GNU chain hash of symbol 2 changed", b, full.len, 0);
		tap_ok(!kc_vdso_lookup(&v, NULL, second),
		       "a symbol whose chain hash differs is not found (%s)", second);
		free(b);
	}
	/*
	 * A PT_LOAD that starts at file offset 64: same link addresses, so
	 * the same bytes, found only by translating through p_offset.
	 */
	{
		unsigned char *b = dup_bytes(full.buf, full.len);
		const unsigned char *want = eb_sym_addr(&full, 0);	/* arch_names[0] */

		eb_put64(b, PH(0) + offsetof(Elf64_Phdr, p_offset), 64);
		eb_put64(b, PH(0) + offsetof(Elf64_Phdr, p_vaddr), hi + 64);
		eb_put64(b, PH(0) + offsetof(Elf64_Phdr, p_filesz), full.len - 64);
		v = corrupt_check("PT_LOAD at file offset 64", b, full.len, 0);
		tap_ok(kc_vdso_lookup(&v, KC_VDSO_VERSION, arch_names[0]) == b + (want - full.buf),
		       "addresses translate through p_offset and p_vaddr");
		free(b);
	}

	/* Versions. */
	CORRUPT_MISS("DT_VERSYM entries past the end", KC_VDSO_VERSION, "kc_sym_07",
		     eb_put64(b, DYN(DT_VERSYM), hi + len - 2));
	CORRUPT_MISS("versym index 0x7fff", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     for (unsigned int i = 0; i < full.nsyms; i++)
			     eb_put16(b, full.versym + 2 * i, 0x7fff));
	CORRUPT("DT_VERSYM outside every PT_LOAD", -EINVAL,
		eb_put64(b, DYN(DT_VERSYM), hi + len + 2));
	CORRUPT("DT_VERDEF outside every PT_LOAD", -EINVAL,
		eb_put64(b, DYN(DT_VERDEF), hi - 1));
	CORRUPT_MISS("verdef list cut after the base entry", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     eb_put32(b, full.verdef + offsetof(Elf64_Verdef, vd_next), 0));
	CORRUPT_MISS("vd_next leaves the image", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     eb_put32(b, full.verdef + offsetof(Elf64_Verdef, vd_next), 0xfffffff0u));
	CORRUPT_MISS("vd_aux leaves the image", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     eb_put32(b, full.verdef + 28 + offsetof(Elf64_Verdef, vd_aux), 0xfffffff0u));
	CORRUPT_MISS("vda_name past DT_STRSZ", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     eb_put32(b, full.verdef + 28 + sizeof(Elf64_Verdef), 0xfffffff0u));
	CORRUPT_MISS("no DT_VERDEF", KC_VDSO_VERSION, KC_VDSO_CLOCK_GETTIME,
		     eb_put64(b, DYN(DT_VERDEF) - 8, DT_DEBUG));

	/* A failed parse leaves nothing a lookup can use. */
	{
		unsigned char *b = dup_bytes(full.buf, full.len);

		b[EI_CLASS] = ELFCLASS32;
		tap_ok(kc_vdso_parse(&v, b, full.len) == -ENOEXEC &&
		       !kc_vdso_lookup(&v, NULL, KC_VDSO_CLOCK_GETTIME),
		       "lookups in a struct whose parse failed find nothing");
		free(b);
	}
	tap_ok(!kc_vdso_lookup(NULL, NULL, KC_VDSO_CLOCK_GETTIME), "lookup in NULL finds nothing");
}

/* ---------------------------------------------------------- mutation loop */

static uint64_t rng;

static uint64_t rnd(void)	/* xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return rng * 0x2545f4914f6cdd1dull;
}

static void mutate(unsigned char *b, size_t len)
{
	static const uint64_t interesting[] = {
		0, 1, 2, 0x7f, 0x80, 0xff, 0x7fff, 0xffff, 0x7fffffff, 0x80000000,
		0xffffffff, 0x100000000ull, INT64_MAX, UINT64_MAX, UINT64_MAX - 7,
	};
	static const unsigned int widths[] = { 1, 2, 4, 8 };
	size_t off, w;
	uint64_t val;

	if (!len)
		return;
	/* Half of the mutations hit the ELF header or the program headers,
	 * where one change redirects the whole parse. */
	switch (rnd() % 6) {
	case 0:
		b[rnd() % len] = (unsigned char)rnd();
		return;
	case 1:
		b[rnd() % len] ^= 1u << (rnd() % 8);
		return;
	case 2: {	/* move a run of bytes: duplicates table entries */
		size_t from = rnd() % len, to = rnd() % len, n = 1 + rnd() % 32;

		if (n > len - from)
			n = len - from;
		if (n > len - to)
			n = len - to;
		memmove(b + to, b + from, n);
		return;
	}
	case 3:
		off = rnd() % (len < 64 ? len : 64);
		break;
	case 4:
		off = 64 + rnd() % 176;		/* where program headers usually are */
		off = off < len ? off : rnd() % len;
		break;
	default:
		off = rnd() % len & ~(size_t)3;
		break;
	}
	w = widths[rnd() % 4];
	switch (rnd() % 3) {
	case 0:
		val = interesting[rnd() % (sizeof(interesting) / sizeof(interesting[0]))];
		break;
	case 1:
		val = len + (rnd() % 64) - 32;
		break;
	default:
		val = rnd();
		break;
	}
	if (w > len - off)
		w = len - off;
	memcpy(b + off, &val, w);	/* little end first on LE; any bytes do */
}

static void mutation_loop(const char *what, const unsigned char *img, size_t len,
			  unsigned int iters, uint64_t seed)
{
	unsigned int parsed = 0, bad = 0;
	int hits = 0;

	rng = seed;
	for (unsigned int i = 0; i < iters; i++) {
		size_t n = rnd() % 8 ? len : rnd() % (len + 1);
		/* An exact-size copy: ASan sees a read one byte past the end. */
		unsigned char *b = dup_bytes(img, n);
		unsigned int muts = 1 + rnd() % 4;
		struct kc_vdso v;
		int r;

		for (unsigned int m = 0; m < muts; m++)
			mutate(b, n);
		r = kc_vdso_parse(&v, b, n);
		if (r != 0 && r != -EINVAL && r != -ENOEXEC)
			bad++;
		parsed += r == 0;
		if (!lookups_in_bounds(&v, b, n, &hits))
			bad++;
		free(b);
	}
	tap_ok(bad == 0 && parsed > 0,
	       "%s: %u mutated images (seed %#llx): %u parsed, %d lookups hit, "
	       "all results in bounds", what, iters, (unsigned long long)seed, parsed, hits);
}

/* ---------------------------------------------------------------- live */

static long ts_cmp(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec != b->tv_sec ? (a->tv_sec < b->tv_sec ? -1 : 1) :
	       (long)(a->tv_nsec - b->tv_nsec);
}

static void check_live_clocks(void)
{
	static const struct { clockid_t id; const char *name; } clocks[] = {
		{ CLOCK_MONOTONIC, "CLOCK_MONOTONIC" },
		{ CLOCK_REALTIME, "CLOCK_REALTIME" },
		{ CLOCK_MONOTONIC_RAW, "CLOCK_MONOTONIC_RAW" },
		{ CLOCK_BOOTTIME, "CLOCK_BOOTTIME" },
		{ CLOCK_MONOTONIC_COARSE, "CLOCK_MONOTONIC_COARSE" },
	};
	int (*cgt)(clockid_t, struct timespec *) =
		(int (*)(clockid_t, struct timespec *))kc_vdso_sym(KC_VDSO_CLOCK_GETTIME);
	struct timespec ts;

	if (!cgt) {
		tap_ok(0, "the live vDSO has no " KC_VDSO_CLOCK_GETTIME);
		return;
	}
	for (unsigned int i = 0; i < sizeof(clocks) / sizeof(clocks[0]); i++) {
		struct timespec a, b, c;
		int ra = kc_clock_gettime_syscall(clocks[i].id, &a);
		int rb = cgt(clocks[i].id, &b);
		int rc = kc_clock_gettime_syscall(clocks[i].id, &c);

		tap_ok(!ra && !rb && !rc && ts_cmp(&a, &b) <= 0 && ts_cmp(&b, &c) <= 0,
		       "vDSO %s is bracketed by the syscall: %lld.%09ld <= %lld.%09ld <= %lld.%09ld",
		       clocks[i].name, (long long)a.tv_sec, a.tv_nsec,
		       (long long)b.tv_sec, b.tv_nsec, (long long)c.tv_sec, c.tv_nsec);
	}
	/* The error convention <kcross/arch.h> documents for this architecture. */
#ifdef KC_VDSO_ERR_POSITIVE
	tap_eq_long(cgt(123, &ts), EINVAL, "vDSO clock 123 fails with a positive errno");
#else
	tap_eq_long(cgt(123, &ts), -EINVAL, "vDSO clock 123 fails with -errno");
#endif
}

static void check_live_getcpu(void)
{
#ifdef KC_VDSO_GETCPU
	long (*gc)(unsigned *, unsigned *, void *) =
		(long (*)(unsigned *, unsigned *, void *))kc_vdso_sym(KC_VDSO_GETCPU);
	unsigned int tried = 0, bad = 0;
	cpu_set_t orig, one;

	if (!gc) {
		tap_ok(0, "the live vDSO has no " KC_VDSO_GETCPU);
		return;
	}
	if (sched_getaffinity(0, sizeof(orig), &orig)) {
		tap_skip("sched_getaffinity failed: getcpu comparison skipped");
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		unsigned int c1 = ~0u, n1 = ~0u, c2 = ~0u, n2 = ~0u;
		long r1, r2;

		if (!CPU_ISSET(cpu, &orig))
			continue;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		if (sched_setaffinity(0, sizeof(one), &one))
			continue;	/* offline meanwhile, or cpuset-restricted */
		tried++;
		r1 = gc(&c1, &n1, NULL);
		r2 = kc_getcpu_syscall(&c2, &n2);
		if (r1 || r2 || c1 != (unsigned int)cpu || c2 != c1 || n1 != n2) {
			tap_diag("pinned to CPU %d: vDSO %ld cpu %u node %u, syscall %ld cpu %u node %u",
				 cpu, r1, c1, n1, r2, c2, n2);
			bad++;
		}
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	tap_ok(tried > 0 && bad == 0, "vDSO getcpu equals the syscall pinned to each of %u CPUs",
	       tried);
#else
	tap_skip("the " KC_ARCH_NAME " vDSO exports no getcpu");
#endif
}

/* Lookups in a copy with one hash table retagged away agree with the live image. */
static void check_live_hash_variants(const unsigned char *live, size_t len)
{
	static const struct { int64_t drop; const char *left; } variants[] = {
		{ DT_GNU_HASH, "DT_HASH" },
		{ DT_HASH, "DT_GNU_HASH" },
	};

	for (unsigned int i = 0; i < 2; i++) {
		unsigned char *b = dup_bytes(live, len);
		size_t at = eb_find_dyn(b, len, variants[i].drop);
		struct kc_vdso v;
		int same = 1;

		if (!at || !eb_find_dyn(b, len, variants[i].drop == DT_HASH ? DT_GNU_HASH : DT_HASH)) {
			tap_skip("the live vDSO does not have both hash tables: %s-only lookup not compared",
				 variants[i].left);
			free(b);
			continue;
		}
		eb_put64(b, at - 8, DT_DEBUG);
		if (!tap_ok(kc_vdso_parse(&v, b, len) == 0, "live copy with %s only parses",
			    variants[i].left)) {
			free(b);
			continue;
		}
		for (unsigned int k = 0; k < N_ARCH; k++) {
			const unsigned char *p = kc_vdso_lookup(&v, KC_VDSO_VERSION, arch_names[k]);
			const unsigned char *q = kc_vdso_sym(arch_names[k]);

			same &= p && q && p - b == q - live;
		}
		tap_ok(same, "lookups through %s alone find the same offsets", variants[i].left);
		free(b);
	}
}

static void check_live(void)
{
	unsigned long at = getauxval(AT_SYSINFO_EHDR);
	const struct kc_vdso *self = kc_vdso_self();
	const unsigned char *live;
	unsigned char *copy;
	struct kc_vdso v;
	size_t len;
	int same = 1;

	if (!at) {
		tap_skip("no AT_SYSINFO_EHDR in the auxiliary vector (qemu-user?): "
			 "live vDSO checks skipped");
		tap_ok(!self && !kc_vdso_sym(KC_VDSO_CLOCK_GETTIME),
		       "kc_vdso_self() and kc_vdso_sym() give NULL without a vDSO");
		return;
	}
	if (!tap_ok(self != NULL, "the live vDSO at %#lx parses", at))
		return;
	live = kc_vdso_image(self, &len);
	tap_ok(live == (const unsigned char *)at && len >= sizeof(Elf64_Ehdr) && len <= 1u << 20,
	       "kc_vdso_image() is AT_SYSINFO_EHDR, %zu bytes", len);
	tap_ok(kc_vdso_self() == self, "kc_vdso_self() returns the same parse each time");

	for (unsigned int k = 0; k < N_ARCH; k++) {
		const unsigned char *p = kc_vdso_sym(arch_names[k]);

		tap_ok(p && p >= live && p < live + len &&
		       p == kc_vdso_lookup(self, KC_VDSO_VERSION, arch_names[k]) &&
		       p == kc_vdso_lookup(self, NULL, arch_names[k]),
		       "%s@%s found at offset %#tx", arch_names[k], KC_VDSO_VERSION,
		       p ? p - live : (ptrdiff_t)-1);
	}
	tap_ok(!kc_vdso_sym("__kc_no_such_function") &&
	       !kc_vdso_lookup(self, NULL, "__kc_no_such_function"),
	       "an unknown name is not found");
	tap_ok(!kc_vdso_lookup(self, "LINUX_0.0", KC_VDSO_CLOCK_GETTIME),
	       "a known name under an unknown version is not found");

	copy = dup_bytes(live, len);
	if (tap_ok(kc_vdso_parse(&v, copy, len) == 0, "a heap copy of the live vDSO parses")) {
		for (unsigned int k = 0; k < N_ARCH; k++) {
			const unsigned char *p = kc_vdso_lookup(&v, KC_VDSO_VERSION, arch_names[k]);
			const unsigned char *q = kc_vdso_sym(arch_names[k]);

			same &= p && q && p - copy == q - live;
		}
		tap_ok(same, "the copy's lookups give the live offsets");
	}
	free(copy);
	check_live_hash_variants(live, len);
	check_live_clocks();
	check_live_getcpu();
	mutation_loop("live vDSO copy", live, len, 20000, 0x6b63726f7373ull);
}

int main(void)
{
	static const unsigned int layouts[] = {
		EB_SYSV_HASH | EB_GNU_HASH | EB_VERSIONS,
		EB_SYSV_HASH | EB_VERSIONS,
		EB_GNU_HASH | EB_VERSIONS,
		EB_SYSV_HASH | EB_GNU_HASH,
		EB_SYSV_HASH,
		EB_GNU_HASH,
	};

	make_syms();
	for (unsigned int i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++) {
		check_oracle(layouts[i], 0);
		check_oracle(layouts[i], LINK_HIGH);
	}
	if (eb_build(&full, syms, nsyms, versions, 2,
		     EB_SYSV_HASH | EB_GNU_HASH | EB_VERSIONS, LINK_HIGH)) {
		tap_ok(0, "eb_build: out of memory");
		return tap_done();
	}
	check_corruptions();
	mutation_loop("synthetic image", full.buf, full.len, 20000, 0x1badb002ull);
	eb_free(&full);
	check_live();
	return tap_done();
}
