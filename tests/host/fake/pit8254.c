/* tests/host/fake/pit8254.c - see pit8254.h. Nothing ticks: each channel remembers the
 * clock edge at which its counting element was loaded (load_k) with its count n, and every
 * read derives the value and OUT from the current edge index k = edges(now). */
#include "fake.h"

#define PIT_BASE   0x40
#define PIT_CTRL   3                  /* port 0x43, offset from PIT_BASE */
#define PORT_61    0x61
#define   P61_GATE2     0x01
#define   P61_SPEAKER   0x02
#define   P61_REFRESH   0x10
#define   P61_OUT2      0x20
#define REFRESH_HALF_NS 15085         /* DRAM refresh request toggle on port 0x61 bit 4 */

#define CW_SC(cw)   ((cw) >> 6)       /* channel, 3 = read-back */
#define CW_RW(cw)   (((cw) >> 4) & 3) /* 0 latch, 1 LSB, 2 MSB, 3 LSB then MSB */
#define CW_MODE(cw) (((cw) >> 1) & 7)
#define CW_BCD      0x01
#define RB_NO_COUNT  0x20             /* read-back: 0 = latch count */
#define RB_NO_STATUS 0x10             /* read-back: 0 = latch status */
#define ST_OUT  0x80
#define ST_NULL 0x40

struct chan {
    uint8_t mode_bits, mode, rw, bcd; /* mode: behaviour (6,7 -> 2,3; 1,4,5 -> 0) */
    bool have_count;                  /* a count is loaded since the control word */
    uint32_t n;                       /* count in effect, 1..65536 */
    uint64_t load_k;                  /* clock edge that loads n into the counting element */
    bool switch_pending;              /* modes 2/3: next_n replaces n at edge switch_k */
    uint32_t next_n;
    uint64_t switch_k;
    uint16_t idle_value;              /* what reads return with no count loaded */
    bool wr_msb_next, rd_msb_next;
    uint8_t wr_lsb;
    bool latched, status_latched;
    uint16_t latch;
    uint8_t status;
    bool gate;                        /* channels 0 and 1: always high */
    uint64_t paused_e;                /* mode 0, gate low: edges counted when it fell */
    uint16_t gate_value;              /* modes 2/3, gate low: value when it fell */
};

static const struct vrate pit_rate = { FAKE_PIT_HZ, 1000000000u };
static struct chan ch[3];
static uint8_t p61;
static bool irq_dead;
static bool gated;                    /* the input clock stopped at gated_k */
static uint64_t gated_k;
static struct vclock_event ch0_event;

static uint64_t edges_now(void)
{
    return gated ? gated_k : vrate_ticks(pit_rate, vclock_now_ns());
}

uint64_t fake_pit_clock_edges(void)
{
    return edges_now();
}

/* Modes 2/3: a count written while counting takes over at the end of the period. */
static void sync(struct chan *c, uint64_t k)
{
    if (c->switch_pending && k >= c->switch_k) {
        c->n = c->next_n;
        c->load_k = c->switch_k;
        c->switch_pending = false;
    }
}

static bool gate_paused(const struct chan *c)
{
    return !c->gate && c->have_count;
}

static uint16_t value_at(struct chan *c, uint64_t k)
{
    uint64_t e, j, half, even;

    sync(c, k);
    if (!c->have_count)
        return c->idle_value;
    if (gate_paused(c))
        return c->mode == 0 ? (uint16_t)(c->n - c->paused_e) : c->gate_value;
    if (k < c->load_k)
        return (uint16_t)c->n;
    e = k - c->load_k;
    if (c->mode == 0)
        return (uint16_t)(c->n - e);   /* wraps past 0 to 0xFFFF and on, as the chip does */
    j = e % c->n;
    if (c->mode == 2)
        return (uint16_t)(c->n - j);
    half = (c->n + 1) / 2;
    even = c->n & ~1u;
    return (uint16_t)(j < half ? even - 2 * j : even - 2 * (j - half));
}

static bool out_at(struct chan *c, uint64_t k)
{
    uint64_t j;

    sync(c, k);
    if (!c->have_count)
        return c->mode != 0;
    if (gate_paused(c))
        return c->mode == 0 ? c->paused_e >= c->n : true;
    if (k < c->load_k)
        return c->mode != 0;
    if (c->mode == 0)
        return k - c->load_k >= c->n;
    j = (k - c->load_k) % c->n;
    return c->mode == 2 ? j != c->n - 1 : j < (c->n + 1) / 2;
}

/* The next edge at which OUT rises, after edge k; 0 if none is coming. */
static uint64_t next_rise(struct chan *c, uint64_t k)
{
    sync(c, k);
    if (!c->have_count || gate_paused(c))
        return 0;
    if (c->mode == 0)
        return k < c->load_k + c->n ? c->load_k + c->n : 0;
    if (c->switch_pending)
        return c->switch_k;
    if (k < c->load_k)
        return c->load_k + c->n;
    return c->load_k + ((k - c->load_k) / c->n + 1) * c->n;
}

static void schedule_ch0(void)
{
    uint64_t k = gated ? 0 : next_rise(&ch[0], edges_now());

    if (k)
        vclock_event_arm(&ch0_event, vrate_ns_for(pit_rate, k));
    else
        vclock_event_cancel(&ch0_event);
}

static void ch0_rises(void *ctx)
{
    (void)ctx;
    if (fake_hpet_legacy_active())
        fake_irq_count_dropped(FAKE_IRQ_ISA(0), 1);   /* the HPET owns IRQ0 */
    else if (!irq_dead)
        fake_irq_raise(FAKE_IRQ_ISA(0));
    schedule_ch0();
}

static void load_count(struct chan *c, uint32_t count)
{
    uint64_t k = edges_now();
    uint32_t n = count ? count : 65536;

    sync(c, k);
    if (c->mode == 2 && n == 1)
        fake_fault("8254: count 1 is illegal in mode 2");
    if ((c->mode == 2 || c->mode == 3) && c->have_count && c->gate && k >= c->load_k) {
        uint64_t next = c->switch_pending ? c->switch_k
                      : c->load_k + ((k - c->load_k) / c->n + 1) * c->n;
        c->switch_pending = true;
        c->next_n = n;
        c->switch_k = next;
        return;
    }
    c->n = n;
    c->load_k = k + 1;
    c->have_count = true;
    c->switch_pending = false;
    if (!c->gate && c->mode == 0)
        c->paused_e = 0;
    if (!c->gate && c->mode != 0)
        c->gate_value = (uint16_t)n;
}

static void write_count(struct chan *c, uint8_t b)
{
    if (c->rw == 1) {
        load_count(c, b);
    } else if (c->rw == 2) {
        load_count(c, (uint32_t)b << 8);
    } else if (!c->wr_msb_next) {
        c->wr_lsb = b;
        c->wr_msb_next = true;
        if (c->mode == 0) {   /* the first byte stops the count and sets OUT low */
            c->idle_value = value_at(c, edges_now());
            c->have_count = false;
        }
    } else {
        c->wr_msb_next = false;
        load_count(c, c->wr_lsb | (uint32_t)b << 8);
    }
}

static uint8_t byte_of(struct chan *c, uint16_t v, bool *done)
{
    bool msb = c->rw == 2 || (c->rw == 3 && c->rd_msb_next);

    if (c->rw == 3)
        c->rd_msb_next = !c->rd_msb_next;
    *done = c->rw != 3 || msb;
    return msb ? (uint8_t)(v >> 8) : (uint8_t)v;
}

static uint8_t read_chan(struct chan *c)
{
    bool done;
    uint8_t b;

    if (c->status_latched) {
        c->status_latched = false;
        return c->status;
    }
    if (c->latched) {
        b = byte_of(c, c->latch, &done);
        if (done)
            c->latched = false;
        return b;
    }
    return byte_of(c, value_at(c, edges_now()), &done);
}

static void latch_count(struct chan *c)
{
    if (!c->latched) {   /* a second latch before the first is read is ignored */
        c->latch = value_at(c, edges_now());
        c->latched = true;
    }
}

static void latch_status(struct chan *c)
{
    uint64_t k = edges_now();
    bool null = !c->have_count || k < c->load_k || c->switch_pending;

    if (c->status_latched)
        return;
    c->status = (uint8_t)((out_at(c, k) ? ST_OUT : 0) | (null ? ST_NULL : 0) | c->rw << 4 |
                          c->mode_bits << 1 | c->bcd);
    c->status_latched = true;
}

static void control_word(uint8_t cw)
{
    struct chan *c;
    unsigned mode = CW_MODE(cw);

    if (CW_SC(cw) == 3) {
        for (unsigned i = 0; i < 3; i++) {
            if (!(cw & (2u << i)))
                continue;
            if (!(cw & RB_NO_STATUS))
                latch_status(&ch[i]);
            if (!(cw & RB_NO_COUNT))
                latch_count(&ch[i]);
        }
        return;
    }
    c = &ch[CW_SC(cw)];
    if (CW_RW(cw) == 0) {
        latch_count(c);
        return;
    }
    if (mode == 1 || mode == 4 || mode == 5)
        fake_fault("8254: mode %u is not modelled", mode);
    if (cw & CW_BCD)
        fake_fault("8254: BCD counting is not modelled");
    c->idle_value = value_at(c, edges_now());
    c->mode_bits = (uint8_t)mode;
    c->mode = (uint8_t)(mode >= 6 ? mode - 4 : (mode == 2 || mode == 3) ? mode : 0);
    c->rw = (uint8_t)CW_RW(cw);
    c->bcd = cw & CW_BCD;
    c->have_count = c->switch_pending = false;
    c->wr_msb_next = c->rd_msb_next = false;
    c->latched = c->status_latched = false;
    if (c == &ch[0])
        schedule_ch0();
}

static void set_gate2(bool high)
{
    struct chan *c = &ch[2];
    uint64_t k = edges_now();

    if (c->gate == high)
        return;
    sync(c, k);
    if (!high && c->have_count) {
        c->paused_e = k > c->load_k ? k - c->load_k : 0;
        c->gate_value = value_at(c, k);
    } else if (high && c->have_count) {
        if (c->mode == 0) {
            c->load_k = k + 1 - c->paused_e;
        } else {   /* a rising gate reloads the count at the next clock */
            if (c->switch_pending)
                c->n = c->next_n;
            c->switch_pending = false;
            c->load_k = k + 1;
        }
    }
    c->gate = high;
}

static uint64_t pit_read(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx;
    (void)size;
    return off == PIT_CTRL ? 0xFF : read_chan(&ch[off]);   /* 0x43 is write-only */
}

static void pit_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    (void)size;
    if (off == PIT_CTRL) {
        control_word((uint8_t)v);
        return;
    }
    write_count(&ch[off], (uint8_t)v);
    if (off == 0)
        schedule_ch0();
}

static uint64_t p61_read(void *ctx, uint64_t off, unsigned size)
{
    uint8_t v = p61 & 0x0F;

    (void)ctx, (void)off, (void)size;
    if ((vclock_now_ns() / REFRESH_HALF_NS) & 1)
        v |= P61_REFRESH;
    if (out_at(&ch[2], edges_now()))
        v |= P61_OUT2;
    return v;
}

static void p61_write(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx, (void)off, (void)size;
    p61 = (uint8_t)(v & 0x0F);
    set_gate2(v & P61_GATE2);
}

static const struct fake_io_ops pit_ops = { pit_read, pit_write };
static const struct fake_io_ops p61_ops = { p61_read, p61_write };

void fake_pit_set_irq_dead(bool dead)
{
    irq_dead = dead;
}

void fake_pit_set_gated(bool on)
{
    gated_k = vrate_ticks(pit_rate, vclock_now_ns());
    gated = on;
    schedule_ch0();
}

bool fake_pit_out(unsigned channel)
{
    return channel < 3 && out_at(&ch[channel], edges_now());
}

uint16_t fake_pit_count(unsigned channel)
{
    return channel < 3 ? value_at(&ch[channel], edges_now()) : 0;
}

void fake_pit_reset(void)
{
    for (int i = 0; i < 3; i++)
        ch[i] = (struct chan){ .rw = 3, .n = 65536, .gate = i != 2 };
    p61 = 0;
    irq_dead = false;
    gated = false;
    vclock_event_init(&ch0_event, "pit ch0 OUT", ch0_rises, NULL);
    fake_port_register(PIT_BASE, 4, &pit_ops, NULL);
    fake_port_register(PORT_61, 1, &p61_ops, NULL);
}
