/* SPDX-License-Identifier: MIT */
/*
 * kcross/vdso.h - find functions in the vDSO, or in any ELF64 shared object
 * image of this machine's class, byte order and e_machine.
 *
 * The parser treats its input as hostile: every read is checked against the
 * image length, and nothing (section, dynamic tag, hash table, version table,
 * symbol) is assumed to exist.  Only the dynamic symbol table is used, found
 * through PT_DYNAMIC; section headers are never read.
 *
 * The image is taken in file layout: a link-time address is turned into an
 * image offset through the PT_LOAD segment that contains it (offset =
 * vaddr - p_vaddr + p_offset).  The kernel maps the vDSO as one segment at
 * file offset 0, so for the live vDSO file layout and memory layout agree.
 *
 * Symbol versions: kc_vdso_lookup(v, version, name) with a non-NULL version
 * matches only a symbol whose DT_VERSYM entry names a DT_VERDEF entry of that
 * name; an image without DT_VERSYM/DT_VERDEF therefore matches only version
 * NULL.  Version NULL places no requirement on the version.
 *
 * Only defined (st_shndx != SHN_UNDEF) STB_GLOBAL or STB_WEAK symbols of
 * type STT_FUNC or STT_NOTYPE are found.  With both DT_GNU_HASH and DT_HASH
 * present, lookups use DT_GNU_HASH (its Bloom filter rejects most misses
 * without touching the symbol table).
 */
#ifndef KCROSS_VDSO_H
#define KCROSS_VDSO_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <kcross/arch.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A parsed image.  Public only so that callers can keep one on the stack;
 * every field is private to src/vdso.c.  All offsets are byte offsets into
 * the image and were checked against len by kc_vdso_parse().
 */
struct kc_vdso {
	const unsigned char *base;	/* the image */
	size_t len;			/* its length in bytes */
	uint64_t phoff;			/* program header table */
	uint32_t phnum;
	uint32_t have;			/* KC__VDSO_* bits: tables present */
	uint64_t symtab;		/* DT_SYMTAB */
	uint64_t nsyms;			/* bound on symbol indices */
	uint64_t strtab, strsz;		/* DT_STRTAB, DT_STRSZ */
	uint64_t versym;		/* DT_VERSYM */
	uint64_t verdef;		/* DT_VERDEF */
	uint64_t verdefnum;		/* DT_VERDEFNUM, or a bound if absent */
	uint64_t hash;			/* DT_HASH: its bucket array */
	uint32_t nbucket, nchain;
	uint64_t gnu_bloom;		/* DT_GNU_HASH: its Bloom filter */
	uint64_t gnu_buckets, gnu_chains;
	uint32_t gnu_nbuckets, gnu_symoffset;
	uint32_t gnu_bloom_size, gnu_bloom_shift;
};

/*
 * Parse image[0, len).  Returns 0, -ENOEXEC when the image is not an ELF64
 * ET_DYN object of this machine's class, byte order and e_machine, or
 * -EINVAL when it is one but is inconsistent: a table outside the image, no
 * PT_LOAD or PT_DYNAMIC, no DT_SYMTAB/DT_STRTAB, no usable hash table, a
 * malformed hash table.  On error *v is left unusable.  The image must stay
 * mapped and unchanged for as long as *v is used.
 */
int kc_vdso_parse(struct kc_vdso *v, const void *image, size_t len);

/*
 * The address in the image of the symbol `name` with version `version`
 * (NULL: any version), or NULL.
 */
void *kc_vdso_lookup(const struct kc_vdso *v, const char *version,
		     const char *name);

/* The image a successful kc_vdso_parse() saw; *len gets its length. */
const void *kc_vdso_image(const struct kc_vdso *v, size_t *len);

/*
 * This process's vDSO (AT_SYSINFO_EHDR), parsed once and kept; NULL when
 * the kernel (or emulator: qemu-user often provides none) gave no vDSO or it
 * did not parse.  Thread-safe; the first call does the work, and a library
 * constructor makes that call before main().
 */
const struct kc_vdso *kc_vdso_self(void);

/* kc_vdso_lookup(kc_vdso_self(), KC_VDSO_VERSION, name), NULL-safe. */
void *kc_vdso_sym(const char *name);

/* The types of the vDSO functions kcross calls (KC_VDSO_GETCPU,
 * KC_VDSO_CLOCK_GETTIME from the arch header): the kernel's own prototypes. */
typedef long (*kc_vdso_getcpu_fn)(unsigned int *cpu, unsigned int *node, void *unused);
typedef int (*kc_vdso_clock_gettime_fn)(clockid_t clock, struct timespec *ts);

#ifdef __cplusplus
}
#endif
#endif /* KCROSS_VDSO_H */
