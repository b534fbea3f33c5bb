/* tests/bench/bench_queue.h - the two hrtimer queues behind one interface for the
 * benchmark, chosen at compile time (bench.mk builds bench_tqueue.c once for each; no
 * function pointers, every call inlines to the chosen one):
 *
 *     TQ_IMPL_RBTREE  the library's red-black tree with a cached first node (tq_rbtree.h)
 *     TQ_IMPL_HEAP    a 4-ary min-heap in a caller-supplied slot array (tq_heap.h, here)
 *
 * docs/hrtimer-queue.md has the measurements behind the library's choice of the tree.
 *
 * Contracts, identical for both structures (those of lib/time/tqueue.h):
 * - Order is deadline_ns as an unsigned absolute time, then insertion order (equal
 *   deadlines expire first-queued first-out). UINT64_MAX is a valid "never".
 * - bq_insert: 1 if the node became the first, 0 if not, -EBUSY if it is already queued,
 *   -ENOMEM if `capacity` nodes are queued.
 * - bq_remove: 1 if the node was the first (the head changed, possibly to empty), else 0;
 *   removing a node that is not queued is a no-op returning 0.
 * - bq_requeue (restart at a new deadline, queued or not): 1 if the node was or now is the
 *   first, i.e. the earliest deadline may have moved; 0 if not; -ENOMEM as bq_insert.
 * - bq_pop_first: the first node, dequeued, or NULL. bq_first peeks in O(1).
 * - Not locked and not reentrant: the caller serialises (interrupts off on one CPU). */
#ifndef TICKLAB_BENCH_QUEUE_H
#define TICKLAB_BENCH_QUEUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TQ_IMPL_RBTREE 1
#define TQ_IMPL_HEAP   2

#ifndef TQ_IMPL
#define TQ_IMPL TQ_IMPL_RBTREE
#endif

#if TQ_IMPL == TQ_IMPL_RBTREE
/* The library's queue itself, under the benchmark's names. */
#include "ticklab/tqueue.h"
struct bq_slot { uint8_t unused; };         /* the tree needs no storage of its own */
#define bq tq
#define bq_node tq_node
#define bq_init(q, slots, capacity) ((void)(slots), tq_init((q), (capacity)))
#define bq_insert tq_insert
#define bq_remove tq_remove
#define bq_requeue tq_requeue
#define bq_first tq_first
#define bq_pop_first tq_pop_first
#define bq_pop_head tq_pop_head
#define bq_empty tq_empty
#define bq_queued tq_queued
#define bq_deadline_ns tq_deadline_ns
#define bq_count tq_count

#elif TQ_IMPL == TQ_IMPL_HEAP
#include "tests/bench/tq_heap.h"
#define TQ_IMPL_NAME "heap"
struct bq_node { struct tq_heap_node impl; };
struct bq { struct tq_heap impl; };
struct bq_slot { struct tq_heap_slot impl; };
_Static_assert(sizeof(struct bq_slot) == sizeof(struct tq_heap_slot),
               "a bq_slot array must be a tq_heap_slot array");
/* The wrappers convert by cast: impl is the first member, so the pointers are equal. */
_Static_assert(offsetof(struct bq_node, impl) == 0, "bq_node must start with impl");

static inline void bq_init(struct bq *q, struct bq_slot *slots, uint32_t capacity)
{
    tq_heap_init(&q->impl, &slots->impl, capacity);
}
static inline int bq_insert(struct bq *q, struct bq_node *n, uint64_t deadline_ns)
{
    return tq_heap_insert(&q->impl, &n->impl, deadline_ns);
}
static inline int bq_remove(struct bq *q, struct bq_node *n)
{
    return tq_heap_remove(&q->impl, &n->impl);
}
static inline int bq_requeue(struct bq *q, struct bq_node *n, uint64_t deadline_ns)
{
    return tq_heap_requeue(&q->impl, &n->impl, deadline_ns);
}
static inline struct bq_node *bq_first(const struct bq *q)
{
    return (struct bq_node *)tq_heap_first(&q->impl);
}
static inline struct bq_node *bq_pop_first(struct bq *q)
{
    return (struct bq_node *)tq_heap_pop_first(&q->impl);
}
static inline bool bq_queued(const struct bq_node *n) { return tq_heap_queued(&n->impl); }
static inline uint64_t bq_deadline_ns(const struct bq_node *n) { return n->impl.deadline_ns; }

#else
#error "TQ_IMPL must be TQ_IMPL_RBTREE or TQ_IMPL_HEAP"
#endif

#endif
