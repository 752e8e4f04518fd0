/* SPDX-License-Identifier: MIT */
/*
 * examples/percpu.c - per-CPU counter, list, pool and lock.
 *
 *   cc -pthread -o percpu percpu.c $(pkg-config --cflags --libs --static kcross)
 *
 * With rseq each operation is a restartable sequence on the calling CPU's
 * slot: no atomic instruction, no lock.  Without rseq the same calls take an
 * atomic or locked fallback ("atomic" mode, see kc_percpu_mode()); the
 * results are the same.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kcross/kcross.h>

#define THREADS 4
#define ADDS 100000

static struct kc_percpu_counter hits;
static struct kc_percpu_lock lock;
static long *guarded;		/* one word per CPU, under that CPU's lock */

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ADDS; i++) {
		kc_percpu_counter_add(&hits, 1);
		if (i % 100 == 0) {
			int cpu = kc_percpu_lock_acquire(&lock);

			guarded[cpu]++;	/* cpu < kc_percpu_nr_cpus() */
			kc_percpu_lock_release(&lock, cpu);
		}
	}
	return NULL;
}

struct item {
	struct kc_percpu_node node;	/* first, so a node is its item */
	int value;
};

int main(void)
{
	pthread_t t[THREADS];
	struct kc_percpu_list list;
	struct kc_percpu_pool pool;
	struct item items[3];
	struct kc_percpu_node *n;
	long locked = 0, sum = 0;
	void *objs[8];

	/* The mode is fixed by the first list, pool or lock; asking does not. */
	printf("per-CPU mode (would be): %s, %d possible CPUs\n", kc_percpu_mode(),
	       kc_percpu_nr_cpus());
	guarded = calloc((size_t)kc_percpu_nr_cpus(), sizeof(*guarded));
	if (!guarded || kc_percpu_counter_init(&hits) || kc_percpu_lock_init(&lock) ||
	    kc_percpu_list_init(&list) ||
	    kc_percpu_pool_init(&pool, sizeof(struct item), 64, 8))
		return 1;
	printf("per-CPU mode: %s\n", kc_percpu_mode());

	/* Counter and lock, from several threads. */
	for (int i = 0; i < THREADS; i++)
		pthread_create(&t[i], NULL, worker, NULL);
	for (int i = 0; i < THREADS; i++)
		pthread_join(t[i], NULL);
	for (int i = 0; i < kc_percpu_nr_cpus(); i++)
		locked += guarded[i];
	printf("counter: %ld (want %d); locked increments: %ld (want %d)\n",
	       (long)kc_percpu_counter_sum(&hits), THREADS * ADDS, locked, THREADS * ADDS / 100);
	if (kc_percpu_counter_sum(&hits) != THREADS * ADDS || locked != THREADS * ADDS / 100)
		return 1;

	/* List: push on this CPU, pop from any. */
	for (int i = 0; i < 3; i++) {
		items[i].value = 10 * (i + 1);
		kc_percpu_list_push(&list, &items[i].node);
	}
	while ((n = kc_percpu_list_pop_any(&list)))
		sum += ((struct item *)n)->value;
	printf("list: pushed 10 + 20 + 30, popped %ld\n", sum);
	if (sum != 60)
		return 1;

	/* Pool: fixed-size objects cached per CPU. */
	for (int i = 0; i < 8; i++)
		if (!(objs[i] = kc_percpu_pool_alloc(&pool)))
			return 1;
	for (int i = 0; i < 8; i++)
		kc_percpu_pool_free(&pool, objs[i]);
	puts("pool: 8 objects allocated and freed");

	kc_percpu_pool_destroy(&pool);
	kc_percpu_list_destroy(&list);
	kc_percpu_lock_destroy(&lock);
	kc_percpu_counter_destroy(&hits);
	free(guarded);
	puts("percpu example: ok");
	return 0;
}
