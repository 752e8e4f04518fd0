/* SPDX-License-Identifier: MIT */
/*
 * Builds small, valid ELF64 shared-object images of this machine's kind,
 * shaped like a vDSO: one PT_LOAD at file offset 0 covering the whole file,
 * a PT_DYNAMIC, a dynamic symbol table, and optionally DT_HASH, DT_GNU_HASH
 * and DT_VERSYM/DT_VERDEF.  No section headers.  The tests use them where
 * there is no live vDSO (qemu-user) and as a layout they know exactly, to
 * corrupt one field at a time; the fuzzer's seed corpus includes them.
 *
 * The hash functions and table layouts here are written from the ELF gABI
 * and the GNU hash description independently of src/vdso.c, so a mistake
 * in one is not silently shared by the other.
 */
#ifndef KCROSS_TESTS_ELF_BUILDER_H
#define KCROSS_TESTS_ELF_BUILDER_H

#include <elf.h>
#include <kcross/arch.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The ELF e_machine of this architecture, from <kcross/arch.h>. */
#define EB_MACHINE KC_ELF_MACHINE

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define EB_DATA ELFDATA2LSB
#else
# define EB_DATA ELFDATA2MSB
#endif

#define EB_TEXT_STRIDE 16	/* bytes of "code" per symbol */
#define EB_NBUCKETS 3
#define EB_BLOOM_WORDS 2
#define EB_BLOOM_SHIFT 6
#define EB_BASE_NAME "linux-vdso.so.1"

enum { EB_SYSV_HASH = 1, EB_GNU_HASH = 2, EB_VERSIONS = 4 };

struct eb_sym {
	const char *name;
	unsigned char info;	/* ELF64_ST_INFO(bind, type) */
	uint16_t shndx;		/* SHN_UNDEF, or any defined section index */
	uint16_t versym;	/* DT_VERSYM entry: 1 global, 2.. versions[i-2] */
};

/* A built image and where its parts are, for tests that corrupt them. */
struct eb_image {
	unsigned char *buf;	/* malloc'd, exactly len bytes */
	size_t len;
	uint64_t vaddr;		/* link address of file offset 0 */
	size_t phoff, dyn, ndyn, dynsym, dynstr, strsz, hash, gnu_hash;
	size_t versym, verdef, text;
	unsigned int nsyms;	/* including the null symbol 0 */
	unsigned int *order;	/* order[i]: input index of symbol i + 1 */
};

static inline uint32_t eb_elf_hash(const char *s)
{
	uint32_t h = 0;

	while (*s) {
		h = (h << 4) + (unsigned char)*s++;
		h ^= (h & 0xf0000000u) >> 24;
		h &= 0x0fffffffu;
	}
	return h;
}

static inline uint32_t eb_gnu_hash(const char *s)
{
	uint32_t h = 5381;

	while (*s)
		h = (h << 5) + h + (unsigned char)*s++;
	return h;
}

static inline void eb_put16(unsigned char *b, size_t off, uint16_t v) { memcpy(b + off, &v, 2); }
static inline void eb_put32(unsigned char *b, size_t off, uint32_t v) { memcpy(b + off, &v, 4); }
static inline void eb_put64(unsigned char *b, size_t off, uint64_t v) { memcpy(b + off, &v, 8); }
static inline uint32_t eb_get32(const unsigned char *b, size_t off)
{
	uint32_t v;

	memcpy(&v, b + off, 4);
	return v;
}
static inline uint64_t eb_get64(const unsigned char *b, size_t off)
{
	uint64_t v;

	memcpy(&v, b + off, 8);
	return v;
}

static inline size_t eb_align8(size_t n)
{
	return (n + 7) & ~(size_t)7;
}

/* Address in im of the code of input symbol k. */
static inline const unsigned char *eb_sym_addr(const struct eb_image *im, unsigned int k)
{
	for (unsigned int i = 0; i + 1 < im->nsyms; i++)
		if (im->order[i] == k)
			return im->buf + im->text + (size_t)i * EB_TEXT_STRIDE;
	return NULL;
}

/*
 * File offset of the d_val of the first dynamic entry with this tag in a
 * trusted image (one eb_build made, or the live vDSO), or 0.
 */
static inline size_t eb_find_dyn(const unsigned char *b, size_t len, int64_t tag)
{
	Elf64_Ehdr eh;
	Elf64_Phdr ph;
	Elf64_Dyn d;

	memcpy(&eh, b, sizeof(eh));
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		memcpy(&ph, b + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_DYNAMIC)
			continue;
		for (size_t off = ph.p_offset; off + sizeof(d) <= len &&
		     off + sizeof(d) <= ph.p_offset + ph.p_filesz; off += sizeof(d)) {
			memcpy(&d, b + off, sizeof(d));
			if (d.d_tag == DT_NULL)
				break;
			if (d.d_tag == tag)
				return off + offsetof(Elf64_Dyn, d_un);
		}
	}
	return 0;
}

static inline void eb_free(struct eb_image *im)
{
	free(im->buf);
	free(im->order);
	im->buf = NULL;
	im->order = NULL;
}

/*
 * Build an image of syms[0..n) with the version names versions[0..nver)
 * (versym indices 2..nver+1) and the tables in flags, linked at vaddr.
 * Returns 0, or -1 if out of memory.
 */
static inline int eb_build(struct eb_image *im, const struct eb_sym *syms,
			   unsigned int n, const char *const *versions,
			   unsigned int nver, unsigned int flags, uint64_t vaddr)
{
	size_t strsz = 1 + sizeof(EB_BASE_NAME), off, p;
	unsigned int nb[EB_NBUCKETS] = { 0 }, start[EB_NBUCKETS];
	unsigned char *b;
	Elf64_Ehdr eh;
	Elf64_Phdr ph;

	memset(im, 0, sizeof(*im));
	im->vaddr = vaddr;
	im->nsyms = n + 1;
	im->order = calloc(n + 1, sizeof(*im->order));
	if (!im->order)
		return -1;
	/* GNU hash wants each bucket's symbols contiguous: sort by bucket. */
	for (unsigned int k = 0; k < n; k++)
		nb[eb_gnu_hash(syms[k].name) % EB_NBUCKETS]++;
	for (unsigned int c = 0, s = 0; c < EB_NBUCKETS; s += nb[c++])
		start[c] = s;
	for (unsigned int k = 0; k < n; k++)
		im->order[start[eb_gnu_hash(syms[k].name) % EB_NBUCKETS]++] = k;

	for (unsigned int k = 0; k < n; k++)
		strsz += strlen(syms[k].name) + 1;
	for (unsigned int k = 0; k < nver; k++)
		strsz += strlen(versions[k]) + 1;

	off = sizeof(Elf64_Ehdr);
	im->phoff = off;
	off += 2 * sizeof(Elf64_Phdr);
	im->dyn = off;
	im->ndyn = 10;
	off += im->ndyn * sizeof(Elf64_Dyn);
	im->dynsym = off;
	off += (size_t)im->nsyms * sizeof(Elf64_Sym);
	im->dynstr = off;
	im->strsz = strsz;
	off = eb_align8(off + strsz);
	if (flags & EB_SYSV_HASH) {
		im->hash = off;
		off = eb_align8(off + 8 + 4 * (EB_NBUCKETS + (size_t)im->nsyms));
	}
	if (flags & EB_GNU_HASH) {
		im->gnu_hash = off;
		off = eb_align8(off + 16 + 8 * EB_BLOOM_WORDS + 4 * EB_NBUCKETS + 4 * (size_t)n);
	}
	if (flags & EB_VERSIONS) {
		im->versym = off;
		off = eb_align8(off + 2 * (size_t)im->nsyms);
		im->verdef = off;
		off += (nver + 1) * (sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux));
		off = eb_align8(off);
	}
	im->text = off;
	off += (size_t)n * EB_TEXT_STRIDE;
	im->len = off;

	b = im->buf = calloc(1, im->len);
	if (!b) {
		eb_free(im);
		return -1;
	}

	memset(&eh, 0, sizeof(eh));
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = EB_DATA;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EB_MACHINE;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = im->phoff;
	eh.e_ehsize = sizeof(eh);
	eh.e_phentsize = sizeof(Elf64_Phdr);
	eh.e_phnum = 2;
	memcpy(b, &eh, sizeof(eh));

	memset(&ph, 0, sizeof(ph));
	ph.p_type = PT_LOAD;
	ph.p_flags = PF_R | PF_X;
	ph.p_vaddr = ph.p_paddr = vaddr;
	ph.p_filesz = ph.p_memsz = im->len;
	ph.p_align = 4096;
	memcpy(b + im->phoff, &ph, sizeof(ph));
	ph.p_type = PT_DYNAMIC;
	ph.p_flags = PF_R;
	ph.p_offset = im->dyn;
	ph.p_vaddr = ph.p_paddr = vaddr + im->dyn;
	ph.p_filesz = ph.p_memsz = im->ndyn * sizeof(Elf64_Dyn);
	ph.p_align = 8;
	memcpy(b + im->phoff + sizeof(ph), &ph, sizeof(ph));

	/* Dynamic section; unused slots stay DT_NULL (0). */
	{
		Elf64_Dyn d[10];
		unsigned int i = 0;

#define EB_DYN(t, v) (d[i].d_tag = (t), d[i++].d_un.d_val = (v))
		memset(d, 0, sizeof(d));
		if (flags & EB_SYSV_HASH)
			EB_DYN(DT_HASH, vaddr + im->hash);
		if (flags & EB_GNU_HASH)
			EB_DYN(DT_GNU_HASH, vaddr + im->gnu_hash);
		EB_DYN(DT_SYMTAB, vaddr + im->dynsym);
		EB_DYN(DT_STRTAB, vaddr + im->dynstr);
		EB_DYN(DT_STRSZ, im->strsz);
		EB_DYN(DT_SYMENT, sizeof(Elf64_Sym));
		if (flags & EB_VERSIONS) {
			EB_DYN(DT_VERSYM, vaddr + im->versym);
			EB_DYN(DT_VERDEF, vaddr + im->verdef);
			EB_DYN(DT_VERDEFNUM, nver + 1);
		}
#undef EB_DYN
		memcpy(b + im->dyn, d, sizeof(d));
	}

	/* Strings: "", the base name, symbol names, version names. */
	p = im->dynstr + 1;
	memcpy(b + p, EB_BASE_NAME, sizeof(EB_BASE_NAME));
	p += sizeof(EB_BASE_NAME);

	/* Symbols, their code, versym entries and the SysV hash chains. */
	for (unsigned int i = 0; i < n; i++) {
		const struct eb_sym *s = &syms[im->order[i]];
		size_t text = im->text + (size_t)i * EB_TEXT_STRIDE;
		Elf64_Sym es;

		memset(&es, 0, sizeof(es));
		es.st_name = p - im->dynstr;
		es.st_info = s->info;
		es.st_shndx = s->shndx;
		es.st_value = vaddr + text;
		es.st_size = EB_TEXT_STRIDE;
		memcpy(b + im->dynsym + (i + 1) * sizeof(es), &es, sizeof(es));
		memcpy(b + p, s->name, strlen(s->name) + 1);
		p += strlen(s->name) + 1;
		memset(b + text, 0xc3, EB_TEXT_STRIDE);	/* not executed */
		if (flags & EB_VERSIONS)
			eb_put16(b, im->versym + 2 * (i + 1), s->versym);
		if (flags & EB_SYSV_HASH) {
			size_t bucket = im->hash + 8 + 4 * (eb_elf_hash(s->name) % EB_NBUCKETS);
			size_t chain = im->hash + 8 + 4 * (EB_NBUCKETS + i + 1);

			eb_put32(b, chain, eb_get32(b, bucket));
			eb_put32(b, bucket, i + 1);
		}
	}
	if (flags & EB_SYSV_HASH) {
		eb_put32(b, im->hash, EB_NBUCKETS);
		eb_put32(b, im->hash + 4, im->nsyms);
	}

	if (flags & EB_GNU_HASH) {
		size_t bloom = im->gnu_hash + 16;
		size_t buckets = bloom + 8 * EB_BLOOM_WORDS;
		size_t chains = buckets + 4 * EB_NBUCKETS;

		eb_put32(b, im->gnu_hash, EB_NBUCKETS);
		eb_put32(b, im->gnu_hash + 4, 1);	/* symoffset */
		eb_put32(b, im->gnu_hash + 8, EB_BLOOM_WORDS);
		eb_put32(b, im->gnu_hash + 12, EB_BLOOM_SHIFT);
		for (unsigned int i = 0; i < n; i++) {
			uint32_t h = eb_gnu_hash(syms[im->order[i]].name);
			size_t w = bloom + 8 * ((h / 64) % EB_BLOOM_WORDS);
			unsigned int c = h % EB_NBUCKETS;
			int last = i + 1 == n ||
				   eb_gnu_hash(syms[im->order[i + 1]].name) % EB_NBUCKETS != c;

			eb_put64(b, w, eb_get64(b, w) | 1ull << (h % 64) |
				       1ull << ((h >> EB_BLOOM_SHIFT) % 64));
			if (!eb_get32(b, buckets + 4 * c))
				eb_put32(b, buckets + 4 * c, i + 1);
			eb_put32(b, chains + 4 * i, (h & ~1u) | (last ? 1 : 0));
		}
	}

	if (flags & EB_VERSIONS) {
		for (unsigned int k = 0; k <= nver; k++) {
			const char *name = k ? versions[k - 1] : EB_BASE_NAME;
			size_t name_off = k ? p - im->dynstr : 1;
			size_t at = im->verdef + k * (sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux));
			Elf64_Verdef vd = {
				.vd_version = VER_DEF_CURRENT,
				.vd_flags = k ? 0 : VER_FLG_BASE,
				.vd_ndx = k + 1,
				.vd_cnt = 1,
				.vd_hash = eb_elf_hash(name),
				.vd_aux = sizeof(Elf64_Verdef),
				.vd_next = k == nver ? 0 : sizeof(Elf64_Verdef) + sizeof(Elf64_Verdaux),
			};
			Elf64_Verdaux va = { .vda_name = name_off, .vda_next = 0 };

			memcpy(b + at, &vd, sizeof(vd));
			memcpy(b + at + sizeof(vd), &va, sizeof(va));
			if (k) {
				memcpy(b + p, name, strlen(name) + 1);
				p += strlen(name) + 1;
			}
		}
	}
	return 0;
}

#endif /* KCROSS_TESTS_ELF_BUILDER_H */
