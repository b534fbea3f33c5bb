/* lib/time/tq_rbtree.c - see tq_rbtree.h.
 *
 * A textbook red-black tree (the CLRS cases) with parent pointers and NULL leaves, written
 * with child[2] so each mirror-image pair of cases is one piece of code: `side` names the
 * direction of the node being fixed and !side that of its sibling or uncle. */
#include "ticklab/tq_rbtree.h"

#include "ticklab/errno.h"

static inline struct tq_rb_node *parent_of(const struct tq_rb_node *n)
{
    return (struct tq_rb_node *)(n->parent_flags & ~(uintptr_t)TQ_RB_FLAGS);
}

static inline void set_parent(struct tq_rb_node *n, struct tq_rb_node *p)
{
    n->parent_flags = (uintptr_t)p | (n->parent_flags & TQ_RB_FLAGS);
}

/* NULL leaves count as black, which is what every caller wants. */
static inline bool is_red(const struct tq_rb_node *n)
{
    return n && !(n->parent_flags & TQ_RB_BLACK);
}

static inline void set_black(struct tq_rb_node *n) { n->parent_flags |= TQ_RB_BLACK; }
static inline void set_red(struct tq_rb_node *n) { n->parent_flags &= ~(uintptr_t)TQ_RB_BLACK; }

static inline void copy_colour(struct tq_rb_node *to, const struct tq_rb_node *from)
{
    to->parent_flags = (to->parent_flags & ~(uintptr_t)TQ_RB_BLACK) |
                       (from->parent_flags & TQ_RB_BLACK);
}

/* Makes the link that pointed at old (its parent's child slot, or the root) point at nu. */
static void replace_link(struct tq_rb *t, struct tq_rb_node *old, struct tq_rb_node *nu,
                         struct tq_rb_node *parent)
{
    if (!parent)
        t->root = nu;
    else
        parent->child[parent->child[1] == old] = nu;
}

/* Moves x down towards `dir`; its child on the other side takes its place. */
static inline __attribute__((always_inline)) void rotate(struct tq_rb *t, struct tq_rb_node *x,
                                                      int dir)
{
    struct tq_rb_node *y = x->child[!dir], *p = parent_of(x);

    x->child[!dir] = y->child[dir];
    if (y->child[dir])
        set_parent(y->child[dir], x);
    replace_link(t, x, y, p);
    set_parent(y, p);
    y->child[dir] = x;
    set_parent(x, y);
}

void tq_rb_init(struct tq_rb *t, uint32_t capacity)
{
    t->root = t->first = NULL;
    t->count = 0;
    t->capacity = capacity;
}

/* Hangs n, red, under the leaf where its key belongs; returns whether it went left all the
 * way down (it is then the new first node). An equal key goes right: that is what keeps
 * equal deadlines in insertion order. */
static bool link_leaf(struct tq_rb *t, struct tq_rb_node *n)
{
    struct tq_rb_node **link = &t->root, *parent = NULL;
    bool leftmost = true;

    while (*link) {
        parent = *link;
        int dir = n->deadline_ns >= parent->deadline_ns;
        leftmost &= !dir;
        link = &parent->child[dir];
    }
    n->child[0] = n->child[1] = NULL;
    n->parent_flags = (uintptr_t)parent | TQ_RB_QUEUED;
    *link = n;
    return leftmost;
}

/* Restores "no red node has a red parent" after n was linked red. */
static void insert_fixup(struct tq_rb *t, struct tq_rb_node *n)
{
    struct tq_rb_node *p;

    while ((p = parent_of(n)) && is_red(p)) {
        struct tq_rb_node *g = parent_of(p);   /* p is red, so not the root */
        int side = g->child[1] == p;
        struct tq_rb_node *uncle = g->child[!side];

        if (is_red(uncle)) {                   /* recolour and retry two levels up */
            set_black(p);
            set_black(uncle);
            set_red(g);
            n = g;
            continue;
        }
        if (n == p->child[!side]) {            /* inner grandchild: make it outer */
            rotate(t, p, side);
            p = n;
        }
        set_black(p);
        set_red(g);
        rotate(t, g, !side);
        break;
    }
    set_black(t->root);
}

int tq_rb_insert(struct tq_rb *t, struct tq_rb_node *n, uint64_t deadline_ns)
{
    if (tq_rb_queued(n))
        return -EBUSY;
    if (t->count == t->capacity)
        return -ENOMEM;
    n->deadline_ns = deadline_ns;
    bool first = link_leaf(t, n);
    if (first)
        t->first = n;
    insert_fixup(t, n);
    t->count++;
    return first;
}

/* Where a removal left the tree one black short: at x (maybe NULL) below parent. */
struct hole {
    struct tq_rb_node *x, *parent;
    bool black_removed;
};

/* z has at most one child, which takes its place. */
static struct hole unlink_simple(struct tq_rb *t, struct tq_rb_node *z)
{
    struct tq_rb_node *x = z->child[0] ? z->child[0] : z->child[1];
    struct tq_rb_node *p = parent_of(z);

    replace_link(t, z, x, p);
    if (x)
        set_parent(x, p);
    return (struct hole){ x, p, !is_red(z) };
}

/* z has two children: its successor y (leftmost of the right subtree, so y has no left
 * child) takes z's place and colour, and the hole is where y was. */
static struct hole unlink_via_successor(struct tq_rb *t, struct tq_rb_node *z)
{
    struct tq_rb_node *y = z->child[1];
    while (y->child[0])
        y = y->child[0];
    struct tq_rb_node *x = y->child[1], *xp = y;
    bool black_removed = !is_red(y);

    if (parent_of(y) != z) {
        xp = parent_of(y);
        xp->child[0] = x;
        if (x)
            set_parent(x, xp);
        y->child[1] = z->child[1];
        set_parent(y->child[1], y);
    }
    y->child[0] = z->child[0];
    set_parent(y->child[0], y);
    replace_link(t, z, y, parent_of(z));
    y->parent_flags = z->parent_flags;
    return (struct hole){ x, xp, black_removed };
}

/* Gives the paths through x back the black node they lost. x may be NULL; its sibling
 * cannot be, because that side still holds at least one black node. */
static void erase_fixup(struct tq_rb *t, struct tq_rb_node *x, struct tq_rb_node *p)
{
    while (x != t->root && !is_red(x)) {
        int side = p->child[0] != x;
        struct tq_rb_node *w = p->child[!side];

        if (is_red(w)) {                       /* make the sibling black */
            set_black(w);
            set_red(p);
            rotate(t, p, side);
            w = p->child[!side];
        }
        if (!is_red(w->child[0]) && !is_red(w->child[1])) {
            set_red(w);                        /* both sides short now: move up */
            x = p;
            p = parent_of(x);
            continue;
        }
        if (!is_red(w->child[!side])) {        /* only the near nephew is red */
            set_black(w->child[side]);
            set_red(w);
            rotate(t, w, !side);
            w = p->child[!side];
        }
        copy_colour(w, p);
        set_black(p);
        set_black(w->child[!side]);
        rotate(t, p, side);
        x = t->root;
        break;
    }
    if (x)
        set_black(x);
}

/* erase_fixup for a hole on the left edge (after the first node's removal): every node on
 * the path from the root to the first one is its parent's left child, so the hole stays on
 * the left side as it moves up and each case is the side-0 one, which the compiler then
 * lays out without the side arithmetic. p: the removed node's parent (x is NULL). */
static void erase_fixup_left(struct tq_rb *t, struct tq_rb_node *p)
{
    struct tq_rb_node *x = NULL;

    while (x != t->root && !is_red(x)) {
        struct tq_rb_node *w = p->child[1];

        if (is_red(w)) {
            set_black(w);
            set_red(p);
            rotate(t, p, 0);
            w = p->child[1];
        }
        if (!is_red(w->child[0]) && !is_red(w->child[1])) {
            set_red(w);
            x = p;
            p = parent_of(x);
            continue;
        }
        if (!is_red(w->child[1])) {
            set_black(w->child[0]);
            set_red(w);
            rotate(t, w, 1);
            w = p->child[1];
        }
        copy_colour(w, p);
        set_black(p);
        set_black(w->child[1]);
        rotate(t, p, 0);
        x = t->root;
        break;
    }
    if (x)
        set_black(x);
}

int tq_rb_remove(struct tq_rb *t, struct tq_rb_node *n)
{
    if (!tq_rb_queued(n))
        return 0;
    bool was_first = n == t->first;
    if (was_first) {               /* the head's cancel: the pop's short cases */
        tq_rb_pop_first(t);
        return 1;
    }
    struct hole h = n->child[0] && n->child[1] ? unlink_via_successor(t, n)
                                               : unlink_simple(t, n);
    if (h.black_removed)
        erase_fixup(t, h.x, h.parent);
    n->parent_flags = 0;
    n->child[0] = n->child[1] = NULL;
    t->count--;
    return was_first;
}

int tq_rb_requeue(struct tq_rb *t, struct tq_rb_node *n, uint64_t deadline_ns)
{
    int was_first = tq_rb_remove(t, n);
    int now_first = tq_rb_insert(t, n, deadline_ns);

    if (now_first < 0)
        return now_first;
    return was_first | now_first;
}

/* tq_rb_pop_first()'s rare case (tq_rbtree.h): a black first node without a child went,
 * and its parent's left side is a black short. Not in line, and a tail call from the pop. */
__attribute__((noinline)) struct tq_rb_node *
tq_rb_pop_rebalance(struct tq_rb *t, struct tq_rb_node *n, struct tq_rb_node *p)
{
    erase_fixup_left(t, p);
    return n;
}
