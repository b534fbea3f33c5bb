/* tests/host/fake/irq.c - interrupt lines, the virtual RFLAGS.IF and delivery. See fake.h.
 *
 * Simplified: every line is an edge into a one-deep pending latch (what an 8259 IRR bit or
 * an IOAPIC edge pin gives); level semantics live in the models (HPET and RTC withhold a new
 * edge while their status bit is set, the LAPIC while its IRR bit is). Lines are delivered
 * lowest number first. A delivery point reached from inside a handler (the handler enabled
 * interrupts) does not nest: the outer loop delivers what is left. */
#include "fake.h"

#include <inttypes.h>

#define MAX_DELIVERIES_PER_POINT 1000000

struct line {
    bool pending, masked;
    int (*ack)(void *ctx);
    void *ack_ctx;
    struct fake_irq_line_stats st;
};

static struct line lines[FAKE_IRQ_LINES];
static bool if_flag, delivering, async_mode;
static void (*handler)(int line, void *ctx);
static void *handler_ctx;
static uint64_t unhandled;
static int current_vector = -1;

static struct line *line_of(int line)
{
    if (line < 0 || line >= FAKE_IRQ_LINES) {
        fake_fault("interrupt line %d out of range", line);
        return NULL;
    }
    return &lines[line];
}

void fake_irq_reset(void)
{
    for (int i = 0; i < FAKE_IRQ_LINES; i++)
        lines[i] = (struct line){ .st.last_vector = -1 };
    if_flag = delivering = async_mode = false;
    handler = NULL;
    handler_ctx = NULL;
    unhandled = 0;
    current_vector = -1;
    fake_irq_off_reset();
}

void fake_set_irq_handler(void (*fn)(int line, void *ctx), void *ctx)
{
    handler = fn;
    handler_ctx = ctx;
}

void fake_irq_set_ack(int line, int (*ack)(void *ctx), void *ctx)
{
    struct line *l = line_of(line);

    if (l) {
        l->ack = ack;
        l->ack_ctx = ctx;
    }
}

void fake_irq_raise(int line)
{
    struct line *l = line_of(line);

    if (!l)
        return;
    l->st.raised++;
    l->st.last_raise_ns = vclock_now_ns();
    if (l->pending)
        l->st.coalesced++;
    l->pending = true;
}

void fake_irq_count_dropped(int line, uint64_t n)
{
    struct line *l = line_of(line);

    if (l)
        l->st.dropped += n;
}

bool fake_irq_pending(int line)
{
    struct line *l = line_of(line);

    return l && l->pending;
}

void fake_irq_mask(int line, bool masked)
{
    struct line *l = line_of(line);

    if (l)
        l->masked = masked;
}

void fake_irq_set_async(bool on)
{
    async_mode = on;
}

const struct fake_irq_line_stats *fake_irq_stats(int line)
{
    static const struct fake_irq_line_stats none = { .last_vector = -1 };
    struct line *l = line_of(line);

    return l ? &l->st : &none;
}

uint64_t fake_irq_unhandled(void)
{
    return unhandled;
}

int fake_irq_current_vector(void)
{
    return current_vector;
}

bool fake_irq_enabled(void)
{
    return if_flag;
}

static uint64_t off_since_ns, off_max_ns;

void fake_irq_set_enabled(bool on)
{
    uint64_t now = vclock_now_ns();
    if (if_flag && !on)
        off_since_ns = now;
    if (!if_flag && on && now - off_since_ns > off_max_ns)
        off_max_ns = now - off_since_ns;
    if_flag = on;
}

uint64_t fake_irq_off_max_ns(void)
{
    uint64_t now = vclock_now_ns();
    if (!if_flag && now - off_since_ns > off_max_ns)
        return now - off_since_ns;
    return off_max_ns;
}

void fake_irq_off_reset(void)
{
    off_max_ns = 0;
    off_since_ns = vclock_now_ns();
}

static struct line *next_pending(void)
{
    for (int i = 0; i < FAKE_IRQ_LINES; i++)
        if (lines[i].pending && !lines[i].masked)
            return &lines[i];
    return NULL;
}

bool fake_irq_deliverable(void)
{
    return if_flag && next_pending() != NULL;
}

/* One interrupt: acknowledged at the controller, then the handler runs with IF clear (an
 * interrupt gate) and IRET sets IF again. */
static void deliver_one(struct line *l)
{
    int line = (int)(l - lines);
    int saved_vector = current_vector;

    l->pending = false;
    l->st.delivered++;
    l->st.last_deliver_ns = vclock_now_ns();
    current_vector = l->ack ? l->ack(l->ack_ctx) : -1;
    l->st.last_vector = current_vector;
    if_flag = false;
    if (handler)
        handler(line, handler_ctx);
    else
        unhandled++;
    if_flag = true;
    current_vector = saved_vector;
}

void fake_irq_deliver(void)
{
    struct line *l;
    long n = 0;

    if (!if_flag || delivering)
        return;
    delivering = true;
    while (if_flag && (l = next_pending())) {
        if (++n > MAX_DELIVERIES_PER_POINT) {
            fake_fault("interrupt storm: more than %d deliveries without a pause",
                       MAX_DELIVERIES_PER_POINT);
            break;
        }
        deliver_one(l);
    }
    delivering = false;
}

void fake_irq_async_point(void)
{
    if (async_mode)
        fake_irq_deliver();
}

void fake_irq_log_handler(int line, void *ctx)
{
    struct fake_irq_log *log = ctx;

    if (log->n < FAKE_IRQ_LOG_MAX)
        log->e[log->n++] = (struct fake_irq_log_entry){ line, current_vector, vclock_now_ns() };
    log->total++;
    if (log->then)
        log->then(line, log->then_ctx);
}

unsigned fake_irq_log_count(const struct fake_irq_log *log, int line)
{
    unsigned n = 0;

    for (unsigned i = 0; i < log->n; i++)
        n += log->e[i].line == line;
    return n;
}
