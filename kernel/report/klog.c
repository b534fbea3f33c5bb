/* kernel/report/klog.c - see klog.h. */
#include "kernel/report/klog.h"

#include "kernel/console/fbcon.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"

#define RFLAGS_IF (1ul << 9)
/* A writer that finds the lock taken spins this long at most: a fault taken while this CPU
 * held it (its handler writes a record) must not wait for ever; it then goes ahead. */
#define LOCK_SPINS (1u << 24)
/* A full log whose drain is in another CPU's hands is waited for this long at most (TSC
 * cycles; 2^33 is 2 s at 4.3 GHz); then the bytes are dropped and counted. */
#define FULL_WAIT_CYC (1ull << 33)
#define SCREEN_PIECE 64          /* bytes handed to fbcon's RAM copy per drain step */

/* One writer, several readers: the serial ring has a tail per port (every port gets every
 * byte, in order; the slowest decides when a byte's room is free), the screen ring one. */
struct ring {
    char *buf;
    uint32_t size;
    volatile uint32_t head;          /* offsets; head == every tail: empty; one byte kept free */
    volatile uint32_t tail[KLOG_SERIAL_MAX];
    unsigned readers;
};

static char serial_buf[KLOG_SERIAL_BYTES], screen_buf[KLOG_SCREEN_BYTES];
static struct ring serial_ring = { serial_buf, KLOG_SERIAL_BYTES, 0, { 0 }, 1 };
static struct ring screen_ring = { screen_buf, KLOG_SCREEN_BYTES, 0, { 0 }, 1 };

static struct uart *uarts[KLOG_SERIAL_MAX];
static unsigned n_uarts;
static bool buffered, panicked, serial_mid_line, said_dead;
static volatile int lock_word, draining;
static volatile unsigned windows;
static struct klog_stats st;
static uint64_t lost;

static bool irqs_on(void)
{
    unsigned long f = irq_save();
    irq_restore(f);
    return f & RFLAGS_IF;
}

static unsigned long lock(void)
{
    unsigned long flags = irq_save();
    for (unsigned i = 0; i < LOCK_SPINS; i++) {
        if (!__atomic_exchange_n(&lock_word, 1, __ATOMIC_ACQUIRE))
            break;
        cpu_relax();
    }
    return flags;
}

static void unlock(unsigned long flags)
{
    __atomic_store_n(&lock_word, 0, __ATOMIC_RELEASE);
    irq_restore(flags);
}

/* The maxima noted while a window is open start from zero at its beginning and join st's
 * at its end: a comparison against a maximum carried in from outside (the drains before
 * the window, which take what the line takes) would cost an instruction more or less in
 * one run than in another, and a measurement in the window would see it. */
static struct { uint64_t irqoff_max_cyc, max_fill; } win;

static void note_max(uint64_t *m, uint64_t v)
{
    if (v > *m)
        *m = v;
}

static void note_irqoff(uint64_t cyc)
{
    note_max(windows ? &win.irqoff_max_cyc : &st.irqoff_max_cyc, cyc);
}

static uint32_t used_by(const struct ring *r, unsigned i)
{
    return (r->head - r->tail[i] + r->size) % r->size;
}

static uint32_t used(const struct ring *r)
{
    uint32_t most = 0;
    for (unsigned i = 0; i < r->readers; i++)
        if (used_by(r, i) > most)
            most = used_by(r, i);
    return most;
}

static bool ring_empty(const struct ring *r)
{
    for (unsigned i = 0; i < r->readers; i++)
        if (r->tail[i] != r->head)
            return false;
    return true;
}

static void ring_reset(struct ring *r)
{
    r->head = 0;
    for (unsigned i = 0; i < KLOG_SERIAL_MAX; i++)
        r->tail[i] = 0;
}

static uint32_t space(const struct ring *r)
{
    return r->size - 1 - used(r);
}

static void put(struct ring *r, const char *s, size_t n)
{
    uint32_t h = r->head;
    size_t first = n < r->size - h ? n : r->size - h;
    memcpy(r->buf + h, s, first);
    memcpy(r->buf, s + first, n - first);
    __atomic_store_n(&r->head, (uint32_t)((h + n) % r->size), __ATOMIC_RELEASE);
}

void klog_init(struct uart *serial)
{
    n_uarts = 0;
    buffered = panicked = serial_mid_line = said_dead = false;
    lock_word = draining = 0;
    windows = 0;
    ring_reset(&serial_ring);
    ring_reset(&screen_ring);
    serial_ring.readers = 1;
    st = (struct klog_stats){ 0 };
    lost = 0;
    if (serial)
        klog_add_serial(serial);
}

int klog_add_serial(struct uart *serial)
{
    if (n_uarts == KLOG_SERIAL_MAX)
        return -1;
    unsigned long f = lock();
    /* The new port starts where the stream is now: it gets what is written from here on. */
    serial_ring.tail[n_uarts] = serial_ring.head;
    uarts[n_uarts++] = serial;
    serial_ring.readers = n_uarts;
    unlock(f);
    return 0;
}

void klog_pace(uint64_t tsc_hz)
{
    for (unsigned i = 0; i < n_uarts; i++)
        if (uarts[i]->present)
            uart_set_pacing(uarts[i], tsc_hz);
}

const struct uart *klog_serial(unsigned i)
{
    return i < n_uarts ? uarts[i] : NULL;
}

void klog_start(bool on)
{
    buffered = on;
}

bool klog_buffered(void)
{
    return buffered && !panicked;
}

void klog_window_begin(void)
{
    if (__atomic_add_fetch(&windows, 1, __ATOMIC_SEQ_CST) == 1) {
        win.irqoff_max_cyc = 0;
        win.max_fill = used(&serial_ring);
    }
}

/* ---- the writer ------------------------------------------------------------------------ */

static bool port_ok(const struct uart *u)
{
    return u && u->present && !u->dead;
}

static bool any_port_usable(void)
{
    for (unsigned i = 0; i < n_uarts; i++)
        if (port_ok(uarts[i]))
            return true;
    return false;
}

/* Once, on the screen: the serial port stopped taking bytes, so the run goes on without it
 * (the `console_cost` record counts what was lost). Straight into the screen's ring: the
 * writer holds the drain and must not wait for itself. */
static void say_port_dead(const struct uart *u)
{
    static const char msg[] = "a serial port stopped draining (THRE never came within its "
                              "bound): output to it off, the others and the screen go on\n";
    if (said_dead || !u || !u->present)
        return;
    said_dead = true;
    unsigned long f = lock();
    if (fbcon_active() && space(&screen_ring) >= sizeof(msg))
        put(&screen_ring, msg, sizeof(msg) - 1);
    unlock(f);
}

/* A FIFO's worth to port i (bounded wait; a port that dies waiting keeps its bytes for the
 * next step to drop). */
static void serial_chunk(struct ring *s, unsigned i)
{
    struct uart *u = uarts[i];
    if (!uart_tx_wait(u))
        return;
    char chunk[UART_FIFO_BYTES];
    uint32_t n = used_by(s, i), t = s->tail[i];
    if (n > u->fifo_bytes)
        n = u->fifo_bytes;
    for (uint32_t k = 0; k < n; k++)
        chunk[k] = s->buf[(t + k) % s->size];
    n = uart_tx_put(u, chunk, n);
    st.serial_bytes += n;
    __atomic_store_n(&s->tail[i], (t + n) % s->size, __ATOMIC_RELEASE);
}

/* Port i has bytes left; a dead or absent one has them dropped (counted) instead. */
static bool serial_left(struct ring *s, unsigned i)
{
    if (s->tail[i] == __atomic_load_n(&s->head, __ATOMIC_ACQUIRE))
        return false;
    if (port_ok(uarts[i]))
        return true;
    lost += used_by(s, i);
    __atomic_store_n(&s->tail[i], s->head, __ATOMIC_RELEASE);
    say_port_dead(uarts[i]);
    return false;
}

/* One step: a FIFO's worth to the first port that can take one; else screen work while the
 * lines are busy (a piece of text into fbcon's RAM copy, or one screen row drawn); else a
 * bounded wait for the port furthest behind. false when there was nothing left to do. */
static bool drain_step(void)
{
    struct ring *s = &serial_ring, *v = &screen_ring;
    int behind = -1;
    for (unsigned i = 0; i < n_uarts; i++) {
        if (!serial_left(s, i))
            continue;
        if (uart_tx_ready(uarts[i])) {
            serial_chunk(s, i);
            return true;
        }
        if (behind < 0 || used_by(s, i) > used_by(s, (unsigned)behind))
            behind = (int)i;
    }
    if (v->tail[0] != __atomic_load_n(&v->head, __ATOMIC_ACQUIRE)) {
        char piece[SCREEN_PIECE];
        uint32_t n = used(v), t = v->tail[0];
        if (n > SCREEN_PIECE)
            n = SCREEN_PIECE;
        for (uint32_t i = 0; i < n; i++)
            piece[i] = v->buf[(t + i) % v->size];
        fbcon_write(piece, n);
        __atomic_store_n(&v->tail[0], (t + n) % v->size, __ATOMIC_RELEASE);
        return true;
    }
    if (fbcon_flush_row())
        return true;
    if (behind >= 0) {
        serial_chunk(s, (unsigned)behind);
        return true;
    }
    return false;
}

/* Empty rings start again at offset 0, so that a window's copies take the same path
 * whatever came before it (exact mode compares runs byte for byte). */
static void rewind_if_empty(void)
{
    unsigned long f = lock();
    if (ring_empty(&serial_ring))
        ring_reset(&serial_ring);
    if (ring_empty(&screen_ring))
        ring_reset(&screen_ring);
    unlock(f);
}

/* force: drain inside a window too. Returns false when another drain was running. */
static bool drain(bool force)
{
    if (__atomic_exchange_n(&draining, 1, __ATOMIC_ACQUIRE))
        return false;
    bool off = !irqs_on();
    uint64_t t0 = rdtsc(), last = t0;
    for (;;) {
        if (!force && windows)
            break;
        bool did = drain_step();
        uint64_t now = rdtsc();
        st.console_cyc += now - last;
        if (windows)
            st.in_window_cyc += now - last;
        last = now;
        if (!did)
            break;
    }
    if (off)
        note_irqoff(last - t0);
    if (ring_empty(&serial_ring) && ring_empty(&screen_ring))
        rewind_if_empty();
    __atomic_store_n(&draining, 0, __ATOMIC_RELEASE);
    return true;
}

void klog_drain(void)
{
    if (!buffered || panicked || windows)
        return;
    if (!irqs_on()) {
        st.deferred_drains++;
        return;
    }
    drain(false);
}

void klog_flush(void)
{
    while (!drain(true)) {
        /* another CPU drains: it will finish; wait for it, bounded */
        uint64_t t0 = rdtsc();
        while (draining && rdtsc() - t0 < FULL_WAIT_CYC)
            cpu_relax();
        if (draining)
            return;
    }
}

void klog_drain_point(void)
{
    if (!buffered || panicked || windows)
        return;
    bool was_on = irqs_on();
    irq_enable();
    drain(false);
    if (!was_on)
        irq_disable();
}

void klog_window_end(void)
{
    if (windows && __atomic_sub_fetch(&windows, 1, __ATOMIC_SEQ_CST) == 0) {
        note_max(&st.irqoff_max_cyc, win.irqoff_max_cyc);
        note_max(&st.max_fill, win.max_fill);
        klog_drain_point();
    }
}

void klog_panic(void)
{
    panicked = true;
    __atomic_store_n(&draining, 0, __ATOMIC_RELEASE);   /* a drain this fault interrupted */
    drain(true);
}

/* ---- writing --------------------------------------------------------------------------- */

static size_t total(const size_t *len, unsigned n)
{
    size_t t = 0;
    for (unsigned i = 0; i < n; i++)
        t += len[i];
    return t;
}

/* Before the log, or after a fatal error: everything at once, interrupts off, whole. */
static void write_now(unsigned where, const char *const *piece, const size_t *len, unsigned n,
                      bool own_line)
{
    unsigned long f = lock();
    uint64_t t0 = rdtsc();
    st.sync_writes++;
    if ((where & KLOG_SERIAL) && n_uarts) {
        for (unsigned p = 0; p < n_uarts; p++) {
            if (own_line && serial_mid_line)
                uart_write(uarts[p], "\n", 1);
            for (unsigned i = 0; i < n; i++) {
                uart_write(uarts[p], piece[i], len[i]);
                st.serial_bytes += len[i];
            }
        }
        for (unsigned i = 0; i < n; i++)
            if (len[i])
                serial_mid_line = piece[i][len[i] - 1] != '\n';
    }
    if (where & KLOG_SCREEN) {
        for (unsigned i = 0; i < n; i++)
            fbcon_write(piece[i], len[i]);
        fbcon_flush();
    }
    uint64_t d = rdtsc() - t0;
    st.console_cyc += d;
    if (windows)
        st.in_window_cyc += d;
    note_irqoff(d);
    unlock(f);
}

/* Room for need bytes in r, draining (inside a window if need be) when it is full. false
 * when no room came within FULL_WAIT_CYC (another CPU's drain stuck): the write is lost. */
static bool make_room(struct ring *r, size_t need)
{
    if (need >= r->size)
        return false;
    uint64_t t0 = rdtsc();
    while (space(r) < need) {
        st.full_drains++;
        if (!drain(true)) {
            if (rdtsc() - t0 > FULL_WAIT_CYC)
                return false;
            cpu_relax();
        }
    }
    return true;
}

static void append(unsigned where, const char *const *piece, const size_t *len, unsigned n,
                   bool own_line)
{
    size_t bytes = total(len, n) + 1;
    bool ser = (where & KLOG_SERIAL) && any_port_usable(), scr = (where & KLOG_SCREEN) && fbcon_active();
    for (;;) {
        if ((ser && !make_room(&serial_ring, bytes)) || (scr && !make_room(&screen_ring, bytes))) {
            lost += bytes;
            return;
        }
        unsigned long f = lock();
        uint64_t t0 = rdtsc();
        if ((ser && space(&serial_ring) < bytes) || (scr && space(&screen_ring) < bytes)) {
            unlock(f);                /* another CPU took the room: again */
            continue;
        }
        if (ser && own_line && serial_mid_line)
            put(&serial_ring, "\n", 1);
        for (unsigned i = 0; i < n; i++) {
            if (ser)
                put(&serial_ring, piece[i], len[i]);
            if (scr)
                put(&screen_ring, piece[i], len[i]);
            if (ser && len[i])
                serial_mid_line = piece[i][len[i] - 1] != '\n';
        }
        note_max(windows ? &win.max_fill : &st.max_fill, used(&serial_ring));
        note_irqoff(rdtsc() - t0);
        unlock(f);
        return;
    }
}

void klog_write(unsigned where, const char *const *piece, const size_t *len, unsigned n,
                bool own_line)
{
    if (!buffered || panicked) {
        if (!ring_empty(&serial_ring) || !ring_empty(&screen_ring))
            klog_flush();             /* what was buffered goes first: order is kept */
        write_now(where, piece, len, n, own_line);
        return;
    }
    append(where, piece, len, n, own_line);
    klog_drain();
}

struct klog_stats klog_stats_take(void)
{
    struct klog_stats s = st;
    st = (struct klog_stats){ 0 };
    st.max_fill = used(&serial_ring);
    return s;
}

uint64_t klog_lost_bytes(void)
{
    return lost;
}
