/* tests/bench/tq_heap.h - an hrtimer queue as a 4-ary min-heap in a caller's array: the
 * red-black tree's rival, kept beside the benchmark that compares them (bench_tqueue.c,
 * docs/hrtimer-queue.md) and tested on the host; the library uses the tree (tqueue.h).
 *
 * Order: by deadline_ns (unsigned, absolute), then by insertion sequence, so timers with
 * equal deadlines leave in the order they were queued (a heap is not stable by itself; the
 * sequence number makes the key total). Each node records its slot, so removing an arbitrary
 * node is O(log n) too; the first node is slot 0, so peeking is one load.
 *
 * Why 4-ary and keys in the slots: a sift compares only slots (deadline + node pointer, 16
 * bytes), so the four children of a slot lie in at most two cache lines, and a 4-ary tree has
 * half the levels of a binary one; insertion, which sifts up from the last slot and usually
 * stops at once, costs the same at any size. The node is touched only to record its new slot
 * and, on equal deadlines, to compare sequence numbers. Removing the first node is the
 * weaker operation: it sifts the last slot down from the root, about log4(n) levels
 * (docs/hrtimer-queue.md has the measurements).
 *
 * No allocation: the slot array comes from the caller and bounds the number queued.
 * Deadlines are compared as plain unsigned numbers; see tq_rbtree.h for why. A node that is
 * all zero bytes is "not queued". Not locked: the caller serialises. */
#ifndef TICKLAB_TIME_TQ_HEAP_H
#define TICKLAB_TIME_TQ_HEAP_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TQ_HEAP_ARITY 4
/* Keeps child index arithmetic (ARITY * i + ARITY) inside 32 bits. */
#define TQ_HEAP_MAX_CAPACITY (1u << 28)

struct tq_heap_node {
    uint64_t deadline_ns;            /* the key; valid while queued */
    uint64_t seq;                    /* tie-break: insertion order within the heap */
    uint32_t pos;                    /* 1 + slot index; 0 = not queued */
};

struct tq_heap_slot {
    uint64_t deadline_ns;            /* copy of node->deadline_ns, so sifts stay in the array */
    struct tq_heap_node *node;
};

struct tq_heap {
    struct tq_heap_slot *slot;
    uint32_t count, capacity;
    uint64_t next_seq;               /* 2^64 insertions before it wraps: never */
};

/* slots[capacity] belongs to the heap from now on. A capacity above TQ_HEAP_MAX_CAPACITY is
 * clamped to it. */
void tq_heap_init(struct tq_heap *h, struct tq_heap_slot *slots, uint32_t capacity);

/* The same contracts, return values and errors as tq_rb_insert, tq_rb_remove,
 * tq_rb_requeue and tq_rb_pop_first (tq_rbtree.h). */
int tq_heap_insert(struct tq_heap *h, struct tq_heap_node *n, uint64_t deadline_ns);
int tq_heap_remove(struct tq_heap *h, struct tq_heap_node *n);
int tq_heap_requeue(struct tq_heap *h, struct tq_heap_node *n, uint64_t deadline_ns);
struct tq_heap_node *tq_heap_pop_first(struct tq_heap *h);

static inline struct tq_heap_node *tq_heap_first(const struct tq_heap *h)
{
    return h->count ? h->slot[0].node : NULL;
}
static inline bool tq_heap_empty(const struct tq_heap *h) { return h->count == 0; }
static inline bool tq_heap_queued(const struct tq_heap_node *n) { return n->pos != 0; }

#endif
