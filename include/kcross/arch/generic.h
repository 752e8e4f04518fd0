/* SPDX-License-Identifier: MIT */
/*
 * Generic layer: included by <kcross/arch.h> after the architecture header.
 * It defines whatever the architecture header did not, so each arch header
 * holds only what really differs (the liburcu arrangement).
 */
#ifndef KCROSS_ARCH_H
# error "do not include <kcross/arch/generic.h> directly; include <kcross/arch.h>"
#endif
#ifndef KCROSS_ARCH_GENERIC_H
#define KCROSS_ARCH_GENERIC_H

#define KC_LIKELY(x)   __builtin_expect(!!(x), 1)
#define KC_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Keep a value alive and opaque to the optimiser without emitting code. */
#define KC_OPAQUE(v)   __asm__ __volatile__("" : "+r"(v))
/* A compiler barrier: no memory access moves across it. */
#define KC_BARRIER()   __asm__ __volatile__("" ::: "memory")

#ifndef KC_CACHELINE_SIZE
/* 64 bytes on every x86-64 and aarch64 part we target; ppc64 says 128. */
# define KC_CACHELINE_SIZE 64
#endif

#ifndef KC_HAVE_CPU_RELAX
static inline void kc_cpu_relax(void)
{
	KC_BARRIER();
}
#endif

/*
 * System call mechanisms.  Every arch header names its baseline instruction
 * (KC_SYSMECH_NATIVE_NAME, used by kc_syscall0..6).  An architecture with a
 * second instruction also defines KC_SYSMECH_ALT_NAME, kc_syscall_alt0..6 and
 * KC_SYSMECH_ALT_HWCAP2 (the AT_HWCAP2 bits that say the machine offers it);
 * the others have none.  Generic code uses only these names.
 */
#ifndef KC_SYSMECH_NATIVE_NAME
# error "kcross: the arch header must define KC_SYSMECH_NATIVE_NAME"
#endif
#ifdef KC_SYSMECH_ALT_NAME
# define KC_HAVE_SYSCALL_ALT 1
# ifndef KC_SYSMECH_ALT_HWCAP2
#  error "kcross: an arch header with KC_SYSMECH_ALT_NAME must define KC_SYSMECH_ALT_HWCAP2"
# endif
#else
# define KC_HAVE_SYSCALL_ALT 0
# define KC_SYSMECH_ALT_HWCAP2 0UL
#endif

/*
 * How <kcross/syscall.h> reads its mechanism word: a plain load by default,
 * fresh at every call (aarch64 with the address kept in a register:
 * `ldr; cbnz`).  An arch whose branch on a loaded word costs more defines its
 * own (ppc64le).  KC_SYSMECH_NATIVE_WORD: the word's value for the native
 * instruction, 0 unless the arch tests another value in fewer instructions.
 */
#ifndef KC_SYSMECH_NATIVE_WORD
# define KC_SYSMECH_NATIVE_WORD 0u
#endif
#ifndef KC_HAVE_SYSMECH_LOAD
static inline unsigned int kc__sysmech_load(const unsigned int *word)
{
	return *word;
}
#endif

/* The fingerprint tells this arch's /proc/cpuinfo from an emulating host's. */
#ifndef KC_CPUINFO_SIGNATURE
# error "kcross: the arch header must define KC_CPUINFO_SIGNATURE"
#endif

#endif /* KCROSS_ARCH_GENERIC_H */
