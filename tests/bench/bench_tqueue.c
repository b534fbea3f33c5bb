/* tests/bench/bench_tqueue.c - what the hrtimer queue operations cost, in TSC ticks, for the
 * red-black tree (the hrtimer core's queue) and the heap, at 1, 16, 1000 and 10^6 pending
 * timers.
 *
 * This file is compiled three times (tests/bench/bench.mk): once per structure with
 * -DTQ_IMPL=... -DBENCH_QUEUE=bench_queue_<name>, so each measures through bench_queue.h
 * the calls the hrtimer core makes (the library's tqueue.h is the tree's alone), and once with -DBENCH_MAIN for the driver (rdtsc
 * overhead, the flags save/restore pair, the CPU facts, the table). The queue sources are
 * built with the kernel's code-generation flags; nothing here has sanitizers.
 *
 * Two ways of timing, because they fail differently:
 *   per-op   lfence;rdtsc;lfence, one operation, lfence;rdtsc; 10^6 samples, minus the mean
 *            (for the mean) or the median (for median and p99) of an empty pair. The mean
 *            is over the fastest 99.9% of samples, to keep preemptions out of it. The TSC
 *            may advance in coarse steps (21 ticks at a time on the machine this was written
 *            on; the program measures and prints the step), so single samples are
 *            quantised: median and p99 move in whole steps, while the mean of 10^6 samples
 *            does not (the start phases are random). A fenced single operation also pays
 *            for an empty pipeline, so this is latency in isolation.
 *   batched  BATCH operations between one pair of reads, divided by BATCH; 10^6 operations
 *            in all. Below the TSC step this is the number to trust; it is throughput, back
 *            to back. A batch needs BATCH operations at the same queue size, so at 1 and 16
 *            pending it runs one operation on each of BATCH separate queues; at 1000 and
 *            10^6 it runs them on one queue, whose size drifts by at most BATCH (3% at
 *            1000). */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ticklab/io.h"
#include "ticklab/stats.h"

#define OPS     1000000u
#define BATCH   32u
#define SIZES   4
#define SCALE   100          /* results are kept in hundredths of a tick */

static const uint32_t sizes[SIZES] = { 1, 16, 1000, 1000000 };

/* rdtsc_ordered() is lfence;rdtsc: earlier work cannot leak into the interval. The lfence
 * after the first read keeps the operation from starting before that read completes; without
 * it, a short operation runs under rdtsc's own latency and the subtraction of an empty pair
 * makes it look almost free. */
static inline uint64_t tsc_begin(void)
{
    uint64_t t = rdtsc_ordered();
    __asm__ volatile("lfence" : : : "memory");
    return t;
}

enum op { OP_INSERT, OP_RESTART, OP_REQUEUE, OP_POP, OP_COUNT };

struct overhead {
    int64_t mean, median;    /* of an empty lfence;rdtsc pair, in hundredths of a tick */
};

struct cell {                /* hundredths of a tick, overhead removed */
    int64_t mean, median, p99;
    int64_t batch_median, batch_p99;
};

void bench_queue_rbtree(const struct overhead *ovh, struct cell out[OP_COUNT][SIZES]);
void bench_queue_heap(const struct overhead *ovh, struct cell out[OP_COUNT][SIZES]);

/* Mean of the fastest 999 in 1000 of sorted samples: the slowest 0.1% are interrupts and
 * preemptions (this machine is shared), which would otherwise dominate a mean. */
static int64_t trimmed_mean(const int64_t *sorted, size_t n)
{
    size_t keep = n - n / 1000;
    int64_t sum = 0;

    for (size_t i = 0; i < keep; i++)
        sum += sorted[i];
    return sum / (int64_t)keep;
}

/* Trimmed mean, median and p99 of raw tick samples, scaled, overhead removed; sorts v. */
static void summarise(int64_t *v, size_t n, const struct overhead *ovh, struct cell *c)
{
    struct stats st;

    for (size_t i = 0; i < n; i++)
        v[i] *= SCALE;
    stats_i64(v, n, &st);
    c->mean = trimmed_mean(v, n) - ovh->mean;
    c->median = st.median - ovh->median;
    c->p99 = st.p99 - ovh->median;
}

static void summarise_batches(int64_t *v, size_t n, struct cell *c)
{
    struct stats st;

    stats_i64(v, n, &st);
    c->batch_median = st.median;
    c->batch_p99 = st.p99;
}

#ifdef TQ_IMPL
/* ---- one structure, through bench_queue.h ------------------------------------------------ */
#include "tests/bench/bench_queue.h"

/* Deadlines of pending timers spread over SPAN ns from BASE: about a second, the scale of
 * the timeouts and sleeps an hrtimer queue holds. */
#define BASE_NS 1000000000ull
#define SPAN_NS (1ull << 30)

struct set {
    uint32_t nq, pending;             /* queues, and timers pending in each */
    struct bq q[BATCH];
    struct bq_slot *slots;            /* nq * (pending + BATCH) */
    struct bq_node *nodes;            /* per queue: pending nodes, then BATCH spares */
};

static uint64_t rng_state = 0x853c49e6748fea9bull;

static uint64_t rnd(void)
{
    rng_state ^= rng_state >> 12;        /* xorshift64*: cheap, and outside the timing */
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return rng_state * 0x2545f4914f6cdd1dull;
}

static int64_t samples[OPS];
static int sink;                       /* results the compiler must not discard */

static struct bq_node *node_at(struct set *s, uint32_t qi, uint32_t k)
{
    return &s->nodes[(size_t)qi * (s->pending + BATCH) + k];
}

static void fail(const char *what)
{
    fprintf(stderr, "bench_tqueue (%s): %s\n", TQ_IMPL_NAME, what);
    exit(1);
}

/* aligned_alloc wants a size that is a multiple of the alignment. */
static size_t round_up_64(size_t n) { return (n + 63) & ~(size_t)63; }

static void set_build(struct set *s, uint32_t nq, uint32_t pending)
{
    size_t per_q = (size_t)pending + BATCH;

    s->nq = nq;
    s->pending = pending;
    s->slots = aligned_alloc(64, round_up_64(nq * per_q * sizeof(struct bq_slot)));
    s->nodes = aligned_alloc(64, round_up_64(nq * per_q * sizeof(struct bq_node)));
    if (!s->slots || !s->nodes)
        fail("out of memory");
    memset(s->nodes, 0, nq * per_q * sizeof(struct bq_node));
    for (uint32_t qi = 0; qi < nq; qi++) {
        bq_init(&s->q[qi], &s->slots[qi * per_q], (uint32_t)per_q);
        for (uint32_t k = 0; k < pending; k++)
            if (bq_insert(&s->q[qi], node_at(s, qi, k), BASE_NS + rnd() % SPAN_NS) < 0)
                fail("fill");
    }
}

static void set_free(struct set *s)
{
    free(s->slots);
    free(s->nodes);
}

/* A deadline after the queue's first one, so the insertion never becomes the head. */
static uint64_t behind_head(struct bq *q)
{
    uint64_t head = bq_deadline_ns(bq_first(q));
    return head + 1 + rnd() % (BASE_NS + SPAN_NS - head);
}

/* ---- per-op: each returns the ticks between the two reads ---- */

static int64_t one_insert(struct set *s, uint32_t i)
{
    struct bq *q = &s->q[0];
    struct bq_node *x = node_at(s, 0, s->pending + i % BATCH);
    uint64_t d = behind_head(q);

    uint64_t t0 = tsc_begin();
    int r = bq_insert(q, x, d);
    uint64_t t1 = rdtsc_ordered();
    if (r != 0)
        fail("insert behind the head became the head");
    bq_remove(q, x);
    return (int64_t)(t1 - t0);
}

static int64_t one_restart(struct set *s, uint32_t i)
{
    struct bq *q = &s->q[0];
    struct bq_node *y = node_at(s, 0, (uint32_t)(rnd() % s->pending));
    uint64_t d = BASE_NS + rnd() % SPAN_NS;
    (void)i;

    uint64_t t0 = tsc_begin();
    sink += bq_remove(q, y);
    sink += bq_insert(q, y, d);
    uint64_t t1 = rdtsc_ordered();
    return (int64_t)(t1 - t0);
}

static int64_t one_requeue(struct set *s, uint32_t i)
{
    struct bq *q = &s->q[0];
    struct bq_node *y = node_at(s, 0, (uint32_t)(rnd() % s->pending));
    uint64_t d = BASE_NS + rnd() % SPAN_NS;
    (void)i;

    uint64_t t0 = tsc_begin();
    sink += bq_requeue(q, y, d);
    uint64_t t1 = rdtsc_ordered();
    return (int64_t)(t1 - t0);
}

/* The expired timer is restarted a random interval later, as a periodic one would be, so
 * the queue keeps its size while time moves on. */
static int64_t one_pop(struct set *s, uint32_t i)
{
    struct bq *q = &s->q[0];
    (void)i;

    uint64_t t0 = tsc_begin();
    struct bq_node *x = bq_pop_first(q);
    uint64_t t1 = rdtsc_ordered();
    bq_insert(q, x, bq_deadline_ns(x) + rnd() % SPAN_NS);
    return (int64_t)(t1 - t0);
}

/* ---- batched: each returns the ticks for BATCH operations ---- */

static int64_t batch_insert(struct set *s)
{
    struct bq *q[BATCH];
    struct bq_node *x[BATCH];
    uint64_t d[BATCH];
    int r = 0;

    for (uint32_t j = 0; j < BATCH; j++) {
        q[j] = &s->q[j % s->nq];
        x[j] = node_at(s, j % s->nq, s->pending + j / s->nq);
        d[j] = behind_head(q[j]);
    }
    uint64_t t0 = tsc_begin();
    for (uint32_t j = 0; j < BATCH; j++)
        r |= bq_insert(q[j], x[j], d[j]);
    uint64_t t1 = rdtsc_ordered();
    if (r != 0)
        fail("batched insert behind the head became the head");
    for (uint32_t j = 0; j < BATCH; j++)
        bq_remove(q[j], x[j]);
    return (int64_t)(t1 - t0);
}

static void pick_random(struct set *s, struct bq **q, struct bq_node **y, uint64_t *d)
{
    for (uint32_t j = 0; j < BATCH; j++) {
        q[j] = &s->q[j % s->nq];
        y[j] = node_at(s, j % s->nq, (uint32_t)(rnd() % s->pending));
        d[j] = BASE_NS + rnd() % SPAN_NS;
    }
}

static int64_t batch_restart(struct set *s)
{
    struct bq *q[BATCH];
    struct bq_node *y[BATCH];
    uint64_t d[BATCH];

    pick_random(s, q, y, d);
    uint64_t t0 = tsc_begin();
    for (uint32_t j = 0; j < BATCH; j++) {
        sink += bq_remove(q[j], y[j]);
        sink += bq_insert(q[j], y[j], d[j]);
    }
    return (int64_t)(rdtsc_ordered() - t0);
}

static int64_t batch_requeue(struct set *s)
{
    struct bq *q[BATCH];
    struct bq_node *y[BATCH];
    uint64_t d[BATCH];

    pick_random(s, q, y, d);
    uint64_t t0 = tsc_begin();
    for (uint32_t j = 0; j < BATCH; j++)
        sink += bq_requeue(q[j], y[j], d[j]);
    return (int64_t)(rdtsc_ordered() - t0);
}

static int64_t batch_pop(struct set *s)
{
    struct bq *q[BATCH];
    struct bq_node *x[BATCH];

    for (uint32_t j = 0; j < BATCH; j++)
        q[j] = &s->q[j % s->nq];
    uint64_t t0 = tsc_begin();
    for (uint32_t j = 0; j < BATCH; j++)
        x[j] = bq_pop_first(q[j]);
    uint64_t t1 = rdtsc_ordered();
    for (uint32_t j = 0; j < BATCH; j++)
        bq_insert(q[j], x[j], bq_deadline_ns(x[j]) + rnd() % SPAN_NS);
    return (int64_t)(t1 - t0);
}

typedef int64_t (*one_fn)(struct set *, uint32_t);
typedef int64_t (*batch_fn)(struct set *);
static const one_fn one_ops[OP_COUNT] = { one_insert, one_restart, one_requeue, one_pop };
static const batch_fn batch_ops[OP_COUNT] = {
    batch_insert, batch_restart, batch_requeue, batch_pop,
};

/* Pop goes last: it moves the deadlines on, which the others' draws do not expect. */
static void per_op(uint32_t pending, const struct overhead *ovh,
                   struct cell out[OP_COUNT][SIZES], int size_i)
{
    struct set s;

    set_build(&s, 1, pending);
    for (int op = 0; op < OP_COUNT; op++) {
        for (uint32_t i = 0; i < OPS / 20; i++)          /* warm caches and predictors */
            one_ops[op](&s, i);
        for (uint32_t i = 0; i < OPS; i++)
            samples[i] = one_ops[op](&s, i);
        summarise(samples, OPS, ovh, &out[op][size_i]);
    }
    set_free(&s);
}

static void batched(uint32_t pending, const struct overhead *ovh,
                    struct cell out[OP_COUNT][SIZES], int size_i)
{
    struct set s;
    const uint32_t batches = OPS / BATCH;

    set_build(&s, pending < 64 ? BATCH : 1, pending);
    for (int op = 0; op < OP_COUNT; op++) {
        for (uint32_t b = 0; b < batches / 20; b++)
            batch_ops[op](&s);
        for (uint32_t b = 0; b < batches; b++)
            samples[b] = (batch_ops[op](&s) * SCALE - ovh->mean) / BATCH;
        summarise_batches(samples, batches, &out[op][size_i]);
    }
    set_free(&s);
}

void BENCH_QUEUE(const struct overhead *ovh, struct cell out[OP_COUNT][SIZES])
{
    for (int i = 0; i < SIZES; i++) {
        fprintf(stderr, "  %s, %u pending ...\n", TQ_IMPL_NAME, sizes[i]);
        per_op(sizes[i], ovh, out, i);
        batched(sizes[i], ovh, out, i);
    }
    if (sink == -1)
        fprintf(stderr, "(never printed: keeps the results alive)\n");
}
#endif /* TQ_IMPL */

#ifdef BENCH_MAIN
/* ---- the driver ---------------------------------------------------------------------- */
#include <sched.h>
#include <time.h>
#include <unistd.h>

static int64_t pair_samples[OPS];

static void measure_overhead(struct overhead *ovh)
{
    struct cell c;
    struct overhead zero = { 0, 0 };

    for (uint32_t i = 0; i < OPS; i++) {
        uint64_t t0 = tsc_begin();
        pair_samples[i] = (int64_t)(rdtsc_ordered() - t0);
    }
    summarise(pair_samples, OPS, &zero, &c);
    ovh->mean = c.mean;
    ovh->median = c.median;
}

/* The smallest non-zero difference between back-to-back reads: how coarsely the TSC moves. */
static uint64_t tsc_step(void)
{
    uint64_t step = UINT64_MAX, prev = rdtsc_ordered();

    for (int i = 0; i < 100000; i++) {
        uint64_t now = rdtsc_ordered();
        if (now != prev && now - prev < step)
            step = now - prev;
        prev = now;
    }
    return step;
}

/* The kernel's irq_save is pushfq;pop;cli and its irq_restore a conditional sti; cli and
 * sti fault in user mode. What runs here is pushfq;pop and push;popfq (the restore Linux
 * uses): popf at CPL 3 leaves IF alone but is still the expensive half. It is an estimate of
 * the pair's cost, not a measurement of the kernel's instructions. (bench.mk builds this
 * with -mno-red-zone: the pushes would otherwise overwrite the red zone.) */
static inline void flags_pair(void)
{
    unsigned long f;

    __asm__ volatile("pushfq\n\tpopq %0\n\tpushq %0\n\tpopfq" : "=r"(f) : : "memory", "cc");
}

static void measure_flags_pair(const struct overhead *ovh, struct cell *c)
{
    const uint32_t batches = OPS / BATCH;

    for (uint32_t i = 0; i < OPS; i++) {
        uint64_t t0 = tsc_begin();
        flags_pair();
        pair_samples[i] = (int64_t)(rdtsc_ordered() - t0);
    }
    summarise(pair_samples, OPS, ovh, c);
    for (uint32_t b = 0; b < batches; b++) {
        uint64_t t0 = tsc_begin();
        for (uint32_t j = 0; j < BATCH; j++)
            flags_pair();
        pair_samples[b] = ((int64_t)(rdtsc_ordered() - t0) * SCALE - ovh->mean) / BATCH;
    }
    summarise_batches(pair_samples, batches, c);
}

/* Core clock cycles per TSC tick, from chains of dependent adds (one cycle each): the TSC
 * runs at a fixed rate while the core may run faster or slower. A preemption can only make
 * a chain look slower, so the best of 20 short chains is the estimate. */
static int64_t core_per_tsc_scaled(void)
{
    const uint64_t adds = 8ull * 1000000;
    int64_t best = 0;

    for (int run = 0; run < 20; run++) {
        uint64_t x = 0;
        uint64_t t0 = tsc_begin();
        for (uint64_t i = 0; i < adds / 8; i++) {
#define DEP_ADD x += 1; __asm__("" : "+r"(x))
            DEP_ADD; DEP_ADD; DEP_ADD; DEP_ADD; DEP_ADD; DEP_ADD; DEP_ADD; DEP_ADD;
#undef DEP_ADD
        }
        uint64_t ticks = rdtsc_ordered() - t0;
        int64_t ratio = (int64_t)(adds * SCALE / ticks);
        if (x == adds && ratio > best)
            best = ratio;
    }
    return best;
}

static void cpu_model(char *buf, size_t size)
{
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[512];

    snprintf(buf, size, "unknown");
    while (f && fgets(line, sizeof(line), f)) {
        char *colon = strchr(line, ':');
        if (strncmp(line, "model name", 10) == 0 && colon) {
            snprintf(buf, size, "%s", colon + 2);
            buf[strcspn(buf, "\n")] = 0;
            break;
        }
    }
    if (f)
        fclose(f);
}

/* Other work on the machine shows up in the p99s; the load average says how much there was. */
static void load_average(char *buf, size_t size)
{
    FILE *f = fopen("/proc/loadavg", "r");

    snprintf(buf, size, "unknown");
    if (f && fgets(buf, (int)size, f))
        buf[strcspn(buf, "\n")] = 0;
    if (f)
        fclose(f);
}

/* The TSC is synchronised across CPUs, but a migration mid-sample costs a cache refill. */
static void pin_to_last_cpu(void)
{
    cpu_set_t set;
    long n = sysconf(_SC_NPROCESSORS_ONLN);

    CPU_ZERO(&set);
    CPU_SET(n > 0 ? n - 1 : 0, &set);
    if (sched_setaffinity(0, sizeof(set), &set) != 0)
        perror("sched_setaffinity (continuing unpinned)");
}

static void put_fixed(int64_t v)
{
    printf(" %6.1f", (double)v / SCALE);
}

static void put_cell(const struct cell *c)
{
    put_fixed(c->mean);
    put_fixed(c->median);
    put_fixed(c->p99);
    put_fixed(c->batch_median);
    put_fixed(c->batch_p99);
}

static const char *const op_names[OP_COUNT] = {
    "insert, not head", "cancel+restart", "requeue (restart)", "pop first (expire)",
};

static struct cell rb[OP_COUNT][SIZES], hp[OP_COUNT][SIZES];

static void print_table(void)
{
    printf("%-19s %8s | %-34s | %-34s |\n", "", "", "rbtree (the hrtimer queue)", "heap (4-ary)");
    printf("%-19s %8s |", "operation", "pending");
    for (int k = 0; k < 2; k++)
        printf("   mean    med    p99   bmed   bp99 |");
    printf("\n");
    for (int op = 0; op < OP_COUNT; op++)
        for (int i = 0; i < SIZES; i++) {
            printf("%-19s %8u |", i == 0 ? op_names[op] : "", sizes[i]);
            put_cell(&rb[op][i]);
            printf(" |");
            put_cell(&hp[op][i]);
            printf(" |\n");
        }
}

int main(void)
{
    char model[256], date[64], load[128];
    struct overhead ovh;
    struct cell flags;
    time_t now = time(NULL);

    pin_to_last_cpu();
    cpu_model(model, sizeof(model));
    strftime(date, sizeof(date), "%Y-%m-%d %H:%M UTC", gmtime(&now));
    measure_overhead(&ovh);
    measure_flags_pair(&ovh, &flags);
    int64_t ratio = core_per_tsc_scaled();
    bench_queue_rbtree(&ovh, rb);
    bench_queue_heap(&ovh, hp);
    load_average(load, sizeof(load));

    printf("bench_tqueue  %s\n", date);
    printf("cpu           %s (%ld online), pinned to the last\n", model,
           sysconf(_SC_NPROCESSORS_ONLN));
    printf("loadavg       %s (at the end of the run)\n", load);
    printf("units         TSC ticks (\"cycles\"); 1 tick ~ %.2f core cycles (dependent-add "
           "chain)\n", (double)ratio / SCALE);
    printf("tsc step      %llu ticks between distinct back-to-back reads\n",
           (unsigned long long)tsc_step());
    printf("rdtsc pair    lfence;rdtsc;lfence + lfence;rdtsc: mean");
    put_fixed(ovh.mean);
    printf(", median");
    put_fixed(ovh.median);
    printf(" ticks; subtracted from every figure below\n");
    printf("method        mean/med/p99: 10^6 single operations, each between two reads\n"
           "              (mean: fastest 99.9%%; med/p99 move in whole TSC steps)\n"
           "              bmed/bp99: median and p99 of the per-op average over batches of %u\n",
           BATCH);
    printf("\n");
    print_table();
    printf("\n%-28s |", "pushfq;pop + push;popfq");
    put_cell(&flags);
    printf("   (user-mode stand-in for irq save/restore)\n");
    return 0;
}
#endif /* BENCH_MAIN */
