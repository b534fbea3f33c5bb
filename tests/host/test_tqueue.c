/* tests/host/test_tqueue.c - the hrtimer queues (the library's lib/time/tq_rbtree.c and its
 * tqueue.h interface, and the benchmark's rival tests/bench/tq_heap.c) against a
 * sorted-array reference.
 *
 * One random walk per structure: inserts, removals of random nodes (queued or not),
 * restarts, pops, with deadlines drawn to collide (0, a handful of small values, 2^63 +-2,
 * the top of the range) so that stability for equal keys is exercised all the time. After
 * every operation the return value ("the head changed") must equal what the reference saw,
 * and the first node must be the reference's. Periodically the structure's invariants are
 * checked in full (red-black rules and black height, in-order sequence; heap order and slot
 * back-pointers), and now and then the queue is drained, every pop against the reference. */
#include <stdlib.h>

#include "tests/bench/tq_heap.h"
#include "ticklab/tq_rbtree.h"
#include "ticklab/tqueue.h"
#include "ticklab/errno.h"
#include "test.h"

#define NODES 1024u
#define CHECK_EVERY 4096
#define DRAIN_EVERY 200000

/* ---- the reference: ids sorted by (deadline, insertion number) ---------------------- */

static uint32_t ref[NODES];
static uint32_t ref_n;
static uint64_t ref_deadline[NODES], ref_seq[NODES], ref_next_seq;
static bool ref_queued[NODES];

static void ref_reset(void)
{
    ref_n = 0;
    ref_next_seq = 0;
    memset(ref_queued, 0, sizeof(ref_queued));
}

static int32_t ref_first(void) { return ref_n ? (int32_t)ref[0] : -1; }

static bool ref_before(uint32_t a, uint32_t b)
{
    if (ref_deadline[a] != ref_deadline[b])
        return ref_deadline[a] < ref_deadline[b];
    return ref_seq[a] < ref_seq[b];
}

/* Index of the first entry not before id (id itself, if it is queued). */
static uint32_t ref_lower_bound(uint32_t id)
{
    uint32_t lo = 0, hi = ref_n;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (ref_before(ref[mid], id))
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void ref_insert(uint32_t id, uint64_t deadline_ns)
{
    ref_deadline[id] = deadline_ns;
    ref_seq[id] = ref_next_seq++;
    uint32_t at = ref_lower_bound(id);
    memmove(&ref[at + 1], &ref[at], (ref_n - at) * sizeof(ref[0]));
    ref[at] = id;
    ref_n++;
    ref_queued[id] = true;
}

static void ref_remove(uint32_t id)
{
    uint32_t at = ref_lower_bound(id);
    memmove(&ref[at], &ref[at + 1], (ref_n - at - 1) * sizeof(ref[0]));
    ref_n--;
    ref_queued[id] = false;
}

/* ---- the three queues under test, behind one table --------------------------------- */

struct impl {
    const char *name;
    void (*init)(uint32_t capacity);
    int (*insert)(uint32_t id, uint64_t deadline_ns);
    int (*remove)(uint32_t id);
    int (*requeue)(uint32_t id, uint64_t deadline_ns);
    int32_t (*pop)(void);                  /* id, -1 when empty */
    int32_t (*first)(void);
    uint64_t (*deadline)(uint32_t id);
    bool (*queued)(uint32_t id);
    uint32_t (*count)(void);
    bool (*check)(void);                   /* full invariants, against the reference */
};

static struct tq_rb rb;
static struct tq_rb_node rb_nodes[NODES];

static void rb_init(uint32_t cap)
{
    memset(rb_nodes, 0, sizeof(rb_nodes));
    tq_rb_init(&rb, cap);
}
static int rb_insert(uint32_t id, uint64_t d) { return tq_rb_insert(&rb, &rb_nodes[id], d); }
static int rb_remove(uint32_t id) { return tq_rb_remove(&rb, &rb_nodes[id]); }
static int rb_requeue(uint32_t id, uint64_t d) { return tq_rb_requeue(&rb, &rb_nodes[id], d); }
static int32_t rb_id(const struct tq_rb_node *n) { return n ? (int32_t)(n - rb_nodes) : -1; }
static int32_t rb_pop(void) { return rb_id(tq_rb_pop_first(&rb)); }
static int32_t rb_first(void) { return rb_id(tq_rb_first(&rb)); }
static uint64_t rb_deadline(uint32_t id) { return rb_nodes[id].deadline_ns; }
static bool rb_queued(uint32_t id) { return tq_rb_queued(&rb_nodes[id]); }
static uint32_t rb_count(void) { return rb.count; }

static const struct tq_rb_node *rb_parent(const struct tq_rb_node *n)
{
    return (const struct tq_rb_node *)(n->parent_flags & ~(uintptr_t)TQ_RB_FLAGS);
}
static bool rb_red(const struct tq_rb_node *n) { return n && !(n->parent_flags & TQ_RB_BLACK); }

/* Returns the black height of the subtree at n (NULL leaves count 1), appending its nodes
 * in order to walk[]; clears *ok on any broken rule. */
static int rb_walk(const struct tq_rb_node *n, const struct tq_rb_node *parent,
                   uint32_t *walk, uint32_t *walk_n, bool *ok)
{
    if (!n)
        return 1;
    if (rb_parent(n) != parent || !tq_rb_queued(n) || (rb_red(n) && rb_red(parent)))
        *ok = false;
    int left = rb_walk(n->child[0], n, walk, walk_n, ok);
    if (*walk_n < NODES)
        walk[(*walk_n)++] = (uint32_t)rb_id(n);
    int right = rb_walk(n->child[1], n, walk, walk_n, ok);
    if (left != right)
        *ok = false;
    return left + !rb_red(n);
}

static bool rb_check(void)
{
    static uint32_t walk[NODES];
    uint32_t walk_n = 0;
    bool ok = true;

    rb_walk(rb.root, NULL, walk, &walk_n, &ok);
    if (!CHECK(ok) || !CHECK(!rb_red(rb.root)) || !CHECK_EQ_U64(walk_n, ref_n))
        return false;
    return CHECK(memcmp(walk, ref, ref_n * sizeof(ref[0])) == 0);
}

static struct tq_heap hp;
static struct tq_heap_slot hp_slots[NODES];
static struct tq_heap_node hp_nodes[NODES];

static void hp_init(uint32_t cap)
{
    memset(hp_nodes, 0, sizeof(hp_nodes));
    tq_heap_init(&hp, hp_slots, cap);
}
static int hp_insert(uint32_t id, uint64_t d) { return tq_heap_insert(&hp, &hp_nodes[id], d); }
static int hp_remove(uint32_t id) { return tq_heap_remove(&hp, &hp_nodes[id]); }
static int hp_requeue(uint32_t id, uint64_t d)
{
    return tq_heap_requeue(&hp, &hp_nodes[id], d);
}
static int32_t hp_id(const struct tq_heap_node *n) { return n ? (int32_t)(n - hp_nodes) : -1; }
static int32_t hp_pop(void) { return hp_id(tq_heap_pop_first(&hp)); }
static int32_t hp_first(void) { return hp_id(tq_heap_first(&hp)); }
static uint64_t hp_deadline(uint32_t id) { return hp_nodes[id].deadline_ns; }
static bool hp_queued(uint32_t id) { return tq_heap_queued(&hp_nodes[id]); }
static uint32_t hp_count(void) { return hp.count; }

static bool hp_slot_before(const struct tq_heap_slot *a, const struct tq_heap_slot *b)
{
    if (a->deadline_ns != b->deadline_ns)
        return a->deadline_ns < b->deadline_ns;
    return a->node->seq < b->node->seq;
}

/* Heap order, back-pointers, key copies; and the same set of nodes as the reference, with
 * sequence numbers in the reference's order (so equal deadlines pop in insertion order). */
static bool hp_check(void)
{
    if (!CHECK_EQ_U64(hp.count, ref_n))
        return false;
    for (uint32_t i = 0; i < hp.count; i++) {
        const struct tq_heap_slot *s = &hp.slot[i];
        if (!CHECK_EQ_U64(s->node->pos, i + 1) ||
            !CHECK_EQ_U64(s->deadline_ns, s->node->deadline_ns) ||
            !CHECK(i == 0 || !hp_slot_before(s, &hp.slot[(i - 1) / TQ_HEAP_ARITY])))
            return false;
    }
    for (uint32_t k = 0; k < ref_n; k++) {
        const struct tq_heap_node *n = &hp_nodes[ref[k]];
        if (!CHECK(n->pos != 0) ||
            !CHECK(k == 0 || hp_nodes[ref[k - 1]].seq < n->seq ||
                   hp_nodes[ref[k - 1]].deadline_ns < n->deadline_ns))
            return false;
    }
    return true;
}

/* The tqueue.h wrappers over the tree. */
static struct tq gq;
static struct tq_node gq_nodes[NODES];

static void gq_init(uint32_t cap)
{
    memset(gq_nodes, 0, sizeof(gq_nodes));
    tq_init(&gq, cap);
}
static int gq_insert(uint32_t id, uint64_t d) { return tq_insert(&gq, &gq_nodes[id], d); }
static int gq_remove(uint32_t id) { return tq_remove(&gq, &gq_nodes[id]); }
static int gq_requeue(uint32_t id, uint64_t d) { return tq_requeue(&gq, &gq_nodes[id], d); }
static int32_t gq_id(const struct tq_node *n) { return n ? (int32_t)(n - gq_nodes) : -1; }
static int32_t gq_pop(void) { return gq_id(tq_pop_first(&gq)); }
static int32_t gq_first(void)
{
    struct tq_node *n = tq_first(&gq);
    CHECK_EQ_U64(tq_empty(&gq), n == NULL);
    return gq_id(n);
}
static uint64_t gq_deadline(uint32_t id) { return tq_deadline_ns(&gq_nodes[id]); }
static bool gq_queued(uint32_t id) { return tq_queued(&gq_nodes[id]); }
static uint32_t gq_count(void) { return tq_count(&gq); }
static bool gq_check(void) { return true; }   /* the structure's own test checks it */

static const struct impl impl_rb = {
    "rbtree", rb_init, rb_insert, rb_remove, rb_requeue, rb_pop, rb_first, rb_deadline,
    rb_queued, rb_count, rb_check,
};
static const struct impl impl_heap = {
    "heap", hp_init, hp_insert, hp_remove, hp_requeue, hp_pop, hp_first, hp_deadline,
    hp_queued, hp_count, hp_check,
};
static const struct impl impl_tq = {
    "tqueue", gq_init, gq_insert, gq_remove, gq_requeue, gq_pop, gq_first, gq_deadline,
    gq_queued, gq_count, gq_check,
};

/* ---- the random walk ------------------------------------------------------------------ */

static uint64_t rng_state;

static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;    /* xorshift64: plenty for choosing operations */
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}

/* Half the draws collide with others, at the ends of the range and across 2^63 (where a
 * signed-difference comparison would turn the order around). */
static uint64_t random_deadline(void)
{
    switch (rnd() % 8) {
    case 0: return 0;
    case 1: return UINT64_MAX - rnd() % 3;
    case 2:
    case 3: return rnd() % 16;
    case 4: return (1ull << 63) - 2 + rnd() % 5;
    default: return rnd();
    }
}

/* The first node and the count must agree with the reference after every operation. */
static bool same_head(const struct impl *im)
{
    int32_t want = ref_first();
    if (!CHECK_EQ_I64(im->first(), want) || !CHECK_EQ_U64(im->count(), ref_n))
        return false;
    return want < 0 || CHECK_EQ_U64(im->deadline((uint32_t)want), ref_deadline[want]);
}

static bool op_insert(const struct impl *im, uint32_t id)
{
    uint64_t d = random_deadline();
    if (ref_queued[id])
        return CHECK_EQ_I64(im->insert(id, d), -EBUSY);
    int32_t before = ref_first();
    ref_insert(id, d);
    return CHECK_EQ_I64(im->insert(id, d), ref_first() != before);
}

static bool op_remove(const struct impl *im, uint32_t id)
{
    int32_t before = ref_first();
    if (ref_queued[id])
        ref_remove(id);
    return CHECK_EQ_I64(im->remove(id), ref_first() != before);
}

static bool op_requeue(const struct impl *im, uint32_t id)
{
    uint64_t d = random_deadline();
    bool was_first = ref_first() == (int32_t)id;
    if (ref_queued[id])
        ref_remove(id);
    ref_insert(id, d);
    return CHECK_EQ_I64(im->requeue(id, d), was_first || ref_first() == (int32_t)id);
}

static bool op_pop(const struct impl *im)
{
    int32_t want = ref_first();
    if (want >= 0)
        ref_remove((uint32_t)want);
    return CHECK_EQ_I64(im->pop(), want) && (want < 0 || CHECK(!im->queued((uint32_t)want)));
}

static bool drain(const struct impl *im)
{
    while (ref_n)
        if (!op_pop(im) || !same_head(im))
            return false;
    return op_pop(im);   /* popping an empty queue gives NULL */
}

/* Sizes wander between a few, dozens and most of NODES: inserting is likelier below the
 * target, removing above it. */
static bool one_op(const struct impl *im, uint32_t target)
{
    uint32_t id = (uint32_t)(rnd() % NODES);
    unsigned r = (unsigned)(rnd() % 100);
    unsigned insert_pct = ref_n < target ? 60 : 30;

    if (r < insert_pct)
        return op_insert(im, id);
    r -= insert_pct;
    if (r < 20)
        return op_remove(im, id);
    if (r < 35)
        return op_requeue(im, id);
    return op_pop(im);
}

static bool random_walk(const struct impl *im, uint64_t seed, long ops)
{
    static const uint32_t targets[] = { 3, 40, 700, 1, 200 };

    rng_state = seed;
    ref_reset();
    im->init(NODES);
    for (long i = 0; i < ops; i++) {
        uint32_t target = targets[(i / 50000) % (sizeof(targets) / sizeof(targets[0]))];
        if (!one_op(im, target) || !same_head(im))
            return test_fail(__FILE__, __LINE__, "%s: op %ld (seed %" PRIu64 ")", im->name,
                             i, seed);
        if (i % CHECK_EVERY == 0 && !im->check())
            return test_fail(__FILE__, __LINE__, "%s: invariants at op %ld", im->name, i);
        if (i % DRAIN_EVERY == DRAIN_EVERY - 1 && (!drain(im) || !im->check()))
            return test_fail(__FILE__, __LINE__, "%s: drain at op %ld", im->name, i);
    }
    return drain(im) && im->check();
}

TEST(tqueue_rbtree_matches_reference_1M_ops)
{
    CHECK(random_walk(&impl_rb, 0x9e3779b97f4a7c15ull, 1000000));
}
TEST(tqueue_heap_matches_reference_1M_ops)
{
    CHECK(random_walk(&impl_heap, 0x2545f4914f6cdd1dull, 1000000));
}
TEST(tqueue_interface_matches_reference) { CHECK(random_walk(&impl_tq, 12345, 200000)); }

/* ---- fixed cases -------------------------------------------------------------------- */

static void equal_deadlines_fifo(const struct impl *im)
{
    im->init(NODES);
    for (uint32_t id = 0; id < 100; id++)
        CHECK_EQ_I64(im->insert(id, 42), id == 0);
    CHECK_EQ_I64(im->requeue(0, 42), 1);           /* was first; now behind 99 */
    for (uint32_t id = 1; id < 100; id++)
        CHECK_EQ_I64(im->pop(), id);
    CHECK_EQ_I64(im->pop(), 0);
    CHECK_EQ_I64(im->pop(), -1);
}

TEST(tqueue_equal_deadlines_leave_in_insertion_order)
{
    equal_deadlines_fifo(&impl_rb);
    equal_deadlines_fifo(&impl_heap);
    equal_deadlines_fifo(&impl_tq);
}

static void capacity_is_a_hard_limit(const struct impl *im)
{
    im->init(3);
    for (uint32_t id = 0; id < 3; id++)
        CHECK_EQ_I64(im->insert(id, 100 - id), 1);
    CHECK_EQ_I64(im->insert(3, 1), -ENOMEM);
    CHECK_EQ_I64(im->requeue(3, 1), -ENOMEM);
    CHECK(!im->queued(3));
    CHECK_EQ_I64(im->requeue(0, 1), 1);           /* a queued node needs no new room */
    CHECK_EQ_I64(im->remove(3), 0);               /* not queued: no-op */
    CHECK_EQ_I64(im->count(), 3);
    CHECK_EQ_I64(im->first(), 0);
}

TEST(tqueue_capacity_is_a_hard_limit)
{
    capacity_is_a_hard_limit(&impl_rb);
    capacity_is_a_hard_limit(&impl_heap);
    capacity_is_a_hard_limit(&impl_tq);
}

static void extremes_order_unsigned(const struct impl *im)
{
    im->init(NODES);
    CHECK_EQ_I64(im->insert(0, UINT64_MAX), 1);
    CHECK_EQ_I64(im->insert(1, 1ull << 63), 1);
    CHECK_EQ_I64(im->insert(2, (1ull << 63) - 1), 1);
    CHECK_EQ_I64(im->insert(3, 0), 1);
    CHECK_EQ_I64(im->insert(4, UINT64_MAX), 0);
    static const int32_t order[] = { 3, 2, 1, 0, 4, -1 };
    for (unsigned i = 0; i < 6; i++)
        CHECK_EQ_I64(im->pop(), order[i]);
}

TEST(tqueue_deadlines_at_the_ends_order_as_unsigned)
{
    extremes_order_unsigned(&impl_rb);
    extremes_order_unsigned(&impl_heap);
    extremes_order_unsigned(&impl_tq);
}

/* A remove of a node that is not the first leaves the head alone; of the first, reports it
 * even when the next node has the same deadline (a different timer is now first). */
static void head_change_flags(const struct impl *im)
{
    im->init(NODES);
    im->insert(0, 10);
    im->insert(1, 10);
    im->insert(2, 20);
    CHECK_EQ_I64(im->remove(2), 0);
    CHECK_EQ_I64(im->remove(0), 1);
    CHECK_EQ_I64(im->first(), 1);
    CHECK_EQ_I64(im->requeue(1, 5), 1);           /* still first, but earlier: reprogram */
    CHECK_EQ_I64(im->insert(2, 5), 0);            /* equal to the head: behind it */
    CHECK_EQ_I64(im->requeue(2, 30), 0);
    CHECK_EQ_I64(im->remove(1), 1);               /* last one left: head becomes 2 */
    CHECK_EQ_I64(im->remove(2), 1);               /* and then empty */
    CHECK_EQ_I64(im->first(), -1);
}

TEST(tqueue_head_change_flags)
{
    head_change_flags(&impl_rb);
    head_change_flags(&impl_heap);
    head_change_flags(&impl_tq);
}
