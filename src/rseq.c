/* SPDX-License-Identifier: MIT */
/*
 * rseq registration: glibc's when it has one, else our own per thread.
 *
 * One process-wide offset from the thread pointer (kc__rseq_offset) finds
 * the calling thread's area.  It starts pointing at our own TLS area, whose
 * cpu_id is statically -1 ("not registered"), so before and without any
 * initialisation every fast path sees a negative cpu_id and falls back,
 * and the slow path registers lazily.  That also covers threads created
 * before the library was initialised or loaded, and threads created by
 * code that knows nothing of kcross.
 *
 * Our area is initial-exec TLS (one load from the thread pointer, no
 * __tls_get_addr) but small and 64-byte aligned, so dlopen() of libkcross
 * fits in glibc's surplus static TLS (librseq's 1024-byte alignment did not).
 */
/* The one file that writes kc__rseq_offset. */
#define KC__RSEQ_OFFSET_WRITABLE 1
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <kcross/clock.h>
#include <kcross/rseq.h>
#include <kcross/settings.h>
#include <kcross/syscall.h>

#define RSEQ_ORIG_SIZE 32u
#define RSEQ_FLAG_UNREGISTER 1
/* Our area: room for the extensible ABI's growth, at most this alignment. */
#define OWN_AREA_SIZE 256u
#define OWN_AREA_ALIGN 64u

/* glibc 2.35+: where its registration lives; absent (NULL) otherwise. */
extern const ptrdiff_t __rseq_offset __attribute__((weak));
extern const unsigned int __rseq_size __attribute__((weak));

static __thread union {
	struct kc_rseq_abi abi;
	char bytes[OWN_AREA_SIZE];
} own_area __attribute__((tls_model("initial-exec"), aligned(OWN_AREA_ALIGN))) = {
	.abi = { .cpu_id = (uint32_t)KC_RSEQ_CPU_ID_UNINITIALIZED },
};

/* This thread's registration failure (our own registration only). */
static __thread int own_error;
static __thread const char *own_why;

ptrdiff_t kc__rseq_offset;
unsigned int kc__rseq_feature_size;

static struct {
	enum kc_rseq_owner owner;
	unsigned int len;		/* what we register (ours) or found (glibc) */
	unsigned int feature_size;	/* AT_RSEQ_FEATURE_SIZE, or 20 if absent */
	unsigned int align;
	int error;
	const char *why;
	int state;			/* 0 not started, 1 in progress, 2 done */
	int registered_any;		/* some thread registered our area */
} st;

const char *kc_rseq_owner_name(enum kc_rseq_owner o)
{
	switch (o) {
	case KC_RSEQ_OWNER_LIBC: return "glibc";
	case KC_RSEQ_OWNER_KCROSS: return "kcross";
	default: return "none";
	}
}

static long sys_rseq(void *area, unsigned int len, int flags)
{
	return kc_syscall4(SYS_rseq, (long)area, len, flags, KC_RSEQ_SIG);
}

static void set_unavailable(int err, const char *why)
{
	st.owner = KC_RSEQ_OWNER_NONE;
	st.error = err;
	st.why = why;
}

/*
 * Length of glibc's registration: the kernel answers EBUSY only to the
 * registration it already has (same area, length and signature), so
 * probing lengths tells what glibc registered (2.36: 32 bytes, though it
 * exports __rseq_size = 20).
 */
static unsigned int probe_libc_len(void *area)
{
	for (unsigned int len = RSEQ_ORIG_SIZE; len <= 256; len *= 2) {
		long rc = sys_rseq(area, len, 0);

		if (rc == -EBUSY)
			return len;
		if (rc == 0) {	/* it was not registered after all: undo */
			sys_rseq(area, len, RSEQ_FLAG_UNREGISTER);
			return 0;
		}
	}
	return 0;
}

/*
 * KCROSS_RSEQ: off leaves the process without rseq as far as kcross goes: no
 * area of its own is registered and glibc's registration, if any, is not
 * used (what turns glibc's off is its tunable, glibc.pthread.rseq=0: the
 * harness sets it, see harness/settings.c).  auto and on (and unset): glibc's
 * registration when it has one, else kcross's own.  Any other value is
 * refused by kc_settings_error() and meanwhile counts as auto.
 */
const char *const kc__rseq_setting_values[] = { "auto", "on", "off", NULL };

static bool rseq_forced_off(void)
{
	const char *v = kc_setting("KCROSS_RSEQ", kc__rseq_setting_values, NULL, 0);

	return v && !strcmp(v, "off");
}

static void init_once(void);

/*
 * Once per process, before main() or at dlopen().  Priority 101 runs it
 * before ordinary constructors: until it has run, kc__rseq_offset does not
 * yet point at a valid area, so kcross's inline reads must not be used from
 * constructors of priority 101 or below.
 */
__attribute__((constructor(101))) static void kc__rseq_init(void)
{
	int expected = 0;

	if (__atomic_compare_exchange_n(&st.state, &expected, 1, false,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
		init_once();
		__atomic_store_n(&st.state, 2, __ATOMIC_RELEASE);
		kc_rseq_register_current_thread();
		return;
	}
	while (__atomic_load_n(&st.state, __ATOMIC_ACQUIRE) != 2)
		kc_cpu_relax();
}

static void init_once(void)
{
	char *tp = kc_thread_pointer();
	unsigned long fs = getauxval(KC_AT_RSEQ_FEATURE_SIZE);
	unsigned long al = getauxval(KC_AT_RSEQ_ALIGN);

	/* Before 6.3 the auxv says nothing: the original 20 meaningful bytes. */
	st.feature_size = fs ? (unsigned int)fs : 20;
	st.align = al ? (unsigned int)al : RSEQ_ORIG_SIZE;
	kc__rseq_offset = (char *)&own_area - tp;

	if (rseq_forced_off()) {
		set_unavailable(-ENOTSUP, &__rseq_size && __rseq_size > 0
				? "KCROSS_RSEQ=off: glibc's registration left unused (its tunable "
				  "glibc.pthread.rseq=0 removes it), none of kcross's own"
				: "KCROSS_RSEQ=off: rseq left unregistered");
		return;
	}
	if (&__rseq_size && &__rseq_offset && __rseq_size > 0) {
		unsigned int len = probe_libc_len(tp + __rseq_offset);

		st.owner = KC_RSEQ_OWNER_LIBC;
		st.len = len ? len : RSEQ_ORIG_SIZE;
		kc__rseq_feature_size = st.feature_size < st.len ? st.feature_size : st.len;
		__atomic_store_n(&kc__rseq_offset, __rseq_offset, __ATOMIC_RELEASE);
		return;
	}
	if (st.align > OWN_AREA_ALIGN) {
		set_unavailable(-EINVAL, "kernel asks for rseq alignment above 64 bytes");
		return;
	}
	/* At least 32 bytes; longer registrations get the kernel's newer mode. */
	st.len = (st.feature_size + st.align - 1) / st.align * st.align;
	if (st.len < RSEQ_ORIG_SIZE)
		st.len = RSEQ_ORIG_SIZE;
	if (st.len > OWN_AREA_SIZE)
		st.len = OWN_AREA_SIZE;
	st.owner = KC_RSEQ_OWNER_KCROSS;
	kc__rseq_feature_size = st.feature_size < st.len ? st.feature_size : st.len;
}

int kc_rseq_register_current_thread(void)
{
	struct kc_rseq_abi *a;
	long rc;

	if (__atomic_load_n(&st.state, __ATOMIC_ACQUIRE) != 2)
		kc__rseq_init();
	a = kc_rseq_area();
	if ((int32_t)__atomic_load_n(&a->cpu_id, __ATOMIC_RELAXED) >= 0)
		return 0;
	if (st.owner != KC_RSEQ_OWNER_KCROSS)
		return st.error ? st.error : -ENOSYS;
	if (own_area.abi.cpu_id == (uint32_t)KC_RSEQ_CPU_ID_REGISTRATION_FAILED)
		return own_error;
	rc = sys_rseq(&own_area, st.len, 0);
	if (rc == 0) {
		__atomic_store_n(&st.registered_any, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* Not registered, so this area is ours to write: remember the failure
	 * in it, which keeps later fast paths on the fallback without a
	 * system call each time. */
	own_area.abi.cpu_id = (uint32_t)KC_RSEQ_CPU_ID_REGISTRATION_FAILED;
	own_error = (int)rc;
	switch (rc) {
	case -ENOSYS:
		own_why = "kernel has no rseq (or seccomp/emulator refuses it)";
		break;
	case -EBUSY:
	case -EINVAL:
		own_why = "another rseq registration exists for this thread "
			  "(not glibc's): its area is unknown to kcross";
		break;
	case -EPERM:
		own_why = "another rseq registration with another signature exists";
		break;
	default:
		own_why = "rseq registration failed";
	}
	/*
	 * A failure before any thread succeeded is the process's condition
	 * (a kernel or sandbox without rseq): every thread uses the fallback
	 * without trying.  A failure after others succeeded is this thread's
	 * alone (a per-thread seccomp filter, a foreign registration): the
	 * others keep rseq.
	 */
	if (!__atomic_load_n(&st.registered_any, __ATOMIC_RELAXED))
		set_unavailable(own_error, own_why);
	return own_error;
}

int kc_rseq_unregister_current_thread(void)
{
	long rc;

	if (st.owner != KC_RSEQ_OWNER_KCROSS ||
	    (int32_t)own_area.abi.cpu_id < 0)
		return 0;
	rc = sys_rseq(&own_area, st.len, RSEQ_FLAG_UNREGISTER);
	if (rc == 0)
		own_area.abi.cpu_id = (uint32_t)KC_RSEQ_CPU_ID_UNINITIALIZED;
	return (int)rc;
}

struct kc_rseq_info kc_rseq_info(void)
{
	struct kc_rseq_info i;

	int rc = kc_rseq_register_current_thread();

	i.owner = st.owner;
	i.active = rc == 0;
	i.size = st.owner == KC_RSEQ_OWNER_NONE ? 0 : st.len;
	i.feature_size = st.feature_size;
	i.align = st.align;
	i.libc_size = &__rseq_size ? (int)__rseq_size : -1;
	if (i.active) {
		i.error = 0;
		i.why = NULL;
	} else {
		i.error = own_error ? own_error : st.error ? st.error : rc;
		i.why = own_why ? own_why : st.why;
	}
	return i;
}

/* The slow paths: register if we can, else the vDSO, else the kernel. */
int kc__cpu_slow(void)
{
	unsigned int cpu;
	int rc;

	if (kc_rseq_register_current_thread() == 0)
		return (int)kc_rseq_cpu_raw();
	rc = kc_getcpu(&cpu, NULL);
	return rc ? rc : (int)cpu;
}

int kc__node_slow(void)
{
	unsigned int node;
	int rc;

	if (kc_rseq_register_current_thread() == 0 && kc__rseq_feature_size >= 24)
		return (int)__atomic_load_n(&kc_rseq_area()->node_id, __ATOMIC_RELAXED);
	rc = kc_getcpu(NULL, &node);
	return rc ? rc : (int)node;
}

int kc__cid_slow(void)
{
	if (kc_rseq_register_current_thread() == 0 && kc__rseq_feature_size >= 28)
		return (int)__atomic_load_n(&kc_rseq_area()->mm_cid, __ATOMIC_RELAXED);
	return kc__cpu_slow();
}
