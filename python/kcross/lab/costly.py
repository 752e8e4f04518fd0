"""The instructions that cost more than their count, per arch: one table (issue 16).

An instruction count treats every instruction alike; on hardware some cost far more than
one: barriers and synchronisation, cache-flush triggers and the flush loops that stand in
for them, returns from interrupt and other privilege switches, special-register accesses,
indirect branches and their thunks.  Each arch's entries match the mnemonic QEMU's
disassembler gives (qemu_plugin_insn_disas), optionally its operands, or the function the
instruction is in (a flush loop, a thunk: every instruction of it counts).  What each
entry stands for is checked against the kernel's entry code at v6.1 (arch/powerpc/kernel/
interrupt_64.S, exceptions-64s.S, lib/feature-fixups.c; arch/x86/entry/entry_64.S;
arch/arm64/kernel/entry.S).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kcross.lab.machines import arch as lab_arch

BARRIER = "barrier"
FLUSH = "cache flush"
PRIVILEGE = "privilege switch"
SPECIAL = "special register"
INDIRECT = "indirect branch"
CATEGORIES = (BARRIER, FLUSH, PRIVILEGE, SPECIAL, INDIRECT)


@dataclass(frozen=True)
class Entry:
    category: str
    mnemonic: str              # a regular expression, matched in full
    operands: str | None = None   # a regular expression the operands must match (search)
    function: str | None = None   # or: every instruction of a function matching this,
    label: str = ""               # ... counted under this name
    why: str = ""


TABLE: dict[str, tuple[Entry, ...]] = {
    "ppc64le": (
        Entry(FLUSH, r".*", function=r".*_flush_fallback|do_uaccess_flush",
              label="displacement-flush loop", why="L1D_FLUSH_FALLBACK: the L1D flushed by "
              "loads through the flush area (rfi/entry/uaccess_flush_fallback), every "
              "instruction of it"),
        Entry(BARRIER, r"sync|hwsync|lwsync|isync|eieio|ptesync|msgsync", why="memory and "
              "context synchronisation"),
        Entry(FLUSH, r"ori", r"^r?30,\s*r?30,\s*0$", why="the L1D flush trigger "
              "(L1D_FLUSH_ORI, the rfi/entry/uaccess flush slots of feature-fixups.c)"),
        Entry(BARRIER, r"ori", r"^r?31,\s*r?31,\s*0$", why="the speculation barrier "
              "(ori 31,31,0: barrier_nospec and the flush slots' first instruction)"),
        Entry(FLUSH, r"mtspr", r"^(882|0x372),", why="the L1D flush trigger "
              "(L1D_FLUSH_MTTRIG: mtspr SPRN_TRIG2)"),
        Entry(PRIVILEGE, r"rfid|hrfid|rfscv|rfi|sc|scv|hrfi", why="interrupt return and "
              "system call"),
        Entry(SPECIAL, r"mtspr|mfspr|mtmsrd|mtmsr|mfmsr|mtsrr0|mtsrr1|mfsrr0|mfsrr1|mftb"
              r"|mfdscr|mtdscr|mtamr|mfamr|mtppr|mfppr",
              why="special-purpose register access"),
        Entry(INDIRECT, r"bctr|bctrl|bcctr|bcctrl|btctr", why="branch via the count "
              "register"),
    ),
    "x86_64": (
        Entry(INDIRECT, r".*", function=r"__x86_indirect_thunk_.*|__x86_indirect_its_thunk_.*"
              r"|__x86_return_thunk|its_return_thunk|srso_.*|retbleed_.*|zen_untrain_ret"
              r"|__x86_indirect_jump_thunk_.*|entry_untrain_ret|entry_ibpb"
              r"|__x86_indirect_call_thunk.*|clear_bhb_loop",
              label="thunk", why="retpoline, ITS, return and untraining thunks, the BHB "
              "clearing loop: every instruction of them"),
        Entry(BARRIER, r"lfence|mfence|sfence|serialize|cpuid|lock", why="fences and "
              "serialising instructions"),
        Entry(FLUSH, r"verw|clflush|clflushopt|clwb|wbinvd|invd|invlpg|invpcid",
              why="buffer clearing (VERW), cache and TLB flushes"),
        Entry(PRIVILEGE, r"sysretq?|sysret|iretq?|swapgs|syscall|sysenter|sysexit|int|int3"
              r"|hlt", why="privilege switches"),
        Entry(SPECIAL, r"movq?", r"%cr[0-8]|%dr[0-7]",
              why="control-register and MSR access"),
        Entry(SPECIAL, r"wrmsr|rdmsr|rdpmc|xsetbv|xgetbv|rdtscp?|rdpid|stac|clac",
              why="MSR and special access"),
        Entry(INDIRECT, r"(jmp|call)q?", r"\*", why="indirect jump or call"),
    ),
    "aarch64": (
        Entry(INDIRECT, r".*", function=r"__bp_harden.*|__spectre_bhb_loop.*"
              r"|spectre_bhb_.*|__bhb_.*", label="branch-history clearing",
              why="Spectre-BHB: every instruction of the clearing sequence"),
        Entry(BARRIER, r"dsb|dmb|isb|sb|ssbb|pssbb|csdb", why="barriers and speculation "
              "barriers"),
        Entry(FLUSH, r"tlbi|dc|ic", why="TLB and cache maintenance"),
        Entry(PRIVILEGE, r"eret|eretaa|eretab|svc|hvc|smc", why="exception return and calls"),
        Entry(SPECIAL, r"msr|mrs", why="system-register access"),
        Entry(INDIRECT, r"br|blr|braa|brab|blraa|blrab|braaz|blraaz", why="indirect branch"),
    ),
}


# Instructions QEMU 7.2's disassembler does not know (it prints their bytes: ".byte ..."),
# decoded here from the instruction word: (mask, value, text with {lev}).  ppc64: scv LEV
# (primary opcode 17, the last two bits 01, LEV in bits 20-26) and rfscv (Power ISA 3.0).
GAPS: dict[str, tuple[tuple[int, int, str], ...]] = {
    "ppc64le": ((0xFFFFF01F, 0x44000001, "scv {lev}"), (0xFFFFFFFF, 0x4C0000A4, "rfscv")),
    "x86_64": (),
    "aarch64": (),
}


def decoded(arch: str, raw: bytes, disassembly: str) -> str:
    """QEMU's disassembly of an instruction, or where it printed only the bytes, the
    instruction GAPS decodes from them (else the disassembly as it is)."""
    if not disassembly.lstrip().startswith((".byte", ".long", ".word")) \
            or not lab_arch(arch).le_insn_words or len(raw) != 4:
        return disassembly
    word = int.from_bytes(raw, "little")
    for mask, value, text in GAPS[arch]:
        if word & mask == value:
            return text.format(lev=(word >> 5) & 0x7F)
    return disassembly


@dataclass(frozen=True)
class Costly:
    category: str
    mnemonic: str


def split(disassembly: str) -> tuple[str, str]:
    """The mnemonic (its '.'/'+'/'-' hints kept apart) and the operands."""
    words = disassembly.strip().split(None, 1)
    if not words:
        return "", ""
    mnemonic = words[0].lower()
    return mnemonic, (words[1].strip() if len(words) > 1 else "")


def classify(arch: str, disassembly: str, function: str | None) -> Costly | None:
    """The costly category of one instruction of ``arch`` (its disassembly, the function it
    is in), or None."""
    mnemonic, operands = split(disassembly)
    bare = mnemonic.rstrip("+-").removesuffix(".")
    for e in TABLE[arch]:
        if e.function is not None:
            if function and re.fullmatch(e.function, function):
                return Costly(e.category, e.label)
            continue
        if not re.fullmatch(e.mnemonic, bare):
            continue
        if e.operands is not None and not re.search(e.operands, operands):
            continue
        label = f"{bare} {operands}" if e.operands is not None and e.category in (
            FLUSH, BARRIER, SPECIAL) else bare
        return Costly(e.category, label)
    return None
