/* SPDX-License-Identifier: MIT */
/*
 * The machine fingerprint: everything that changes what a boundary crossing
 * costs, read by the harness itself so that its output describes the machine
 * it ran on even where there is no Python (a test kernel's initramfs).
 * Anything that cannot be read is written as null, never guessed.
 */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <gnu/libc-version.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <kcross/settings.h>

#include "harness.h"
#include "kcross_version.h"

/* Read a small text file; trailing newlines removed.  NULL if unreadable
 * (a sysfs file that opens but fails to read is unreadable, not empty). */
static char *slurp(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;
	bool bad;

	if (!f)
		return NULL;
	n = fread(buf, 1, len - 1, f);
	bad = ferror(f);
	fclose(f);
	if (bad)
		return NULL;
	buf[n] = 0;
	while (n && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		buf[--n] = 0;
	return buf;
}

static void json_file(struct kh_json *j, const char *key, const char *path)
{
	char buf[4096];

	kh_json_str(j, key, slurp(path, buf, sizeof(buf)));
}

/* The value of the first "key<tabs>: value" line of /proc/cpuinfo. */
static char *cpuinfo_any(const char *key, char *out, size_t len)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char *line = NULL;
	size_t cap = 0, klen = strlen(key);
	char *res = NULL;

	if (!f)
		return NULL;
	while (getline(&line, &cap, f) > 0) {
		char *p;

		if (strncmp(line, key, klen) || !(p = strchr(line + klen, ':')))
			continue;
		if (strspn(line + klen, " \t") != (size_t)(p - line - (ptrdiff_t)klen))
			continue;
		for (p++; *p == ' '; p++)
			;
		p[strcspn(p, "\n")] = 0;
		snprintf(out, len, "%s", p);
		res = out;
		break;
	}
	free(line);
	fclose(f);
	return res;
}

/*
 * A key only this architecture's /proc/cpuinfo has.  Under user-mode
 * emulation (qemu-user) the file describes the host's CPU, another
 * architecture: then nothing in it is this CPU's, and it counts as unreadable.
 */
#define CPUINFO_SIGNATURE KC_CPUINFO_SIGNATURE	/* from the arch header */

static char *cpuinfo(const char *key, char *out, size_t len)
{
	static int ours = -1;	/* unknown yet */
	char sig[64];

	if (ours < 0)
		ours = cpuinfo_any(CPUINFO_SIGNATURE, sig, sizeof(sig)) != NULL;
	return ours ? cpuinfo_any(key, out, len) : NULL;
}

/* A number from /proc/cpuinfo; null when absent or not a number. */
static void json_cpuinfo_int(struct kh_json *j, const char *key, const char *ci)
{
	char buf[64], *end;
	long v;

	if (!cpuinfo(ci, buf, sizeof(buf))) {
		kh_json_null(j, key);
		return;
	}
	errno = 0;
	v = strtol(buf, &end, 0);
	if (errno || end == buf || *end)
		kh_json_null(j, key);
	else
		kh_json_int(j, key, v);
}

/* CPUs in a sysfs CPU list ("0-3,8,10-11"); -1 if it is not one. */
static int cpulist_count(const char *s)
{
	int n = 0;

	while (*s) {
		char *end;
		long a = strtol(s, &end, 10), b = a;

		if (end == s || a < 0)
			return -1;
		s = end;
		if (*s == '-') {
			b = strtol(s + 1, &end, 10);
			if (end == s + 1 || b < a)
				return -1;
			s = end;
		}
		n += (int)(b - a + 1);
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

/* The x86 flags that matter for boundary crossings; all flags elsewhere. */
static bool flag_wanted(const char *flag)
{
#if defined(KC_ARCH_X86_64)
	static const char *const wanted[] = {
		"constant_tsc", "nonstop_tsc", "tsc_known_freq", "tsc_reliable",
		"rdtscp", "rdpid", "hypervisor", "pcid", "invpcid", "fsgsbase",
		"smep", "smap", "umip", "pti", "ibrs", "ibrs_enhanced", "ibpb",
		"stibp", "ssbd", "md_clear", "flush_l1d", "retpoline",
		"rethunk", "user_shstk", "ibt", "lfence_rdtsc", "xsaves",
		"avx512f", "amd_lbr_v2", "perfctr_core", "arch_perfmon", NULL
	};

	for (int i = 0; wanted[i]; i++)
		if (!strcmp(flag, wanted[i]))
			return true;
	return false;
#else
	(void)flag;
	return true;
#endif
}

static void json_cpu(struct kh_json *j)
{
	static char flags[8192], list[8192];
	char buf[256];

	kh_json_obj(j, "cpu");
	kh_json_str(j, "vendor", cpuinfo("vendor_id", buf, sizeof(buf)) ?:
			 cpuinfo("CPU implementer", buf, sizeof(buf)));
	kh_json_str(j, "model", cpuinfo("model name", buf, sizeof(buf)) ?:
			 cpuinfo("cpu", buf, sizeof(buf)) ?:
			 cpuinfo("CPU part", buf, sizeof(buf)));
	json_cpuinfo_int(j, "family", "cpu family");
	json_cpuinfo_int(j, "model_id", "model");
	json_cpuinfo_int(j, "stepping", "stepping");
	kh_json_str(j, "microcode", cpuinfo("microcode", buf, sizeof(buf)) ?:
			 cpuinfo("revision", buf, sizeof(buf)));
	/* No flags line (or no /proc): unknown, not "none". */
	if (cpuinfo("flags", flags, sizeof(flags)) || cpuinfo("Features", flags, sizeof(flags))) {
		char *save = NULL;

		kh_json_arr(j, "flags");
		for (char *t = strtok_r(flags, " ", &save); t; t = strtok_r(NULL, " ", &save))
			if (flag_wanted(t))
				kh_json_str(j, NULL, t);
		kh_json_arr_end(j);
	} else {
		kh_json_null(j, "flags");
	}
	/* Not sysconf(_SC_NPROCESSORS_ONLN): without /sys and /proc it
	 * falls back to a guess (1, or the affinity mask). */
	if (slurp("/sys/devices/system/cpu/online", list, sizeof(list)) &&
	    strlen(list) < sizeof(list) - 1 && cpulist_count(list) > 0)
		kh_json_int(j, "online", cpulist_count(list));
	else
		kh_json_null(j, "online");
	json_file(j, "possible", "/sys/devices/system/cpu/possible");
	kh_json_obj_end(j);
}

static void json_vulnerabilities(struct kh_json *j)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);

	if (n < 0) {
		kh_json_null(j, "vulnerabilities");
		return;
	}
	kh_json_obj(j, "vulnerabilities");
	for (int i = 0; i < n; i++) {
		char path[512];

		if (ents[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
			json_file(j, ents[i]->d_name, path);
		}
		free(ents[i]);
	}
	free(ents);
	kh_json_obj_end(j);
}

/* 1 if /proc/cpuinfo lists flag, 0 if it does not, -1 if unknown. */
static int has_cpu_flag(const char *flag)
{
	static char flags[8192];
	char *p;
	size_t n = strlen(flag);

	if (!cpuinfo("flags", flags, sizeof(flags)))
		return -1;
	for (p = flags; (p = strstr(p, flag)); p += n)
		if ((p == flags || p[-1] == ' ') && (p[n] == ' ' || !p[n]))
			return 1;
	return 0;
}

static void json_tristate(struct kh_json *j, const char *key, int v)
{
	if (v < 0)
		kh_json_null(j, key);
	else
		kh_json_bool(j, key, v);
}

static void json_rseq(struct kh_json *j)
{
	struct kc_rseq_info i = kc_rseq_info();

	kh_json_obj(j, "rseq");
	kh_json_bool(j, "registered", i.active);
	kh_json_str(j, "owner", i.owner == KC_RSEQ_OWNER_NONE ? NULL : kc_rseq_owner_name(i.owner));
	if (i.size)
		kh_json_int(j, "size", i.size);
	else
		kh_json_null(j, "size");
	if (i.libc_size >= 0)
		kh_json_int(j, "libc_size", i.libc_size);
	else
		kh_json_null(j, "libc_size");
	/* The library's effective values; moot when nothing is registered. */
	if (i.size) {
		kh_json_int(j, "feature_size", i.feature_size);
		kh_json_int(j, "align", i.align);
	} else {
		kh_json_null(j, "feature_size");
		kh_json_null(j, "align");
	}
	kh_json_str(j, "unavailable_reason", i.why);
	kh_json_str(j, "percpu_mode", kc_percpu_mode());
	kh_json_obj_end(j);
}

/*
 * An auxiliary vector entry as the kernel passed it: 1 found, 0 absent,
 * -1 unknown.  /proc/self/auxv first: glibc's getauxval() answers AT_HWCAP
 * and AT_HWCAP2 from its own copies (on x86-64 AT_HWCAP is glibc's
 * HWCAP_X86_64, not the kernel's CPUID bits) and never says they are absent.
 */
static int auxv_entry(unsigned long type, unsigned long *v)
{
	FILE *f = fopen("/proc/self/auxv", "r");
	unsigned long e[2];

	if (f) {
		int found = 0;

		while (!found && fread(e, sizeof(e), 1, f) == 1 && e[0] != AT_NULL)
			if (e[0] == type) {
				*v = e[1];
				found = 1;
			}
		fclose(f);
		return found;
	}
#if defined(KC_ARCH_X86_64)
	if (type == AT_HWCAP)
		return -1;
#endif
	errno = 0;
	*v = getauxval(type);
	if (*v)
		return 1;
	if (type == AT_HWCAP || type == AT_HWCAP2)
		return -1;	/* glibc's copy: 0 may mean absent or none */
	return errno == ENOENT ? 0 : 1;
}

/* Written as hex or a number; null when absent or unknown. */
static void json_auxv(struct kh_json *j, const char *key, unsigned long type, bool hex)
{
	char buf[32];
	unsigned long v;

	if (auxv_entry(type, &v) != 1) {
		kh_json_null(j, key);
	} else if (hex) {
		snprintf(buf, sizeof(buf), "0x%lx", v);
		kh_json_str(j, key, buf);
	} else {
		kh_json_uint(j, key, v);
	}
}

static void json_perf(struct kh_json *j, const struct kh_counters *c)
{
	kh_json_obj(j, "perf");
	if (c->paranoid_known)
		kh_json_int(j, "paranoid", c->paranoid);
	else
		kh_json_null(j, "paranoid");
	kh_json_obj(j, "hardware");
	for (int e = 0; e < KH_EV_FIRST_SOFTWARE; e++)
		kh_json_bool(j, kh_event_names[e], kh_counter_available(c, e));
	kh_json_obj_end(j);
	kh_json_obj(j, "software");
	for (int e = KH_EV_FIRST_SOFTWARE; e < KH_EV_COUNT; e++)
		kh_json_bool(j, kh_event_names[e], kh_counter_available(c, e));
	kh_json_obj_end(j);
	kh_json_obj(j, "reasons");
	for (int e = 0; e < KH_EV_COUNT; e++)
		if (!kh_counter_available(c, e))
			kh_json_str(j, kh_event_names[e], kh_counter_reason(c, e));
	kh_json_obj_end(j);
	kh_json_obj_end(j);
}

static void json_syscall(struct kh_json *j)
{
	unsigned int avail = kc_syscall_available();

	kh_json_obj(j, "syscall");
	kh_json_str(j, "mechanism", kc_sysmech_name(kc_syscall_mechanism()));
	kh_json_arr(j, "available");
	for (int m = 0; m < KC_SYSMECH_COUNT; m++)
		if (avail & 1u << m)
			kh_json_str(j, NULL, kc_sysmech_name(m));
	kh_json_arr_end(j);
	kh_json_str(j, "forced", kc_syscall_forced());
	kh_json_obj_end(j);
}

/*
 * Every environment forcing, validated, or null when unset or empty: part
 * of the machine's identity (KCROSS_VDSO=0 makes clock_gettime 13x slower).
 * The library validates its own; should it refuse one (main.c then refuses
 * the run), none of its values is recorded rather than an invalid one.
 */
static void json_forced(struct kh_json *j)
{
	bool lib_ok = !kc_settings_error();

	kh_json_obj(j, "forced");
	for (int i = 0; kc_library_settings[i]; i++) {
		const char *v = lib_ok ? kc_setting(kc_library_settings[i], NULL, NULL, 0) : NULL;

		if (v || i < KH_LIBRARY_SETTINGS_ALWAYS_RECORDED)
			kh_json_str(j, kc_library_settings[i], v);
	}
	for (const struct kh_setting *s = kh_settings; s->name; s++) {
		const char *v = kh_setting_value(s, NULL, 0);

		if (v || !s->absent_when_unset)
			kh_json_str(j, s->name, v);
	}
	kh_json_obj_end(j);
}

static void json_timer(struct kh_json *j, const struct kh_timer *t)
{
	kh_json_obj(j, "timer");
	kh_json_str(j, "source", t->source);
	kh_json_num(j, "hz", t->hz);
	if (t->invariant < 0)
		kh_json_null(j, "invariant");
	else
		kh_json_bool(j, "invariant", t->invariant);
	kh_json_str(j, "fallback_reason", t->why_fallback);
	kh_json_obj(j, "calibration");
	kh_json_str(j, "against", t->cycle_counter ? "CLOCK_MONOTONIC_RAW" : NULL);
	kh_json_num(j, "ms", t->cycle_counter ? t->calib_ms : NAN);
	kh_json_num(j, "error_ppm", t->cycle_counter ? t->calib_error_ppm : NAN);
	kh_json_obj_end(j);
	kh_json_obj_end(j);
}

void kh_fingerprint_write(struct kh_json *j, const struct kh_timer *t,
			  const struct kh_counters *c, int cpu)
{
	struct utsname u;
	char buf[512], path[256];
	time_t now = time(NULL);
	struct tm tm;

	kh_json_obj(j, "kcross");
	kh_json_str(j, "version", KCROSS_VERSION);
	kh_json_str(j, "git_rev", KCROSS_GIT_REV);
#ifdef KCROSS_STATIC_BUILD
	kh_json_str(j, "build", "static");
#else
	kh_json_str(j, "build", "dynamic");
#endif
#ifdef __clang__
	kh_json_str(j, "compiler", "clang " __clang_version__);
#else
	kh_json_str(j, "compiler", "gcc " __VERSION__);
#endif
	kh_json_obj_end(j);

	kh_json_str(j, "arch", KC_ARCH_NAME);
	json_cpu(j);

	kh_json_obj(j, "kernel");
	if (uname(&u) == 0) {
		kh_json_str(j, "release", u.release);
		kh_json_str(j, "version", u.version);
	} else {
		kh_json_null(j, "release");
		kh_json_null(j, "version");
	}
	json_file(j, "cmdline", "/proc/cmdline");
	kh_json_obj_end(j);

	json_vulnerabilities(j);

	kh_json_obj(j, "virtualization");
#if defined(KC_ARCH_X86_64)
	json_tristate(j, "hypervisor_flag", has_cpu_flag("hypervisor"));
#else
	(void)has_cpu_flag;
	(void)json_tristate;
	kh_json_null(j, "hypervisor_flag");
#endif
	json_file(j, "hypervisor_type", "/sys/hypervisor/type");
	json_file(j, "dmi_sys_vendor", "/sys/class/dmi/id/sys_vendor");
	json_file(j, "dmi_product_name", "/sys/class/dmi/id/product_name");
	kh_json_obj_end(j);

	/* Of the measuring CPU; unknown when the harness could not pin. */
	kh_json_obj(j, "power");
	if (cpu < 0) {
		kh_json_null(j, "governor");
		kh_json_null(j, "driver");
	} else {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_governor", cpu);
		json_file(j, "governor", path);
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%d/cpufreq/scaling_driver", cpu);
		json_file(j, "driver", path);
	}
	kh_json_obj_end(j);

	kh_json_obj(j, "smt");
	json_file(j, "control", "/sys/devices/system/cpu/smt/control");
	json_file(j, "active", "/sys/devices/system/cpu/smt/active");
	kh_json_obj_end(j);

	kh_json_obj(j, "isolation");
	json_file(j, "isolcpus", "/sys/devices/system/cpu/isolated");
	json_file(j, "nohz_full", "/sys/devices/system/cpu/nohz_full");
	kh_json_obj_end(j);

	kh_json_obj(j, "libc");
	kh_json_str(j, "name", "glibc");
	kh_json_str(j, "version", gnu_get_libc_version());
	kh_json_obj_end(j);

	json_rseq(j);

	kh_json_obj(j, "auxv");
	json_auxv(j, "hwcap", AT_HWCAP, true);
	json_auxv(j, "hwcap2", AT_HWCAP2, true);
	json_auxv(j, "rseq_feature_size", KC_AT_RSEQ_FEATURE_SIZE, false);
	json_auxv(j, "rseq_align", KC_AT_RSEQ_ALIGN, false);
	/* Absent means no vDSO: a fact, not an unknown (getauxval reads the
	 * process's own vector for this one). */
	kh_json_bool(j, "sysinfo_ehdr", getauxval(AT_SYSINFO_EHDR) != 0);
	kh_json_obj_end(j);

	json_perf(j, c);
	json_syscall(j);
	json_forced(j);
	json_timer(j, t);

	kh_json_obj(j, "host");
	kh_json_str(j, "hostname", gethostname(buf, sizeof(buf)) ? NULL : buf);
	gmtime_r(&now, &tm);
	strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	kh_json_str(j, "time", buf);
	kh_json_obj_end(j);
}
