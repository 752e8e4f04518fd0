/* SPDX-License-Identifier: MIT */
/*
 * kcross/arch.h - the only file that looks at the compiler's architecture
 * macros.  It includes the one small header of the architecture being built
 * (which defines only what differs between architectures) and then
 * <kcross/arch/generic.h>, which fills in everything the arch header left out.
 */
#ifndef KCROSS_ARCH_H
#define KCROSS_ARCH_H

#if defined(__x86_64__) && !defined(__ILP32__)
# include <kcross/arch/x86_64.h>
#elif defined(__aarch64__) && !defined(__ILP32__)
# include <kcross/arch/aarch64.h>
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
# include <kcross/arch/ppc64le.h>
#else
# error "kcross: unsupported architecture (supported: x86-64, aarch64, ppc64le)"
#endif

#include <kcross/arch/generic.h>

#endif /* KCROSS_ARCH_H */
