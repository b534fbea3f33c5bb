/* tests/host/test_console.c - the output path against a fake 16550 and a fake framebuffer:
 * drivers/uart16550.c (FIFO detection, bounded waits, pacing), kernel/report/klog.c (the
 * in-memory log, its writer, measurement windows) and kernel/console/fbcon.c (drawn from
 * its RAM copy, never reading video memory).
 *
 * The figure that matters: with a transmitter that holds each byte for its time at
 * 115200 baud (86.8 us), the longest interrupts-off stretch of the output path stays below
 * one FIFO's worth of bytes (16 x 86.8 us = 1.4 ms); written whole under interrupts off, as
 * before the log, one 2 KB record keeps them off for 180 ms. */
#include <string.h>

#include "fake/fake.h"
#include "kernel/console/fbcon.h"
#include "font8x16.h"   /* the console's font: what a drawn glyph must be */
#include "kernel/report/klog.h"
#include "ticklab/errno.h"
#include "ticklab/uart16550.h"
#include "test.h"

#define BYTE_NS_115200 86806ull            /* 10 bits at 115200 baud */
#define FIFO_NS_115200 (16 * BYTE_NS_115200)

static struct uart port;

static void machine(struct fake_uart_opts o)
{
    fake_reset();
    fake_uart_attach(FAKE_UART_COM1, o);
    static struct fb_info none;             /* the screen off */
    fbcon_init(&none, NULL);
}

static void record(char *buf, size_t len, unsigned k)
{
    memset(buf, 'a' + k % 26, len);
    buf[0] = '{';
    buf[len - 1] = '}';
}

/* Writes n records of len bytes through the log with interrupts on, as the kernel's
 * threads do; returns the bytes expected on the wire. */
static size_t write_records(unsigned n, size_t len, char *expect, size_t cap)
{
    static char buf[4096];
    size_t at = 0;
    for (unsigned k = 0; k < n; k++) {
        record(buf, len, k);
        const char *piece[2] = { buf, "\n" };
        size_t bytes[2] = { len, 1 };
        klog_write(KLOG_SERIAL, piece, bytes, 2, true);
        if (at + len + 1 <= cap) {
            memcpy(expect + at, buf, len);
            expect[at + len] = '\n';
        }
        at += len + 1;
    }
    return at;
}

TEST(uart_finds_the_fifo_and_the_8250)
{
    machine((struct fake_uart_opts){ .fifo = true });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    CHECK_EQ_U64(port.fifo_bytes, 16);
    machine((struct fake_uart_opts){ .fifo = false });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    CHECK_EQ_U64(port.fifo_bytes, 1);
    fake_reset();                           /* nothing at the port */
    CHECK_EQ_I64(uart_init(&port, FAKE_UART_COM1, 115200), -ENODEV);
}

TEST(uart_write_never_overruns_a_slow_line)
{
    static const bool fifo[2] = { true, false };
    for (int i = 0; i < 2; i++) {
        machine((struct fake_uart_opts){ .fifo = fifo[i], .byte_ns = BYTE_NS_115200 });
        REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
        const char *msg = "the quick brown fox jumps over the lazy dog, twice over: "
                          "the quick brown fox jumps over the lazy dog\n";
        uart_write(&port, msg, strlen(msg));
        fake_run_for_ns(200 * BYTE_NS_115200);
        size_t len;
        const char *out = fake_uart_output(&len);
        CHECK_EQ_U64(len, strlen(msg));
        CHECK(len == strlen(msg) && !memcmp(out, msg, len));
        CHECK_EQ_U64(fake_uart_overruns(), 0);
    }
}

TEST(uart_that_never_drains_is_given_up_within_its_bound)
{
    machine((struct fake_uart_opts){ .fifo = true, .stuck = true });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    uint64_t t0 = vclock_now_ns();
    uart_write(&port, "hello\n", 6);
    uint64_t took = vclock_now_ns() - t0;
    CHECK(port.dead);
    CHECK_EQ_U64(port.tx_timeouts, 1);
    /* 2^31 TSC cycles at the fake's 2.1 GHz: about 1.02 s, and not much more */
    CHECK(took >= 1000000000ull && took < 1100000000ull);
    t0 = vclock_now_ns();
    uart_write(&port, "more\n", 5);         /* a dead port is not waited on again */
    CHECK(vclock_now_ns() - t0 < 1000);
    CHECK_EQ_U64(port.tx_timeouts, 1);
}

TEST(uart_pacing_holds_each_byte_for_its_time_on_an_instant_uart)
{
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = 1 });   /* QEMU's: instant */
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    static char buf[1000];
    memset(buf, 'x', sizeof(buf));
    uint64_t t0 = vclock_now_ns();
    uart_write(&port, buf, sizeof(buf));
    uint64_t unpaced = vclock_now_ns() - t0;
    uart_set_pacing(&port, fake_tsc_hz());
    t0 = vclock_now_ns();
    uart_write(&port, buf, sizeof(buf));
    uint64_t paced = vclock_now_ns() - t0;
    /* the last FIFO's worth is still on the wire when uart_write returns */
    CHECK(paced >= (sizeof(buf) - 16) * BYTE_NS_115200);
    CHECK(paced <= sizeof(buf) * BYTE_NS_115200 + 100000);
    CHECK(unpaced < paced / 10);
}

/* That figure, both ways. */
TEST(log_keeps_interrupts_off_below_one_fifo_on_a_115200_line)
{
    static char expect[64 * 1024];
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = BYTE_NS_115200 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    fake_irq_off_reset();
    size_t n = write_records(20, 2000, expect, sizeof(expect));
    CHECK(fake_irq_off_max_ns() < FIFO_NS_115200);
    struct klog_stats st = klog_stats_take();
    CHECK(st.irqoff_max_cyc * 1000000000ull / fake_tsc_hz() < FIFO_NS_115200);
    fake_run_for_ns(20 * FIFO_NS_115200);
    size_t len;
    const char *out = fake_uart_output(&len);
    CHECK_EQ_U64(len, n);
    CHECK(len == n && !memcmp(out, expect, n));
    CHECK_EQ_U64(fake_uart_overruns(), 0);

    /* as before the log: the same record written whole with interrupts off */
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = BYTE_NS_115200 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(false);
    irq_enable();
    fake_irq_off_reset();
    write_records(1, 2000, expect, sizeof(expect));
    CHECK(fake_irq_off_max_ns() > 170000000ull);     /* 2001 bytes x 86.8 us, less a FIFO */
}

TEST(log_waits_for_the_window_and_keeps_order)
{
    static char expect[64 * 1024];
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = BYTE_NS_115200 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    klog_window_begin();
    size_t n = write_records(10, 300, expect, sizeof(expect));
    fake_run_for_ns(100 * FIFO_NS_115200);
    size_t len;
    fake_uart_output(&len);
    CHECK_EQ_U64(len, 0);                  /* nothing while the window is open */
    klog_window_end();
    fake_run_for_ns(20 * FIFO_NS_115200);
    const char *out = fake_uart_output(&len);
    CHECK_EQ_U64(len, n);
    CHECK(len == n && !memcmp(out, expect, n));
    struct klog_stats st = klog_stats_take();
    CHECK_EQ_U64(st.in_window_cyc, 0);
    /* what the window's writes filled is noted inside it apart and joins the stats at its
     * end (a maximum compared inside a window starts there, not from the drains before) */
    CHECK_EQ_U64(st.max_fill, n);
}

TEST(log_made_with_interrupts_off_waits_for_a_drain_point)
{
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = BYTE_NS_115200 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_disable();
    fake_irq_off_reset();
    const char *p = "made with interrupts off\n";
    size_t l = strlen(p);
    klog_write(KLOG_SERIAL, &p, &l, 1, false);
    size_t len;
    fake_uart_output(&len);
    CHECK_EQ_U64(len, 0);
    uint64_t off_before = fake_irq_off_max_ns();
    klog_drain_point();                   /* interrupts on while it drains, then off again */
    CHECK(!fake_irq_enabled());
    CHECK(fake_irq_off_max_ns() < off_before + 10000);   /* the waits were not inside */
    fake_run_for_ns(2 * FIFO_NS_115200);
    const char *out = fake_uart_output(&len);
    CHECK(len == l && !memcmp(out, p, l));
}

TEST(log_full_inside_a_window_drains_there_and_says_so)
{
    static char expect[KLOG_SERIAL_BYTES + 64 * 1024];
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = 100 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    klog_window_begin();
    unsigned recs = KLOG_SERIAL_BYTES / 2001 + 20;
    size_t n = write_records(recs, 2000, expect, sizeof(expect));
    klog_window_end();
    fake_run_for_ns(1000000);
    size_t len;
    const char *out = fake_uart_output(&len);
    CHECK_EQ_U64(len, n);                  /* nothing lost or cut */
    CHECK(len == n && !memcmp(out, expect, n));
    struct klog_stats st = klog_stats_take();
    CHECK(st.full_drains > 0);
    CHECK(st.in_window_cyc > 0);           /* the measurement waited, and it is counted */
    CHECK_EQ_U64(klog_lost_bytes(), 0);
}

TEST(log_on_a_port_that_dies_drops_and_counts_never_hangs)
{
    machine((struct fake_uart_opts){ .fifo = true, .stuck = true });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    static char expect[16 * 1024];
    uint64_t t0 = vclock_now_ns();
    write_records(5, 100, expect, sizeof(expect));
    CHECK(port.dead);
    CHECK(vclock_now_ns() - t0 < 1100000000ull);    /* one bound, not one per record */
    CHECK(klog_lost_bytes() > 0);
}

/* ---- the screen -------------------------------------------------------------------- */

#define FB_PHYS 0xE0000000ull
static uint8_t vram[1024 * 1024];
static uint64_t vram_reads, vram_writes;
static uint64_t fb_rd(void *ctx, uint64_t off, unsigned size)
{
    (void)ctx, (void)off, (void)size;
    vram_reads++;
    fake_fault("video memory read at +0x%llx: the console must draw from its RAM copy",
               (unsigned long long)off);
    return 0;
}
static void fb_wr(void *ctx, uint64_t off, unsigned size, uint64_t v)
{
    (void)ctx;
    vram_writes++;
    if (off + size <= sizeof(vram))
        memcpy(vram + off, &v, size);
}
static const struct fake_io_ops fb_ops = { fb_rd, fb_wr };
static void *fb_map(uint64_t phys, uint64_t bytes)
{
    (void)bytes;
    return (void *)(uintptr_t)phys;
}

static void screen(const struct fb_info *fb)
{
    fake_reset();
    memset(vram, 0xEE, sizeof(vram));
    vram_reads = vram_writes = 0;
    REQUIRE(fake_mmio_register(FB_PHYS, sizeof(vram), &fb_ops, NULL) == 0);
    REQUIRE(fbcon_init(fb, fb_map) == 0);
}

static char ega_char(uint32_t col, uint32_t row)
{
    return (char)vram[row * 160 + col * 2];
}

TEST(fbcon_scrolls_an_ega_screen_without_reading_it)
{
    struct fb_info fb = { .kind = FB_EGA_TEXT, .phys = FB_PHYS, .pitch = 160, .width = 80,
                          .height = 25 };
    screen(&fb);
    char line[32];
    for (int i = 0; i < 100; i++) {
        int n = snprintf(line, sizeof(line), "line %d\n", i);
        fbcon_write(line, (unsigned long)n);
        if (i % 7 == 0)
            fbcon_flush();
    }
    fbcon_flush();
    CHECK_EQ_U64(vram_reads, 0);
    CHECK(fbcon_stats()->scrolls >= 75);
    /* the last line written sits above the cursor's empty bottom row */
    CHECK(ega_char(0, 23) == 'l' && ega_char(5, 23) == '9' && ega_char(6, 23) == '9');
    CHECK(ega_char(5, 0) == '7' && ega_char(6, 0) == '6');   /* "line 76" at the top */
    CHECK(ega_char(0, 24) == ' ');
    uint64_t bytes;
    uint64_t cyc = fbcon_redraw_all(&bytes);
    CHECK_EQ_U64(bytes, 80 * 25 * 2);
    CHECK(cyc > 0);
    CHECK_EQ_U64(vram_reads, 0);
}

TEST(fbcon_scrolls_an_rgb_screen_without_reading_it)
{
    struct fb_info fb = { .kind = FB_RGB, .phys = FB_PHYS, .pitch = 256 * 4, .width = 256,
                          .height = 128, .bpp = 32, .red_pos = 16, .red_size = 8,
                          .green_pos = 8, .green_size = 8, .blue_pos = 0, .blue_size = 8 };
    screen(&fb);
    for (int i = 0; i < 40; i++)
        fbcon_write("a line of text that wraps past thirty-two columns\n", 50);
    fbcon_flush();
    CHECK_EQ_U64(vram_reads, 0);
    CHECK(vram_writes > 0);
    CHECK(fbcon_stats()->scrolls > 0);
}

/* The 8x16 font is 1.4 mm tall on a 15.6" 4K panel: text scales with the panel's rows. */
TEST(fbcon_text_scale_keeps_a_row_3_mm_tall_on_dense_panels)
{
    static const struct { uint32_t w, h, scale, dpi; } cases[] = {
        { 640, 480, 1, 135 },   { 800, 600, 1, 135 },   { 1024, 768, 1, 135 },
        { 1366, 768, 1, 135 },  { 1280, 800, 1, 135 },  { 1280, 1024, 2, 166 },
        { 1920, 1080, 2, 166 }, { 1920, 1200, 2, 166 }, { 2560, 1440, 2, 226 },
        { 2560, 1600, 2, 226 }, { 3840, 2160, 3, 282 }, { 7680, 4320, 3, 282 },
    };
    for (unsigned i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        unsigned s = fbcon_scale_for(cases[i].w, cases[i].h);
        CHECK_EQ_U64(s, cases[i].scale);
        /* the claim itself: 16 * s pixels at the tier's densest panel are >= 3 mm */
        CHECK(16u * s * 25400u >= 3000u * cases[i].dpi);
        CHECK(cases[i].w / (8 * s) >= 80);
    }
    CHECK_EQ_U64(fbcon_scale_for(1024, 1280), 1);   /* a portrait panel keeps 80 columns */
    CHECK_EQ_U64(fbcon_scale_for(10, 10), 1);
}

TEST(fbcon_draws_each_font_pixel_as_a_square_when_scaled)
{
    /* 1280x1024 at 16 bpp: scale 2, cells of 16x32 pixels, 80x32 of them */
    struct fb_info fb = { .kind = FB_RGB, .phys = FB_PHYS, .pitch = 1280 * 2, .width = 1280,
                          .height = 1024, .bpp = 16, .red_pos = 11, .red_size = 5,
                          .green_pos = 5, .green_size = 6, .blue_pos = 0, .blue_size = 5 };
    screen(&fb);
    uint32_t cw, ch, cols, rows;
    fbcon_cell(&cw, &ch);
    fbcon_describe(&cols, &rows);
    CHECK(cw == 16 && ch == 32 && cols == 80 && rows == 32);
    fbcon_write("H", 1);
    fbcon_flush();
    const uint8_t *g = &font8x16['H' * 16];
    unsigned lit = 0, wrong = 0;
    for (uint32_t y = 0; y < 32; y++) {
        for (uint32_t x = 0; x < 16; x++) {
            uint16_t px;
            memcpy(&px, vram + y * fb.pitch + x * 2, 2);
            bool want = g[y / 2] & (0x80 >> (x / 2));
            lit += px != 0;
            wrong += (px != 0) != want;
        }
    }
    CHECK_EQ_U64(wrong, 0);
    CHECK(lit > 0 && lit % 4 == 0);     /* every lit font pixel is 2x2 on the screen */
    CHECK_EQ_U64(vram_reads, 0);
}

TEST(log_drains_the_screen_row_by_row_with_interrupts_on)
{
    struct fb_info fb = { .kind = FB_EGA_TEXT, .phys = FB_PHYS, .pitch = 160, .width = 80,
                          .height = 25 };
    screen(&fb);
    fake_uart_attach(FAKE_UART_COM1, (struct fake_uart_opts){ .fifo = true, .byte_ns = 1000 });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    for (int i = 0; i < 60; i++) {
        const char *p = "text for both consoles\n";
        size_t l = strlen(p);
        klog_write(KLOG_SERIAL | KLOG_SCREEN, &p, &l, 1, false);
    }
    CHECK_EQ_U64(vram_reads, 0);
    CHECK(ega_char(0, 23) == 't');
    fake_run_for_ns(1000000);
    size_t len;
    fake_uart_output(&len);
    CHECK_EQ_U64(len, 60 * 23);
}

TEST(log_says_on_the_screen_when_the_serial_port_dies)
{
    struct fb_info fb = { .kind = FB_EGA_TEXT, .phys = FB_PHYS, .pitch = 160, .width = 80,
                          .height = 25 };
    screen(&fb);
    fake_uart_attach(FAKE_UART_COM1, (struct fake_uart_opts){ .fifo = true, .stuck = true });
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    klog_init(&port);
    klog_start(true);
    irq_enable();
    const char *p = "a record\n";
    size_t l = strlen(p);
    klog_write(KLOG_SERIAL, &p, &l, 1, true);
    klog_drain_point();
    CHECK(port.dead);
    bool said = false;
    for (uint32_t r = 0; r < 25; r++) {
        char row[81];
        for (uint32_t c = 0; c < 80; c++)
            row[c] = ega_char(c, r);
        row[80] = 0;
        said |= strstr(row, "serial port stopped draining") != NULL;
    }
    CHECK(said);
    CHECK_EQ_U64(vram_reads, 0);
}

/* ---- UARTs elsewhere than COM1: memory-mapped registers, other clocks -------- */

#define MMIO_UART 0xFE030000ull

static bool wire_says(const char *msg)
{
    size_t len;
    const char *out = fake_uart_output(&len);
    return len == strlen(msg) && !memcmp(out, msg, len);
}

TEST(uart_mmio_stride4_dword_access_probes_and_writes)
{
    fake_reset();
    fake_uart_attach_mmio(MMIO_UART, 4, 4, (struct fake_uart_opts){ .fifo = true });
    const struct uart_regs r = { .space = UART_SPACE_MMIO, .addr = MMIO_UART,
                                 .mapped = (uintptr_t)MMIO_UART, .stride = 4, .access_bytes = 4 };
    REQUIRE(uart_init_regs(&port, &r, 0, 115200) == 0);
    CHECK_EQ_U64(port.fifo_bytes, 16);
    CHECK_EQ_U64(port.base, 0);
    uart_write(&port, "mmio\n", 5);
    fake_run_for_ns(100 * BYTE_NS_115200);
    CHECK(wire_says("mmio\n"));
    CHECK_EQ_U64(fake_uart_divisor(), 1);
}

TEST(uart_mmio_stride1_byte_access)
{
    fake_reset();
    fake_uart_attach_mmio(MMIO_UART, 1, 1, (struct fake_uart_opts){ .fifo = true });
    const struct uart_regs r = { .space = UART_SPACE_MMIO, .addr = MMIO_UART,
                                 .mapped = (uintptr_t)MMIO_UART, .stride = 1, .access_bytes = 1 };
    REQUIRE(uart_init_regs(&port, &r, 0, 57600) == 0);
    CHECK_EQ_U64(fake_uart_divisor(), 2);
    uart_write(&port, "b\n", 2);
    fake_run_for_ns(100 * BYTE_NS_115200);
    CHECK(wire_says("b\n"));
}

TEST(uart_mmio_nothing_there_is_enodev_and_bad_layouts_einval)
{
    fake_reset();                     /* unmapped MMIO reads all ones */
    struct uart_regs r = { .space = UART_SPACE_MMIO, .addr = MMIO_UART,
                           .mapped = (uintptr_t)MMIO_UART, .stride = 4, .access_bytes = 1 };
    CHECK_EQ_I64(uart_init_regs(&port, &r, 0, 115200), -ENODEV);
    CHECK(!port.present);
    r.stride = 2;
    CHECK_EQ_I64(uart_init_regs(&port, &r, 0, 115200), -EINVAL);
    r.stride = 1, r.access_bytes = 4;          /* dword registers one byte apart */
    CHECK_EQ_I64(uart_init_regs(&port, &r, 0, 115200), -EINVAL);
    r = (struct uart_regs){ .space = UART_SPACE_IO, .addr = 0x2F8, .stride = 1, .access_bytes = 4 };
    CHECK_EQ_I64(uart_init_regs(&port, &r, 0, 115200), -EINVAL);   /* I/O: bytes only */
    CHECK_EQ_U64(fake_stats.unknown_port_writes, 0);
}

TEST(uart_divisor_from_other_clocks)
{
    CHECK_EQ_U64(uart_divisor(1843200, 115200), 1);
    CHECK_EQ_U64(uart_divisor(1843200, 9600), 12);
    CHECK_EQ_U64(uart_divisor(14745600, 115200), 8);     /* a PCI card's 8x crystal */
    CHECK_EQ_U64(uart_divisor(48000000, 115200), 26);    /* 115384.6 baud: 0.16 % off */
    CHECK_EQ_U64(uart_divisor(1843200, 100000), 0);      /* 115200 or 57600: 15 % off */
    CHECK_EQ_U64(uart_divisor(1843200, 230400), 0);      /* above clock / 16 */
    CHECK_EQ_U64(uart_divisor(1843200, 1), 0);           /* over 16 bits */
    CHECK_EQ_U64(uart_divisor(0, 115200), 0);
}

TEST(uart_other_clock_programs_its_divisor_and_paces_right)
{
    fake_reset();
    fake_uart_attach(FAKE_UART_COM1, (struct fake_uart_opts){ .fifo = true,
                                                              .clock_hz = 14745600 });
    const struct uart_regs r = { .space = UART_SPACE_IO, .addr = FAKE_UART_COM1, .stride = 1,
                                 .access_bytes = 1 };
    REQUIRE(uart_init_regs(&port, &r, 14745600, 115200) == 0);
    CHECK_EQ_U64(fake_uart_divisor(), 8);
    CHECK(fake_uart_byte_ns() + 1 >= BYTE_NS_115200 && fake_uart_byte_ns() <= BYTE_NS_115200);
    CHECK_EQ_U64(port.clock_hz, 14745600);
}

TEST(uart_baud_zero_keeps_the_firmware_divisor)
{
    fake_reset();
    fake_uart_attach(FAKE_UART_COM1, (struct fake_uart_opts){ .fifo = true });
    fake_uart_set_divisor(12);                  /* the firmware's 9600 */
    const struct uart_regs r = { .space = UART_SPACE_IO, .addr = FAKE_UART_COM1, .stride = 1,
                                 .access_bytes = 1 };
    REQUIRE(uart_init_regs(&port, &r, 0, 0) == 0);
    CHECK_EQ_U64(fake_uart_divisor(), 12);
    CHECK_EQ_U64(port.baud, 9600);
}

/* ---- several ports at once: every port gets every byte, in order ------------- */

static struct uart second;

/* COM1 at 115200, and a memory-mapped UART (stride 4) at 57600: the slower one decides. */
static void two_ports(bool second_stuck)
{
    machine((struct fake_uart_opts){ .fifo = true, .byte_ns = BYTE_NS_115200 });
    fake_uart_select(1);
    fake_uart_attach_mmio(MMIO_UART, 4, 0, (struct fake_uart_opts){ .fifo = true,
                                                                   .stuck = second_stuck });
    fake_uart_select(0);
    const struct uart_regs r = { .space = UART_SPACE_MMIO, .addr = MMIO_UART,
                                 .mapped = (uintptr_t)MMIO_UART, .stride = 4, .access_bytes = 1 };
    REQUIRE(uart_init(&port, FAKE_UART_COM1, 115200) == 0);
    REQUIRE(uart_init_regs(&second, &r, 0, 57600) == 0);
    klog_init(&port);
    REQUIRE(klog_add_serial(&second) == 0);
    klog_start(true);
    irq_enable();
}

static bool unit_says(unsigned unit, const char *expect, size_t n)
{
    size_t len;
    fake_uart_select(unit);
    const char *out = fake_uart_output(&len);
    bool same = len == n && !memcmp(out, expect, n);
    fake_uart_select(0);
    return same;
}

TEST(log_writes_every_port_in_order_and_waits_for_windows)
{
    static char expect[64 * 1024];
    two_ports(false);
    klog_window_begin();
    size_t n = write_records(10, 300, expect, sizeof(expect));
    fake_run_for_ns(100 * FIFO_NS_115200);
    CHECK(unit_says(0, "", 0));                /* nothing on either while the window is open */
    CHECK(unit_says(1, "", 0));
    klog_window_end();
    fake_run_for_ns(40 * FIFO_NS_115200);
    CHECK(unit_says(0, expect, n));
    CHECK(unit_says(1, expect, n));
    CHECK_EQ_U64(fake_uart_overruns(), 0);
    fake_uart_select(1);
    CHECK_EQ_U64(fake_uart_overruns(), 0);
    fake_uart_select(0);
    struct klog_stats st = klog_stats_take();
    CHECK_EQ_U64(st.in_window_cyc, 0);
    CHECK_EQ_U64(st.serial_bytes, 2 * n);
    CHECK(st.irqoff_max_cyc * 1000000000ull / fake_tsc_hz() < FIFO_NS_115200);
}

TEST(log_port_that_dies_is_dropped_alone)
{
    static char expect[16 * 1024];
    two_ports(true);
    size_t n = write_records(5, 100, expect, sizeof(expect));
    fake_run_for_ns(20 * FIFO_NS_115200);
    klog_flush();
    CHECK(second.dead);
    CHECK(!port.dead);
    CHECK(unit_says(0, expect, n));            /* COM1 has everything */
    CHECK(klog_lost_bytes() > 0);              /* the dead one's share, counted */
}
