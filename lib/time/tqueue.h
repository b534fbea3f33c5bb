/* lib/time/tqueue.h - the hrtimer queue: timers ordered by deadline, earliest first, in a
 * red-black tree with a cached first node (tq_rbtree.h). The interface is the queue's, not
 * the tree's, so that hrtimer.c reads as queue operations; every call inlines to the tree's.
 * (A 4-ary heap was measured beside it and lost: tests/bench/, docs/hrtimer-queue.md.) Use:
 *
 *     struct hrtimer { struct tq_node node; ... };        // embedded, zeroed = not queued
 *     tq_init(&q, HRTIMER_MAX);
 *     if (tq_insert(&q, &t->node, deadline_ns) == 1)      // new head: reprogram the device
 *         program(tq_deadline_ns(tq_first(&q)));
 *
 * Contracts:
 * - Order is deadline_ns as an unsigned absolute time, then insertion order (equal
 *   deadlines expire first-queued first-out). UINT64_MAX is a valid "never".
 * - tq_insert: 1 if the node became the first, 0 if not, -EBUSY if it is already queued,
 *   -ENOMEM if `capacity` nodes are queued.
 * - tq_remove: 1 if the node was the first (the head changed, possibly to empty), else 0;
 *   removing a node that is not queued is a no-op returning 0.
 * - tq_requeue (restart at a new deadline, queued or not): 1 if the node was or now is the
 *   first, i.e. the earliest deadline may have moved; 0 if not; -ENOMEM as tq_insert.
 * - tq_pop_first: the first node, dequeued, or NULL. tq_first peeks in O(1).
 * - Not locked and not reentrant: the caller serialises (interrupts off on one CPU). */
#ifndef TICKLAB_TIME_TQUEUE_H
#define TICKLAB_TIME_TQUEUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ticklab/tq_rbtree.h"

#define TQ_IMPL_NAME "rbtree"       /* what the hrtimer_base record names */
#define TQ_FN(op) tq_rb_##op
struct tq_node { struct tq_rb_node impl; };
struct tq { struct tq_rb impl; };

/* An empty queue that holds at most capacity timers (tq_insert: -ENOMEM beyond). */
static inline void tq_init(struct tq *q, uint32_t capacity)
{
    tq_rb_init(&q->impl, capacity);
}

/* The wrappers convert by cast: impl is the first member, so the pointers are equal. */
_Static_assert(offsetof(struct tq_node, impl) == 0, "tq_node must start with impl");

static inline int tq_insert(struct tq *q, struct tq_node *n, uint64_t deadline_ns)
{
    return TQ_FN(insert)(&q->impl, &n->impl, deadline_ns);
}
static inline int tq_remove(struct tq *q, struct tq_node *n)
{
    return TQ_FN(remove)(&q->impl, &n->impl);
}
static inline int tq_requeue(struct tq *q, struct tq_node *n, uint64_t deadline_ns)
{
    return TQ_FN(requeue)(&q->impl, &n->impl, deadline_ns);
}
static inline struct tq_node *tq_first(const struct tq *q)
{
    return (struct tq_node *)TQ_FN(first)(&q->impl);
}
static inline struct tq_node *tq_pop_first(struct tq *q)
{
    return (struct tq_node *)TQ_FN(pop_first)(&q->impl);
}
/* tq_pop_first() for a caller that holds the first node, n (tq_first(q), not NULL): the
 * tree then need not load and test it again. */
static inline void tq_pop_head(struct tq *q, struct tq_node *n)
{
    tq_rb_pop_node(&q->impl, &n->impl);
}
static inline bool tq_empty(const struct tq *q) { return TQ_FN(empty)(&q->impl); }
static inline bool tq_queued(const struct tq_node *n) { return TQ_FN(queued)(&n->impl); }
/* Valid while n is queued (and after, until n is queued again). */
static inline uint64_t tq_deadline_ns(const struct tq_node *n) { return n->impl.deadline_ns; }
static inline uint32_t tq_count(const struct tq *q) { return q->impl.count; }

#endif
