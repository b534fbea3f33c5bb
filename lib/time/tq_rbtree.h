/* lib/time/tq_rbtree.h - the hrtimer queue as an intrusive red-black tree.
 *
 * Order: by deadline_ns (unsigned, absolute); timers with equal deadlines leave in the order
 * they were queued. That needs no sequence number: an insertion descends to the right of
 * every equal key, and rotations keep the in-order sequence. The earliest node is cached, so
 * tq_rb_first() is one load; insert and remove are O(log n) with at most three rotations.
 * The node lives inside the timer (no allocation); `capacity` is only a limit (the queue
 * holds at most so many), which also lets the benchmark's heap (tests/bench/tq_heap.h)
 * stand behind the same interface.
 *
 * Deadlines are compared as plain unsigned numbers, not by signed difference: time_ns() is a
 * 64-bit count from boot that does not wrap for 584 years, and a signed-difference order is
 * not transitive once the set spans more than 2^63 ns (UINT64_MAX means "never" here).
 *
 * A node that is all zero bytes is "not queued": static timers need no init call. Not
 * locked: the caller serialises (the hrtimer core holds interrupts off around every call). */
#ifndef TICKLAB_TIME_TQ_RBTREE_H
#define TICKLAB_TIME_TQ_RBTREE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* parent_flags holds the parent pointer with two flags in its low bits (nodes are at least
 * 8-byte aligned, so those bits of a pointer are always zero). */
#define TQ_RB_BLACK  1u      /* colour: set = black, clear = red */
#define TQ_RB_QUEUED 2u      /* the node is in a tree (clear in a zeroed node) */
#define TQ_RB_FLAGS  3u

struct tq_rb_node {
    uintptr_t parent_flags;          /* parent | TQ_RB_BLACK | TQ_RB_QUEUED */
    struct tq_rb_node *child[2];     /* [0] earlier, [1] later */
    uint64_t deadline_ns;            /* the key; valid while queued */
};

struct tq_rb {
    struct tq_rb_node *root;
    struct tq_rb_node *first;        /* leftmost (earliest) node, NULL when empty */
    uint32_t count, capacity;
};

void tq_rb_init(struct tq_rb *t, uint32_t capacity);

/* Queues n at deadline_ns. Returns 1 if n is now the first node (the clock event device must
 * be reprogrammed), 0 if not, -EBUSY if n is already queued, -ENOMEM if count == capacity. */
int tq_rb_insert(struct tq_rb *t, struct tq_rb_node *n, uint64_t deadline_ns);

/* Dequeues n. Returns 1 if n was the first node (the head changed, possibly to empty),
 * 0 if not, and 0 for a node that is not queued (cancelling an idle timer is a no-op). */
int tq_rb_remove(struct tq_rb *t, struct tq_rb_node *n);

/* Restart: n (queued or not) goes to deadline_ns behind any equal deadlines. Returns 1 if n
 * was or now is the first node (the earliest deadline may have moved), 0 if not, -ENOMEM
 * if n was not queued and the tree is full. */
int tq_rb_requeue(struct tq_rb *t, struct tq_rb_node *n, uint64_t deadline_ns);

/* The rare case of tq_rb_pop_first() (a black leaf, whose removal leaves its parent's left
 * side a black short): apart, in tq_rbtree.c, so that the usual pop stays small enough to
 * be in line. Returns n. */
struct tq_rb_node *tq_rb_pop_rebalance(struct tq_rb *t, struct tq_rb_node *n,
                                       struct tq_rb_node *p);

/* Dequeues and returns the first node, NULL when empty. The head always changes.
 *
 * The first node is the leftmost: it has no left child, so the black height below it is
 * that of an empty subtree and a right child can only be a red leaf. Its removal is then one
 * of three short cases instead of a general deletion: a red leaf child takes its place
 * (painted black, nothing else changes); a red first node just goes; only a black leaf
 * leaves its parent's left side a black short, which tq_rb_pop_rebalance repairs (at most
 * three rotations, near the left edge that the pops keep in cache). The next node is that
 * child, or else the parent. In line: every expiry pays it (an hrtimer interrupt pops its
 * head before the callback runs), and a call would add its own instructions to each. */
static inline struct tq_rb_node *tq_rb_pop_node(struct tq_rb *t, struct tq_rb_node *n);
static inline struct tq_rb_node *tq_rb_pop_first(struct tq_rb *t)
{
    struct tq_rb_node *n = t->first;

    return n ? tq_rb_pop_node(t, n) : NULL;
}

/* The same for a caller that holds the first node already: n must be t->first (not NULL). */
static inline struct tq_rb_node *tq_rb_pop_node(struct tq_rb *t, struct tq_rb_node *n)
{
    uintptr_t pf = n->parent_flags;
    struct tq_rb_node *p = (struct tq_rb_node *)(pf & ~(uintptr_t)TQ_RB_FLAGS);
    struct tq_rb_node *r = n->child[1];
    if (r) {
        r->parent_flags = (uintptr_t)p | TQ_RB_QUEUED | TQ_RB_BLACK;
        t->first = r;
    } else {
        t->first = p;
    }
    if (p)
        p->child[0] = r;
    else
        t->root = r;
    n->parent_flags = 0;       /* not queued; the children are set again by an insertion */
    t->count--;
    if (__builtin_expect(!r && p && (pf & TQ_RB_BLACK), 0))
        return tq_rb_pop_rebalance(t, n, p);
    return n;
}

static inline struct tq_rb_node *tq_rb_first(const struct tq_rb *t) { return t->first; }
static inline bool tq_rb_empty(const struct tq_rb *t) { return t->first == NULL; }
static inline bool tq_rb_queued(const struct tq_rb_node *n)
{
    return (n->parent_flags & TQ_RB_QUEUED) != 0;
}

#endif
