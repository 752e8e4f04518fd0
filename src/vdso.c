/* SPDX-License-Identifier: MIT */
/*
 * vDSO parsing and symbol lookup.
 *
 * The parser is written for hostile input (it is fuzzed): every byte it
 * reads goes through get(), which checks the range against the image length
 * with overflow-safe arithmetic and copies with memcpy, so no ELF field is
 * ever trusted for alignment either.  Loops over attacker-controlled links
 * (hash chains, the version definition list) are bounded by a count.
 *
 * Compared with the kernel's tools/testing/selftests/vDSO/parse_vdso.c,
 * which trusts the image, and musl's vdso.c, which needs DT_HASH: this one
 * takes DT_GNU_HASH, DT_HASH or both, and works on images that are not
 * mapped at their link address (the x86-64 vDSO used to be linked at
 * 0xffffffffff700000; today's are linked at 0).
 */
#include <elf.h>
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>

#include <kcross/syscall.h>
#include <kcross/vdso.h>

/* The e_machine an image must carry to be callable from this process. */
#define THIS_MACHINE KC_ELF_MACHINE

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
# define THIS_DATA ELFDATA2LSB
#else
# define THIS_DATA ELFDATA2MSB
#endif

/* struct kc_vdso.have */
enum {
	HAVE_HASH	= 1 << 0,
	HAVE_GNU_HASH	= 1 << 1,
	HAVE_VERSYM	= 1 << 2,
	HAVE_VERDEF	= 1 << 3,
};

/* [off, off + size) lies inside an image of len bytes. */
static bool fits(size_t len, uint64_t off, uint64_t size)
{
	return off <= len && size <= len - off;
}

/* n elements of elsize bytes starting at off lie inside the image. */
static bool fits_array(size_t len, uint64_t off, uint64_t n, uint64_t elsize)
{
	return off <= len && n <= (len - off) / elsize;
}

/* The only way bytes are read from the image. */
static bool get(const struct kc_vdso *v, uint64_t off, void *dst, size_t size)
{
	if (!fits(v->len, off, size))
		return false;
	memcpy(dst, v->base + off, size);
	return true;
}

static bool get32(const struct kc_vdso *v, uint64_t off, uint32_t *dst)
{
	return get(v, off, dst, sizeof(*dst));
}

/*
 * Link-time address → image offset, through the PT_LOAD segment whose file
 * contents hold it.  kc_vdso_parse() checked that the program header table
 * and each PT_LOAD's file extent lie inside the image, so the result does.
 */
static bool vaddr_to_off(const struct kc_vdso *v, uint64_t vaddr, uint64_t *off)
{
	for (uint32_t i = 0; i < v->phnum; i++) {
		Elf64_Phdr ph;

		if (!get(v, v->phoff + (uint64_t)i * sizeof(ph), &ph, sizeof(ph)))
			return false;
		if (ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr >= ph.p_filesz)
			continue;
		*off = ph.p_offset + (vaddr - ph.p_vaddr);
		return true;
	}
	return false;
}

/* The NUL-terminated string at strtab + off equals s, within DT_STRSZ. */
static bool str_eq(const struct kc_vdso *v, uint64_t off, const char *s)
{
	const unsigned char *p;
	uint64_t room;

	if (off >= v->strsz)
		return false;
	p = v->base + v->strtab + off;
	room = v->strsz - off;
	for (uint64_t i = 0; i < room; i++) {
		if (p[i] != (unsigned char)s[i])
			return false;
		if (!s[i])
			return true;
	}
	return false;
}

/* The System V ABI's ELF hash (DT_HASH). */
static uint32_t elf_hash(const char *s)
{
	uint32_t h = 0, g;

	for (; *s; s++) {
		h = (h << 4) + (unsigned char)*s;
		g = h & 0xf0000000u;
		if (g)
			h ^= g >> 24;
		h &= ~g;
	}
	return h;
}

/* GNU's hash (DT_GNU_HASH): Bernstein's h * 33 + c. */
static uint32_t gnu_hash(const char *s)
{
	uint32_t h = 5381;

	for (; *s; s++)
		h = h * 33 + (unsigned char)*s;
	return h;
}

/*
 * Symbol idx has the version called `version`: its DT_VERSYM entry's index
 * (the hidden bit 0x8000 masked off) is the vd_ndx of a DT_VERDEF entry
 * whose first auxiliary entry names that version.  The base entry
 * (VER_FLG_BASE) names the file, not a version, and is skipped.
 */
static bool version_ok(const struct kc_vdso *v, uint64_t idx, const char *version)
{
	uint64_t off = v->verdef;
	uint16_t ndx;

	if (!version)
		return true;
	if ((v->have & (HAVE_VERSYM | HAVE_VERDEF)) != (HAVE_VERSYM | HAVE_VERDEF))
		return false;
	if (!get(v, v->versym + idx * sizeof(ndx), &ndx, sizeof(ndx)))
		return false;
	ndx &= 0x7fff;
	for (uint64_t n = 0; n < v->verdefnum; n++) {
		Elf64_Verdef d;
		Elf64_Verdaux a;

		if (!get(v, off, &d, sizeof(d)))
			return false;
		if (d.vd_ndx == ndx && !(d.vd_flags & VER_FLG_BASE))
			return get(v, off + d.vd_aux, &a, sizeof(a)) &&
			       str_eq(v, a.vda_name, version);
		if (!d.vd_next)
			return false;
		off += d.vd_next;
	}
	return false;
}

/* Symbol idx, if it is the one asked for: its address in the image. */
static void *match(const struct kc_vdso *v, uint64_t idx, const char *version,
		   const char *name)
{
	unsigned int type, bind;
	uint64_t off;
	Elf64_Sym s;

	if (idx >= v->nsyms ||
	    !get(v, v->symtab + idx * sizeof(s), &s, sizeof(s)))
		return NULL;
	type = ELF64_ST_TYPE(s.st_info);
	bind = ELF64_ST_BIND(s.st_info);
	if ((type != STT_FUNC && type != STT_NOTYPE) ||
	    (bind != STB_GLOBAL && bind != STB_WEAK) ||
	    s.st_shndx == SHN_UNDEF)
		return NULL;
	if (!str_eq(v, s.st_name, name) || !version_ok(v, idx, version) ||
	    !vaddr_to_off(v, s.st_value, &off))
		return NULL;
	return (void *)(v->base + off);
}

static void *sysv_lookup(const struct kc_vdso *v, const char *version,
			 const char *name)
{
	uint64_t chain = v->hash + (uint64_t)v->nbucket * 4;
	uint32_t idx;
	void *p;

	if (!get32(v, v->hash + (uint64_t)(elf_hash(name) % v->nbucket) * 4, &idx))
		return NULL;
	/* nchain steps at most: a chain that loops is cut off. */
	for (uint32_t n = 0; idx != STN_UNDEF && n < v->nchain; n++) {
		if (idx >= v->nchain)
			return NULL;
		p = match(v, idx, version, name);
		if (p)
			return p;
		if (!get32(v, chain + (uint64_t)idx * 4, &idx))
			return NULL;
	}
	return NULL;
}

static void *gnu_lookup(const struct kc_vdso *v, const char *version,
			const char *name)
{
	uint32_t h = gnu_hash(name), h2, idx;
	uint64_t word, mask;
	void *p;

	/* Two bits per symbol in one 64-bit word of the Bloom filter. */
	if (!get(v, v->gnu_bloom + (uint64_t)((h / 64) & (v->gnu_bloom_size - 1)) * 8,
		 &word, sizeof(word)))
		return NULL;
	/* Shifted as 64 bits: a shift of 32..63 is legal in the format (it
	 * selects bit 0) but undefined on a 32-bit value in C. */
	mask = 1ull << (h % 64) | 1ull << (((uint64_t)h >> v->gnu_bloom_shift) % 64);
	if ((word & mask) != mask)
		return NULL;
	if (!get32(v, v->gnu_buckets + (uint64_t)(h % v->gnu_nbuckets) * 4, &idx))
		return NULL;
	if (idx == STN_UNDEF || idx < v->gnu_symoffset)
		return NULL;
	/*
	 * The chain holds the hashes of symbols idx, idx + 1, ... with the
	 * low bit marking the last; idx < nsyms bounds the walk.
	 */
	for (; idx < v->nsyms; idx++) {
		if (!get32(v, v->gnu_chains + (uint64_t)(idx - v->gnu_symoffset) * 4, &h2))
			return NULL;
		if ((h | 1) == (h2 | 1)) {
			p = match(v, idx, version, name);
			if (p)
				return p;
		}
		if (h2 & 1)
			break;
	}
	return NULL;
}

void *kc_vdso_lookup(const struct kc_vdso *v, const char *version,
		     const char *name)
{
	if (!v || !name)
		return NULL;
	if (v->have & HAVE_GNU_HASH)
		return gnu_lookup(v, version, name);
	if (v->have & HAVE_HASH)
		return sysv_lookup(v, version, name);
	return NULL;	/* a struct that failed to parse */
}

const void *kc_vdso_image(const struct kc_vdso *v, size_t *len)
{
	*len = v->len;
	return v->base;
}

/* DT_HASH at image offset off: nbucket, nchain, bucket[nbucket], chain[nchain]. */
static int setup_hash(struct kc_vdso *v, uint64_t off)
{
	uint32_t hdr[2];

	if (!get(v, off, hdr, sizeof(hdr)))
		return -EINVAL;
	/* nbucket 0 would divide by zero; nchain counts the symbol table. */
	if (!hdr[0] || hdr[1] > v->nsyms ||
	    !fits_array(v->len, off + 8, (uint64_t)hdr[0] + hdr[1], 4))
		return -EINVAL;
	v->nbucket = hdr[0];
	v->nchain = hdr[1];
	v->hash = off + 8;
	v->have |= HAVE_HASH;
	return 0;
}

/*
 * DT_GNU_HASH at image offset off: nbuckets, symoffset, bloom_size,
 * bloom_shift, bloom[bloom_size] (64-bit words in ELF64), buckets[nbuckets],
 * then one chain word per symbol from symoffset on.  The chain array's
 * length is not recorded anywhere; each chain read is checked instead.
 */
static int setup_gnu_hash(struct kc_vdso *v, uint64_t off)
{
	uint32_t hdr[4];
	uint64_t buckets;

	if (!get(v, off, hdr, sizeof(hdr)))
		return -EINVAL;
	/*
	 * nbuckets 0 would divide by zero; bloom_size indexes by masking so
	 * must be a power of two; a shift of 64 or more would be undefined.
	 */
	if (!hdr[0] || !hdr[2] || (hdr[2] & (hdr[2] - 1)) || hdr[3] >= 64 ||
	    hdr[1] > v->nsyms)
		return -EINVAL;
	if (!fits_array(v->len, off + 16, hdr[2], 8))
		return -EINVAL;
	buckets = off + 16 + (uint64_t)hdr[2] * 8;
	if (!fits_array(v->len, buckets, hdr[0], 4))
		return -EINVAL;
	v->gnu_nbuckets = hdr[0];
	v->gnu_symoffset = hdr[1];
	v->gnu_bloom_size = hdr[2];
	v->gnu_bloom_shift = hdr[3];
	v->gnu_bloom = off + 16;
	v->gnu_buckets = buckets;
	v->gnu_chains = buckets + (uint64_t)hdr[0] * 4;
	v->have |= HAVE_GNU_HASH;
	return 0;
}

/* Dynamic tags this parser uses; addresses are link-time vaddrs. */
struct dyn_info {
	uint64_t val[9];
	unsigned int seen;
};
enum { D_SYMTAB, D_STRTAB, D_STRSZ, D_SYMENT, D_HASH, D_GNU_HASH, D_VERSYM,
       D_VERDEF, D_VERDEFNUM };

static int dyn_slot(int64_t tag)
{
	switch (tag) {
	case DT_SYMTAB:		return D_SYMTAB;
	case DT_STRTAB:		return D_STRTAB;
	case DT_STRSZ:		return D_STRSZ;
	case DT_SYMENT:		return D_SYMENT;
	case DT_HASH:		return D_HASH;
	case DT_GNU_HASH:	return D_GNU_HASH;
	case DT_VERSYM:		return D_VERSYM;
	case DT_VERDEF:		return D_VERDEF;
	case DT_VERDEFNUM:	return D_VERDEFNUM;
	}
	return -1;
}

static int read_dynamic(const struct kc_vdso *v, const Elf64_Phdr *dyn,
			struct dyn_info *d)
{
	uint64_t n;

	if (!fits(v->len, dyn->p_offset, dyn->p_filesz))
		return -EINVAL;
	n = dyn->p_filesz / sizeof(Elf64_Dyn);
	for (uint64_t i = 0; i < n; i++) {
		Elf64_Dyn e;
		int slot;

		get(v, dyn->p_offset + i * sizeof(e), &e, sizeof(e));
		if (e.d_tag == DT_NULL)
			break;
		slot = dyn_slot(e.d_tag);
		if (slot >= 0) {
			d->val[slot] = e.d_un.d_val;
			d->seen |= 1u << slot;
		}
	}
	return 0;
}

/* Translate a dynamic tag's address; absent tags are not an error. */
static int dyn_off(const struct kc_vdso *v, const struct dyn_info *d, int slot,
		   uint64_t *off)
{
	if (!(d->seen & 1u << slot))
		return 0;
	return vaddr_to_off(v, d->val[slot], off) ? 1 : -EINVAL;
}

static int parse(struct kc_vdso *v)
{
	const unsigned char *id = v->base;
	Elf64_Phdr ph, dyn = { .p_type = PT_NULL };
	struct dyn_info d = { .seen = 0 };
	uint64_t off, strtab;
	unsigned int nload = 0;
	Elf64_Ehdr eh;
	int r;

	if (v->len < EI_NIDENT || memcmp(id, ELFMAG, SELFMAG) ||
	    id[EI_CLASS] != ELFCLASS64 || id[EI_DATA] != THIS_DATA ||
	    id[EI_VERSION] != EV_CURRENT)
		return -ENOEXEC;
	if (!get(v, 0, &eh, sizeof(eh)))
		return -EINVAL;
	if (eh.e_type != ET_DYN || eh.e_machine != THIS_MACHINE ||
	    eh.e_version != EV_CURRENT)
		return -ENOEXEC;

	/* PN_XNUM would put the count in section 0, which is never read. */
	if (eh.e_phentsize != sizeof(ph) || eh.e_phnum == PN_XNUM ||
	    !fits_array(v->len, eh.e_phoff, eh.e_phnum, sizeof(ph)))
		return -EINVAL;
	v->phoff = eh.e_phoff;
	v->phnum = eh.e_phnum;
	for (uint32_t i = 0; i < v->phnum; i++) {
		get(v, v->phoff + (uint64_t)i * sizeof(ph), &ph, sizeof(ph));
		if (ph.p_type == PT_LOAD) {
			/* Checked once here so that vaddr_to_off() need not. */
			if (!fits(v->len, ph.p_offset, ph.p_filesz) ||
			    ph.p_vaddr + ph.p_filesz < ph.p_vaddr)
				return -EINVAL;
			nload++;
		} else if (ph.p_type == PT_DYNAMIC && dyn.p_type == PT_NULL) {
			dyn = ph;
		}
	}
	if (!nload || dyn.p_type != PT_DYNAMIC)
		return -EINVAL;
	r = read_dynamic(v, &dyn, &d);
	if (r)
		return r;

	if (dyn_off(v, &d, D_SYMTAB, &v->symtab) != 1 ||
	    dyn_off(v, &d, D_STRTAB, &strtab) != 1)
		return -EINVAL;
	if ((d.seen & 1u << D_SYMENT) && d.val[D_SYMENT] != sizeof(Elf64_Sym))
		return -EINVAL;
	v->strtab = strtab;
	if (d.seen & 1u << D_STRSZ) {
		if (!fits(v->len, strtab, d.val[D_STRSZ]))
			return -EINVAL;
		v->strsz = d.val[D_STRSZ];
	} else {
		v->strsz = v->len - strtab;
	}
	/* A bound until DT_HASH, if present, gives the exact count. */
	v->nsyms = (v->len - v->symtab) / sizeof(Elf64_Sym);

	r = dyn_off(v, &d, D_HASH, &off);
	if (r < 0 || (r > 0 && setup_hash(v, off)))
		return -EINVAL;
	if (v->have & HAVE_HASH)
		v->nsyms = v->nchain;
	r = dyn_off(v, &d, D_GNU_HASH, &off);
	if (r < 0 || (r > 0 && setup_gnu_hash(v, off)))
		return -EINVAL;
	if (!(v->have & (HAVE_HASH | HAVE_GNU_HASH)))
		return -EINVAL;

	/* Version tables: each read of them is checked at lookup. */
	r = dyn_off(v, &d, D_VERSYM, &v->versym);
	if (r < 0)
		return r;
	if (r)
		v->have |= HAVE_VERSYM;
	r = dyn_off(v, &d, D_VERDEF, &v->verdef);
	if (r < 0)
		return r;
	if (r) {
		v->have |= HAVE_VERDEF;
		/* Without DT_VERDEFNUM the list still ends: vd_next > 0 moves
		 * forward and get() stops at the end of the image. */
		v->verdefnum = (d.seen & 1u << D_VERDEFNUM) ?
			       d.val[D_VERDEFNUM] : v->len;
	}
	return 0;
}

int kc_vdso_parse(struct kc_vdso *v, const void *image, size_t len)
{
	struct kc_vdso t = { .base = image, .len = len };
	int r = parse(&t);

	/* A failed parse leaves have == 0, which every lookup refuses. */
	if (r)
		memset(&t, 0, sizeof(t));
	*v = t;
	return r;
}

/* ------------------------------------------------------------ this process */

/*
 * The auxiliary vector gives the vDSO's address but not its length.  The
 * kernel maps the whole vDSO file, page-rounded, at AT_SYSINFO_EHDR: the
 * image is linked into the kernel as a complete ELF file, section header
 * table included, and installed as one special mapping.  So every extent the
 * file itself declares - its program header table, its section header table
 * (which the linker places last), each segment's file contents - lies inside
 * that mapping, and their maximum is a length that is safe to read and
 * covers everything the parser needs.  Only the 64-byte ELF header is read
 * before any length is known; it is inside the first page, which is always
 * mapped.  As a guard against an emulator or sandbox that fabricates a
 * vDSO with a lying header, each length is also checked with mincore(),
 * which fails with ENOMEM on any unmapped page in the range.
 */
#define SELF_MAX_LEN (1u << 20)	/* real vDSOs are a few pages */

static bool self_mapped(const unsigned char *base, uint64_t len)
{
	unsigned char vec[SELF_MAX_LEN / 4096 + 1];
	unsigned long pg = getauxval(AT_PAGESZ);
	uintptr_t start;
	long r;

	if (len > SELF_MAX_LEN)
		return false;
	/* vec is sized for pages of 4 KiB or more, all this library runs on. */
	if (pg < 4096 || pg & (pg - 1))
		return true;
	start = (uintptr_t)base & ~(uintptr_t)(pg - 1);
	r = kc_syscall3(SYS_mincore, (long)start,
			(long)(len + ((uintptr_t)base - start)), (long)vec);
	/* Any other failure (ENOSYS under a seccomp filter, say) says
	 * nothing about the mapping: keep the kernel's word. */
	return r != -ENOMEM;
}

static bool grow(uint64_t *end, uint64_t off, uint64_t size)
{
	if (off + size < off || off + size > SELF_MAX_LEN)
		return false;
	if (off + size > *end)
		*end = off + size;
	return true;
}

static size_t self_len(const unsigned char *base)
{
	uint64_t end = sizeof(Elf64_Ehdr);
	Elf64_Ehdr eh;

	memcpy(&eh, base, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr))
		return 0;
	if (!grow(&end, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr)) ||
	    (eh.e_shnum && !grow(&end, eh.e_shoff, (uint64_t)eh.e_shnum * eh.e_shentsize)) ||
	    !self_mapped(base, end))
		return 0;
	for (unsigned int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;

		memcpy(&ph, base + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if ((ph.p_type == PT_LOAD || ph.p_type == PT_DYNAMIC) &&
		    !grow(&end, ph.p_offset, ph.p_filesz))
			return 0;
	}
	return self_mapped(base, end) ? end : 0;
}

enum { SELF_UNTRIED, SELF_BUSY, SELF_READY, SELF_NONE };
static int self_state = SELF_UNTRIED;
static struct kc_vdso self;

static int self_parse(void)
{
	const unsigned char *base =
		(const unsigned char *)(uintptr_t)getauxval(AT_SYSINFO_EHDR);
	size_t len;

	if (!base)
		return SELF_NONE;
	len = self_len(base);
	if (!len || kc_vdso_parse(&self, base, len))
		return SELF_NONE;
	return SELF_READY;
}

/*
 * One thread parses; others arriving meanwhile wait for it (a few
 * microseconds).  The wait could only deadlock if a signal handler on the
 * parsing thread itself asked for the vDSO during that first parse, which
 * the constructor below makes practically impossible by doing the parse
 * before main().
 */
static const struct kc_vdso *self_slow(void)
{
	int s = SELF_UNTRIED;

	if (__atomic_compare_exchange_n(&self_state, &s, SELF_BUSY, false,
					__ATOMIC_ACQUIRE, __ATOMIC_ACQUIRE)) {
		s = self_parse();
		__atomic_store_n(&self_state, s, __ATOMIC_RELEASE);
	}
	while (s == SELF_BUSY) {
		kc_cpu_relax();
		s = __atomic_load_n(&self_state, __ATOMIC_ACQUIRE);
	}
	return s == SELF_READY ? &self : NULL;
}

const struct kc_vdso *kc_vdso_self(void)
{
	int s = __atomic_load_n(&self_state, __ATOMIC_ACQUIRE);

	if (KC_LIKELY(s == SELF_READY))
		return &self;
	if (s == SELF_NONE)
		return NULL;
	return self_slow();
}

__attribute__((constructor))
static void self_init(void)
{
	kc_vdso_self();
}

void *kc_vdso_sym(const char *name)
{
	return kc_vdso_lookup(kc_vdso_self(), KC_VDSO_VERSION, name);
}
