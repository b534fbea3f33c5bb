/* tests/bench/tq_heap.c - see tq_heap.h.
 *
 * Slot i's children are ARITY*i + 1 .. ARITY*i + ARITY, its parent (i - 1) / ARITY. Sifts
 * move a hole rather than swapping, so each level costs one slot copy and one pos update. */
#include "tests/bench/tq_heap.h"

#include "ticklab/errno.h"

#define ARITY TQ_HEAP_ARITY

static inline bool slot_before(const struct tq_heap_slot *a, const struct tq_heap_slot *b)
{
    if (a->deadline_ns != b->deadline_ns)
        return a->deadline_ns < b->deadline_ns;
    return a->node->seq < b->node->seq;
}

static inline void put(struct tq_heap *h, uint32_t i, struct tq_heap_slot s)
{
    h->slot[i] = s;
    s.node->pos = i + 1;
}

/* Fills the hole at i with s, moving parents down while s comes before them; returns the
 * slot s ended in. */
static uint32_t sift_up(struct tq_heap *h, uint32_t i, struct tq_heap_slot s)
{
    while (i > 0) {
        uint32_t p = (i - 1) / ARITY;
        if (!slot_before(&s, &h->slot[p]))
            break;
        put(h, i, h->slot[p]);
        i = p;
    }
    put(h, i, s);
    return i;
}

/* The earliest of the children starting at slot c (c < count). */
static uint32_t min_child(const struct tq_heap *h, uint32_t c)
{
    uint32_t end = h->count - c < ARITY ? h->count : c + ARITY;
    uint32_t best = c;

    for (uint32_t k = c + 1; k < end; k++)
        if (slot_before(&h->slot[k], &h->slot[best]))
            best = k;
    return best;
}

/* Fills the hole at i with s, moving children up while one comes before s. */
static void sift_down(struct tq_heap *h, uint32_t i, struct tq_heap_slot s)
{
    for (;;) {
        uint32_t c = ARITY * i + 1;
        if (c >= h->count)
            break;
        c = min_child(h, c);
        if (!slot_before(&h->slot[c], &s))
            break;
        put(h, i, h->slot[c]);
        i = c;
    }
    put(h, i, s);
}

/* Fills the hole at i with s, which may belong above or below it. */
static void place(struct tq_heap *h, uint32_t i, struct tq_heap_slot s)
{
    if (i > 0 && slot_before(&s, &h->slot[(i - 1) / ARITY]))
        sift_up(h, i, s);
    else
        sift_down(h, i, s);
}

void tq_heap_init(struct tq_heap *h, struct tq_heap_slot *slots, uint32_t capacity)
{
    h->slot = slots;
    h->count = 0;
    h->capacity = capacity < TQ_HEAP_MAX_CAPACITY ? capacity : TQ_HEAP_MAX_CAPACITY;
    h->next_seq = 0;
}

int tq_heap_insert(struct tq_heap *h, struct tq_heap_node *n, uint64_t deadline_ns)
{
    if (n->pos)
        return -EBUSY;
    if (h->count == h->capacity)
        return -ENOMEM;
    n->deadline_ns = deadline_ns;
    n->seq = h->next_seq++;
    uint32_t i = sift_up(h, h->count++, (struct tq_heap_slot){ deadline_ns, n });
    return i == 0;
}

int tq_heap_remove(struct tq_heap *h, struct tq_heap_node *n)
{
    if (!n->pos)
        return 0;
    uint32_t i = n->pos - 1;
    n->pos = 0;
    struct tq_heap_slot last = h->slot[--h->count];
    if (i != h->count)
        place(h, i, last);
    return i == 0;
}

/* In place: one sift from the node's own slot instead of a remove and an insert. */
int tq_heap_requeue(struct tq_heap *h, struct tq_heap_node *n, uint64_t deadline_ns)
{
    if (!n->pos)
        return tq_heap_insert(h, n, deadline_ns);
    uint32_t i = n->pos - 1;
    n->deadline_ns = deadline_ns;
    n->seq = h->next_seq++;
    place(h, i, (struct tq_heap_slot){ deadline_ns, n });
    return i == 0 || n->pos == 1;
}

/* The root's own remove: the last slot sifts down from the top, never up (it is on the
 * expiry path of every hrtimer interrupt, so the general remove's checks are skipped). */
struct tq_heap_node *tq_heap_pop_first(struct tq_heap *h)
{
    if (h->count == 0)
        return NULL;
    struct tq_heap_node *n = h->slot[0].node;
    n->pos = 0;
    if (--h->count)
        sift_down(h, 0, h->slot[h->count]);
    return n;
}
