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

struct ring {
    char *buf;
    uint32_t size;
    volatile uint32_t head, tail;    /* offsets; head == tail: empty; one byte kept free */
};

static char serial_buf[KLOG_SERIAL_BYTES], screen_buf[KLOG_SCREEN_BYTES];
static struct ring serial_ring = { serial_buf, KLOG_SERIAL_BYTES, 0, 0 };
static struct ring screen_ring = { screen_buf, KLOG_SCREEN_BYTES, 0, 0 };

static struct uart *uart;
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

static uint32_t used(const struct ring *r)
{
    return (r->head - r->tail + r->size) % r->size;
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
    uart = serial;
    buffered = panicked = serial_mid_line = said_dead = false;
    lock_word = draining = 0;
    windows = 0;
    serial_ring.head = serial_ring.tail = screen_ring.head = screen_ring.tail = 0;
    st = (struct klog_stats){ 0 };
    lost = 0;
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

bool klog_window_open(void)
{
    return windows != 0;
}

/* ---- the writer ------------------------------------------------------------------------ */

static bool port_usable(void)
{
    return uart && uart->present && !uart->dead;
}

/* Once, on the screen: the serial port stopped taking bytes, so the run goes on without it
 * (the `console_cost` record counts what was lost). Straight into the screen's ring: the
 * writer holds the drain and must not wait for itself. */
static void say_port_dead(void)
{
    static const char msg[] = "serial port stopped draining (THRE never came within its bound): "
                              "serial output off, the screen goes on\n";
    if (said_dead || !uart || !uart->present)
        return;
    said_dead = true;
    unsigned long f = lock();
    if (fbcon_active() && space(&screen_ring) >= sizeof(msg))
        put(&screen_ring, msg, sizeof(msg) - 1);
    unlock(f);
}

/* A FIFO's worth to the UART; false when the port went dead waiting (bounded). */
static void serial_chunk(struct ring *s)
{
    if (!uart_tx_wait(uart))
        return;                       /* dead now: the next step drops what is left */
    char chunk[UART_FIFO_BYTES];
    uint32_t n = used(s), t = s->tail;
    if (n > uart->fifo_bytes)
        n = uart->fifo_bytes;
    for (uint32_t i = 0; i < n; i++)
        chunk[i] = s->buf[(t + i) % s->size];
    n = uart_tx_put(uart, chunk, n);
    st.serial_bytes += n;
    __atomic_store_n(&s->tail, (t + n) % s->size, __ATOMIC_RELEASE);
}

/* One step: a FIFO's worth to the UART when it can take one; else screen work while the
 * line is busy (a piece of text into fbcon's RAM copy, or one screen row drawn); else a
 * bounded wait for the UART. false when there was nothing left to do. */
static bool drain_step(void)
{
    struct ring *s = &serial_ring, *v = &screen_ring;
    bool serial_left = s->tail != __atomic_load_n(&s->head, __ATOMIC_ACQUIRE);
    if (serial_left && !port_usable()) {
        lost += used(s);
        __atomic_store_n(&s->tail, s->head, __ATOMIC_RELEASE);
        say_port_dead();
        return true;
    }
    if (serial_left && uart_tx_ready(uart)) {
        serial_chunk(s);
        return true;
    }
    if (v->tail != __atomic_load_n(&v->head, __ATOMIC_ACQUIRE)) {
        char piece[SCREEN_PIECE];
        uint32_t n = used(v), t = v->tail;
        if (n > SCREEN_PIECE)
            n = SCREEN_PIECE;
        for (uint32_t i = 0; i < n; i++)
            piece[i] = v->buf[(t + i) % v->size];
        fbcon_write(piece, n);
        __atomic_store_n(&v->tail, (t + n) % v->size, __ATOMIC_RELEASE);
        return true;
    }
    if (fbcon_flush_row())
        return true;
    if (serial_left) {
        serial_chunk(s);
        return true;
    }
    return false;
}

/* Empty rings start again at offset 0, so that a window's copies take the same path
 * whatever came before it (exact mode compares runs byte for byte). */
static void rewind_if_empty(void)
{
    unsigned long f = lock();
    if (serial_ring.head == serial_ring.tail)
        serial_ring.head = serial_ring.tail = 0;
    if (screen_ring.head == screen_ring.tail)
        screen_ring.head = screen_ring.tail = 0;
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
    if (serial_ring.head == serial_ring.tail && screen_ring.head == screen_ring.tail)
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
    if ((where & KLOG_SERIAL) && uart) {
        if (own_line && serial_mid_line)
            uart_write(uart, "\n", 1);
        for (unsigned i = 0; i < n; i++) {
            uart_write(uart, piece[i], len[i]);
            st.serial_bytes += len[i];
            if (len[i])
                serial_mid_line = piece[i][len[i] - 1] != '\n';
        }
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
    bool ser = (where & KLOG_SERIAL) && port_usable(), scr = (where & KLOG_SCREEN) && fbcon_active();
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
        if (serial_ring.head != serial_ring.tail || screen_ring.head != screen_ring.tail)
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
