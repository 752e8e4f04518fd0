/* SPDX-License-Identifier: MIT */
/*
 * kc_ctx: the C half of user-level context switches (the asm core,
 * kc_ctx_switch and kc__ctx_start, is src/arch/ctx-ARCH.S) and the kc_sched
 * cooperative scheduler on top.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <kcross/ctx.h>

/* What the asm cores (src/arch/ctx-ARCH.S: CTX_SP, CTX_FLAGS, SHARED_FPENV) read. */
_Static_assert(offsetof(struct kc_ctx, sp) == 0, "the asm core reads kc_ctx.sp at offset 0");
_Static_assert(offsetof(struct kc_ctx, flags) == 8, "the asm core reads kc_ctx.flags at offset 8");
_Static_assert(sizeof(((struct kc_ctx *)0)->flags) == 4, "the asm core reads kc_ctx.flags as 32 bits");
_Static_assert(KC_CTX_SHARED_FPENV == 0x8u, "the asm core tests kc_ctx.flags bit 3");
_Static_assert(KC_CTX_FRAME_SIZE % 16 == 0, "frames keep the stack 16-byte aligned");

/* The asm core's entry trampoline, and the C function it calls. */
extern void kc__ctx_start(void) __attribute__((visibility("hidden")));
void kc__ctx_entry(struct kc_ctx *c) __attribute__((visibility("hidden"), noreturn));

static size_t page_size(void)
{
	static size_t ps;

	if (!ps) {
		long v = sysconf(_SC_PAGESIZE);
		ps = v > 0 ? (size_t)v : 4096;
	}
	return ps;
}

__attribute__((noreturn)) static void die(const char *msg)
{
	fprintf(stderr, "kcross: kc_ctx: %s\n", msg);
	fflush(stderr);
	abort();
}

void kc__ctx_entry(struct kc_ctx *c)
{
	c->fn(c->arg);
	c->flags |= KC_CTX_DONE;
	if (!c->link)
		die("a context's function returned and the context has no link");
	kc_ctx_switch(c, c->link);
	die("a finished context was switched to");
}

int kc_ctx_make(struct kc_ctx *c, void *stack, size_t size,
		void (*fn)(void *arg), void *arg, struct kc_ctx *link)
{
	struct kc_ctx_frame *f;
	void *map = NULL;
	size_t map_size = 0;
	uintptr_t top;

	if (!c || !fn)
		return -EINVAL;
	if (!stack) {
		size_t ps = page_size();

		if (!size)
			size = KC_CTX_DEFAULT_STACK;
		if (size < KC_CTX_MIN_STACK)
			return -EINVAL;
		size = (size + ps - 1) & ~(ps - 1);
		map_size = size + ps;		/* the guard page, below */
		map = mmap(NULL, map_size, PROT_READ | PROT_WRITE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
		if (map == MAP_FAILED)
			return -ENOMEM;
		if (mprotect(map, ps, PROT_NONE) != 0) {
			munmap(map, map_size);
			return -ENOMEM;
		}
		stack = (char *)map + ps;
	} else if (size < KC_CTX_MIN_STACK) {
		return -EINVAL;
	}

	memset(c, 0, sizeof(*c));
	c->stack = stack;
	c->size = size;
	c->map = map;
	c->map_size = map_size;
	c->fn = fn;
	c->arg = arg;
	c->link = link;
	c->flags = KC_CTX_MADE | (map ? KC_CTX_OWN_STACK : 0);

	top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
	top -= KC_CTX_TOP_RESERVE;	/* ppc64le: the entry's caller frame header */
	f = (struct kc_ctx_frame *)(top - KC_CTX_FRAME_SIZE);
	memset((void *)f, 0, KC_CTX_FRAME_SIZE + KC_CTX_TOP_RESERVE);
	kc__ctx_frame_init(f, c, kc__ctx_start);
	c->sp = f;
	return 0;
}

void kc_ctx_free(struct kc_ctx *c)
{
	if (c && (c->flags & KC_CTX_OWN_STACK) && c->map) {
		munmap(c->map, c->map_size);
		c->map = NULL;
		c->stack = NULL;
		c->sp = NULL;
		c->flags &= ~KC_CTX_OWN_STACK;
	}
}

void kc_ctx_share_fpenv(struct kc_ctx *c)
{
	c->flags |= KC_CTX_SHARED_FPENV;
}

/* ---------------------------------------------------------------- kc_sched */

struct kc_sched_task {
	struct kc_ctx ctx;
	struct kc_sched *s;
	void (*fn)(void *arg);
	void *arg;
	int id;
	int joining;			/* the id this task waits for, 0 if none */
	struct kc_sched_task *prev, *next;	/* the ring of runnable tasks */
};

static void task_main(void *p)
{
	struct kc_sched_task *t = p;

	t->fn(t->arg);
	/* Returning switches to t->ctx.link, the scheduler's main context,
	 * which unlinks the task and frees its stack (not from on it). */
}

int kc_sched_init(struct kc_sched *s)
{
	memset(s, 0, sizeof(*s));
	return 0;
}

static void ring_insert_before(struct kc_sched_task *pos, struct kc_sched_task *t)
{
	t->next = pos;
	t->prev = pos->prev;
	pos->prev->next = t;
	pos->prev = t;
}

int kc_sched_spawn(struct kc_sched *s, void (*fn)(void *arg), void *arg, size_t stack_size)
{
	struct kc_sched_task *t;
	int rc;

	if (!s || !fn)
		return -EINVAL;
	if (s->ntasks == s->cap) {
		int cap = s->cap ? 2 * s->cap : 16;
		struct kc_sched_task **n = realloc(s->tasks, (size_t)cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		s->tasks = n;
		s->cap = cap;
	}
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	rc = kc_ctx_make(&t->ctx, NULL, stack_size, task_main, t, &s->main);
	if (rc) {
		free(t);
		return rc;
	}
	t->s = s;
	t->fn = fn;
	t->arg = arg;
	t->id = s->ntasks + 1;
	s->tasks[s->ntasks++] = t;
	/* Last in the round: before the running task, or before where run()
	 * continues; alone, a ring of one. */
	if (s->current)
		ring_insert_before(s->current, t);
	else if (s->next)
		ring_insert_before(s->next, t);
	else
		t->prev = t->next = s->next = t;
	s->live++;
	return t->id;
}

void kc_sched_yield(struct kc_sched *s)
{
	struct kc_sched_task *cur = s->current, *next;

	if (!cur || cur->next == cur)
		return;
	next = cur->next;
	s->current = next;
	kc_ctx_switch(&cur->ctx, &next->ctx);
}

int kc_sched_self(const struct kc_sched *s)
{
	return s->current ? s->current->id : 0;
}

static struct kc_sched_task *task_by_id(struct kc_sched *s, int id)
{
	return id >= 1 && id <= s->ntasks ? s->tasks[id - 1] : NULL;
}

/* From the main context: run the ring until `until` (0: every task) ended. */
static int run_until(struct kc_sched *s, int until)
{
	while (s->live > 0) {
		struct kc_sched_task *t, *ended;

		if (until && kc_ctx_done(&task_by_id(s, until)->ctx))
			break;
		t = s->next;
		s->current = t;
		kc_ctx_switch(&s->main, &t->ctx);
		/* Back only when a task's function returned: the one current. */
		ended = s->current;
		s->current = NULL;
		if (!ended || !kc_ctx_done(&ended->ctx))
			die("kc_sched: the main context resumed with no task ended");
		if (ended->next == ended) {
			s->next = NULL;
		} else {
			ended->prev->next = ended->next;
			ended->next->prev = ended->prev;
			s->next = ended->next;
		}
		ended->next = ended->prev = NULL;
		kc_ctx_free(&ended->ctx);
		s->live--;
	}
	return 0;
}

int kc_sched_join(struct kc_sched *s, int id)
{
	struct kc_sched_task *target = task_by_id(s, id), *w;

	if (!target)
		return -ESRCH;
	if (!s->current)
		return run_until(s, id);
	/* A cycle of joins would spin for ever: refuse it. */
	for (w = target; w; w = w->joining ? task_by_id(s, w->joining) : NULL) {
		if (w == s->current)
			return -EDEADLK;
		if (kc_ctx_done(&w->ctx))
			break;
	}
	s->current->joining = id;
	while (!kc_ctx_done(&target->ctx))
		kc_sched_yield(s);
	s->current->joining = 0;
	return 0;
}

int kc_sched_run(struct kc_sched *s)
{
	if (s->current)
		return -EDEADLK;
	return run_until(s, 0);
}

void kc_sched_destroy(struct kc_sched *s)
{
	int i;

	for (i = 0; i < s->ntasks; i++) {
		kc_ctx_free(&s->tasks[i]->ctx);
		free(s->tasks[i]);
	}
	free(s->tasks);
	memset(s, 0, sizeof(*s));
}
