/* kernel/report/qrscreen.c - see qrscreen.h. */
#include "kernel/report/qrscreen.h"

#include <stdarg.h>

#include "kernel/console/fbcon.h"
#include "kernel/report/console.h"
#include "kernel/report/record.h"
#include "kernel/report/recstore.h"
#include "ticklab/clocksource.h"
#include "ticklab/timekeeping.h"
#include "ticklab/crc32.h"
#include "ticklab/deflate.h"
#include "ticklab/fmt.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"
#include "ticklab/qrcode.h"

#define ARENA_MAX   (8u << 20)  /* store + stream + state: a full profile's records fit */
#define ARENA_MIN   (1u << 20)
#define TEXT_ROWS   3           /* above the code: part k of n and the run id, the verdict,
                                   and a dark row, so no text touches the code's light
                                   square (decode finds the code as that square) */
#define QUIET       4           /* modules of light margin the standard asks for */
#define VERDICT_MAX 160
/* The keyboard controller (i8042), polled for the key that ends the summary's hold: a
 * USB keyboard reaches it only through the firmware's legacy emulation; HOLD_MS ends the
 * hold without one. A port that reads 0xFF has no controller behind it. */
#define KBC_DATA    0x60
#define KBC_STATUS  0x64
#define KBC_FULL    0x01        /* a byte waits in the output buffer */
#define KBC_AUX     0x20        /* ... and it is the mouse's */
#define KBC_RELEASE 0x80        /* scan code set 1 (translated): a key let go, an ACK */
/* The full profile's raw samples (the `samples` records, 1.16 of its 1.31 MB
 * under TCG) are numbers that compress about 2:1: 300 codes; without them 12. */
#define QR_MANY_PARTS 30
#define INTRO_PARTS 2           /* the instructions page stays twice as long as a code */
#define CLOCK_EVERY 256         /* NOP blocks between clock reads: a read may be slow I/O */
/* Without a calibrated clock each wait is this many pause loops instead (said on screen). */
#define SPIN_PER_MS 100000u     /* NOP blocks: about 1 ms at 3 GHz; no better without a clock */

static struct {
    enum qr_mode mode;
    uint32_t part_ms;
    struct deflate_state *zstate;
    struct qr_code *code;
    uint8_t *z;
    size_t zcap;
    bool closed, codes, ega_note;
    const char *why;             /* why no codes are shown */
    char verdict[VERDICT_MAX];   /* one line, on every page */
    uint64_t tsc_hz;             /* 0: unknown */
} qs;

static uint8_t part[QR_PART_HEAD + 3000];

void qrscreen_setup(void *arena, size_t len, const char *why, enum qr_mode mode,
                    uint32_t part_ms)
{
    qs.mode = mode;
    qs.part_ms = part_ms;
    if (mode == QR_MODE_OFF) {
        recstore_init(0, 0, "qr=off");
        return;
    }
    if (!arena || len < ARENA_MIN) {
        recstore_init(0, 0, arena ? "no 1 MiB of free RAM above 16 MiB" : why);
        return;
    }
    if (len > ARENA_MAX)
        len = ARENA_MAX;
    uint8_t *p = arena;
    qs.zstate = (struct deflate_state *)p;
    p += (sizeof(struct deflate_state) + 63) & ~(size_t)63;
    qs.code = (struct qr_code *)p;
    p += (sizeof(struct qr_code) + 63) & ~(size_t)63;
    size_t rest = len - (size_t)(p - (uint8_t *)arena);
    qs.zcap = rest / 5;          /* records compress 5-7:1; a worse stream is too many codes */
    qs.z = p;
    recstore_init(p + qs.zcap, rest - qs.zcap, 0);
}

void qrscreen_caption(const char *verdict_line, uint64_t tsc_hz)
{
    k_strlcpy(qs.verdict, verdict_line ? verdict_line : "", sizeof(qs.verdict));
    qs.tsc_hz = tsc_hz;
}

void qrscreen_closing(bool leaves)
{
    uint32_t w, h;
    enum fb_kind kind = fbcon_screen(&w, &h);
    struct recstore_info si;
    recstore_get(&si);
    qs.closed = true;
    qs.codes = qs.ega_note = false;
    if (qs.mode == QR_MODE_OFF)
        qs.why = "qr=off";
    else if (!si.cap)
        qs.why = si.off_reason ? si.off_reason : "no record store";
    else if (qs.mode == QR_MODE_AUTO && leaves)
        qs.why = "the run ends by exiting QEMU or rebooting (qr=on shows them anyway)";
    else if (kind == FB_RGB)
        qs.codes = true;
    else if (kind == FB_EGA_TEXT)
        qs.ega_note = true, qs.why = "a text screen (EGA 80x25) cannot draw them";
    else
        qs.why = "no screen";
    recstore_closing();
    struct rec r;
    rec_begin(&r, "qr_store");
    json_str(&r.j, "mode", qs.mode == QR_MODE_ON ? "on" : qs.mode == QR_MODE_OFF ? "off" : "auto");
    json_bool(&r.j, "codes", qs.codes);
    if (!qs.codes)
        json_str(&r.j, "reason", qs.why);
    json_u64(&r.j, "capacity_bytes", si.cap);
    json_u64(&r.j, "bytes", si.bytes);
    json_u64(&r.j, "records", si.records);
    json_u64(&r.j, "dropped", si.dropped);
    json_bool(&r.j, "complete", si.cap && !si.dropped);
    json_u64(&r.j, "part_ms", qs.part_ms);
    rec_emit(&r);
}

/* ---- drawing ---------------------------------------------------------------------------- */

static void screen_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void screen_line(const char *fmt, ...)
{
    char buf[160];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    fbcon_write(buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
    fbcon_write("\n", 1);
}

static void serial_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void serial_line(const char *fmt, ...)
{
    char buf[200];
    va_list ap;
    va_start(ap, fmt);
    int n = fmt_vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    con_write(CON_SERIAL, buf, n < 0 ? 0 : (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void wait_ms(uint32_t ms)
{
    if (clocksource_current()) {
        uint64_t t0 = time_ns(), span = (uint64_t)ms * 1000000u;
        /* bounded also by a count, in case the clock stops: 2^40 NOP blocks are hours */
        for (uint64_t i = 0; time_ns() - t0 < span && i < (1ull << 40); i += CLOCK_EVERY)
            for (unsigned k = 0; k < CLOCK_EVERY; k++)
                cpu_nop_block();     /* not PAUSE: under QEMU TCG it leaves translated code */
        return;
    }
    for (uint64_t i = 0; i < (uint64_t)ms * SPIN_PER_MS; i++)
        cpu_nop_block();
}

struct plan {
    unsigned version, px, parts;
    size_t chunk;                 /* stream bytes per part (the last may hold fewer) */
    uint32_t run_id, records_crc;
    size_t zlen;
    bool partial;
};

static unsigned side_px(unsigned version, uint32_t room)
{
    return room / (17 + 4 * version + 2 * QUIET);
}

static uint32_t text_h(void)
{
    uint32_t cw, ch;
    fbcon_cell(&cw, &ch);
    return TEXT_ROWS * ch;
}

static bool make_plan(struct plan *pl, uint32_t w, uint32_t h)
{
    uint32_t room = h > text_h() ? h - text_h() : 0;
    room = w < room ? w : room;
    unsigned vmax = QR_VERSION_PHOTO;
    while (vmax && side_px(vmax, room) < QR_MODULE_PX)
        vmax--;
    if (!vmax)
        return false;
    size_t per = qr_byte_capacity(vmax, QR_ECC_M) - QR_PART_HEAD - QR_PART_TAIL;
    pl->parts = (unsigned)((pl->zlen + per - 1) / per);
    if (!pl->parts)
        pl->parts = 1;
    pl->version = vmax;
    for (unsigned v = 1; v < vmax; v++) {   /* the smallest as few parts fit: bigger modules */
        size_t c = qr_byte_capacity(v, QR_ECC_M);
        if (c <= QR_PART_HEAD + QR_PART_TAIL)
            continue;
        if ((size_t)pl->parts * (c - QR_PART_HEAD - QR_PART_TAIL) >= pl->zlen) {
            pl->version = v;
            break;
        }
    }
    pl->chunk = (pl->zlen + pl->parts - 1) / pl->parts;
    pl->px = side_px(pl->version, room);
    return pl->parts <= 0xFFFF;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

/* Part k (1-based): header, slice, CRC. Returns its length. */
static size_t build_part(const struct plan *pl, unsigned k)
{
    size_t off = (size_t)(k - 1) * pl->chunk;
    size_t n = pl->zlen - off < pl->chunk ? pl->zlen - off : pl->chunk;
    part[0] = 'T';
    part[1] = 'Q';
    part[2] = QR_FORMAT;
    part[3] = pl->partial ? 1 : 0;             /* flags: bit 0, records were dropped */
    put32(part + 4, pl->run_id);
    part[8] = (uint8_t)k, part[9] = (uint8_t)(k >> 8);
    part[10] = (uint8_t)pl->parts, part[11] = (uint8_t)(pl->parts >> 8);
    put32(part + 12, (uint32_t)off);
    put32(part + 16, (uint32_t)pl->zlen);
    put32(part + 20, pl->records_crc);
    memcpy(part + QR_PART_HEAD, qs.z + off, n);
    put32(part + QR_PART_HEAD + n, crc32_update(0, part, QR_PART_HEAD + n));
    return QR_PART_HEAD + n + QR_PART_TAIL;
}

/* The code centred below the text rows. The last code drawn is remembered: the next one of
 * the same version redraws only the modules that changed (about half; video memory is
 * slow, a whole 800x600 code is a million byte writes at 24 bpp). */
static void draw_code(const struct plan *pl, uint32_t w, uint32_t h, bool whole)
{
    static uint8_t prev[QR_SIZE_MAX * QR_SIZE_MAX];
    const struct qr_code *c = qs.code;
    uint32_t side = (c->size + 2 * QUIET) * pl->px;
    uint32_t top = text_h(), room = h - top;
    uint32_t x0 = (w - side) / 2, y0 = top + (room - side) / 2;
    if (whole) {
        fbcon_fill(x0, y0, side, side, true);
        memset(prev, 0, sizeof(prev));       /* all light */
    }
    for (unsigned y = 0; y < c->size; y++) {
        for (unsigned x = 0; x < c->size; x++) {
            uint8_t d = qr_dark(c, x, y);
            if (d == prev[y * c->size + x])
                continue;
            prev[y * c->size + x] = d;
            fbcon_fill(x0 + (QUIET + x) * pl->px, y0 + (QUIET + y) * pl->px, pl->px, pl->px,
                       !d);
        }
    }
}

static void intro_page(const struct plan *pl, const struct recstore_info *si, bool clocked)
{
    fbcon_clear();
    screen_line("ticklab: this run's records follow as %u QR code%s (run id %08x)", pl->parts,
                pl->parts == 1 ? "" : "s", pl->run_id);
    fbcon_write("\n", 1);
    screen_line("The run is over. Its records leave this PC as pictures: after this page come");
    screen_line("parts 1 to %u, each for %u.%u s, then this page again, until you switch it off.",
                pl->parts, qs.part_ms / 1000, qs.part_ms % 1000 / 100);
    fbcon_write("\n", 1);
    screen_line("1. Photograph every code with a phone: the whole code in the frame, square on,");
    screen_line("   no glare. Each says 'part k of %u'. Duplicates do no harm; a missing part is", pl->parts);
    screen_line("   named by the decoder, so photograph it on the next round.");
    screen_line("2. Copy the photos to a computer with ticklab and run");
    screen_line("       tools/ticklab decode PHOTO... -o run.log");
    screen_line("       tools/ticklab report run.log");
    fbcon_write("\n", 1);
    screen_line("Codes: version %u, error correction M (15 %%), %u px a module; %zu bytes of",
                pl->version, pl->px, pl->zlen);
    screen_line("zlib data hold the %zu bytes of %u records.", si->bytes, si->records);
    if (si->dropped)
        screen_line("WARNING: the record store was full: %u records are missing from the codes.",
                    si->dropped);
    if (pl->parts > QR_MANY_PARTS)
        screen_line("That is many photos: most of it is raw samples; boot with raw_samples=off "
                    "to need about a tenth.");
    if (!clocked)
        screen_line("(no calibrated clock: each page is timed by a count of NOP blocks)");
    fbcon_flush();
}

static void ega_note(void)
{
    fbcon_write("\n", 1);
    screen_line("The records can also leave as QR codes, but a text screen cannot draw them.");
    screen_line("Boot the stick under UEFI (the firmware's 'UEFI: <stick>' entry: GRUB then");
    screen_line("draws on the graphical screen), or use the EFI stick; docs/real-hardware.md.");
    fbcon_flush();
}

/* ---- the summary's hold ------------------------------------------------------------ */

static bool key_pressed(void)
{
    uint8_t st = inb(KBC_STATUS);
    if (st == 0xFF || !(st & KBC_FULL))
        return false;
    uint8_t b = inb(KBC_DATA);
    return !(st & KBC_AUX) && b < KBC_RELEASE;
}

static void countdown(uint32_t left_s)
{
    char buf[120];
    int n = fmt_snprintf(buf, sizeof(buf), "\rPress any key for the QR codes (they start by "
                         "themselves in %2u s). ", left_s);
    fbcon_write(buf, n < 0 ? 0 : (size_t)n);
    fbcon_flush();
}

/* The summary (already on the screen) stays until a key or HOLD_MS, the screen counting
 * down each second. Timed by time_ns() and, should that clock stop, by the TSC (or a
 * count of NOP blocks when neither is calibrated). Returns what ended it. */
static const char *hold_summary(uint64_t *held_ms)
{
    bool clocked = clocksource_current() != 0;
    uint64_t tsc_khz = qs.tsc_hz / 1000;
    for (unsigned i = 0; i < 16; i++) {   /* keys pressed during the run, firmware's bytes */
        uint8_t st = inb(KBC_STATUS);
        if (st == 0xFF || !(st & KBC_FULL))
            break;
        (void)inb(KBC_DATA);
    }
    fbcon_write("\n", 1);
    countdown(HOLD_MS / 1000);
    serial_line("qr: summary on screen until a key or %u s\n", HOLD_MS / 1000);
    uint64_t t0 = clocked ? time_ns() : 0, c0 = rdtsc(), spins = 0;
    uint64_t tsc_span = tsc_khz * HOLD_MS;
    uint64_t spin_span = (uint64_t)HOLD_MS * SPIN_PER_MS / CLOCK_EVERY;
    uint32_t shown_s = HOLD_MS / 1000;
    const char *why = 0;
    while (!why) {
        for (unsigned k = 0; k < CLOCK_EVERY; k++)
            cpu_nop_block();
        spins++;
        uint64_t ms = clocked ? (time_ns() - t0) / 1000000u
                      : tsc_khz ? (rdtsc() - c0) / tsc_khz : spins * HOLD_MS / spin_span;
        if (key_pressed())
            why = "a key";
        else if (ms >= HOLD_MS)
            why = "60 s passed";
        else if (tsc_span && rdtsc() - c0 >= tsc_span)
            why = "60 s passed (by the TSC)";
        else if (!clocked && !tsc_span && spins >= spin_span)
            why = "60 s passed (counted in NOP blocks)";
        *held_ms = ms;
        uint32_t left = ms >= HOLD_MS ? 0 : (uint32_t)((HOLD_MS - ms + 999) / 1000);
        if (!why && left != shown_s)
            countdown(shown_s = left);
    }
    return why;
}

void qrscreen_show(void)
{
    if (!qs.closed || (!qs.codes && !qs.ega_note))
        return;
    if (qs.ega_note) {
        ega_note();
        return;
    }
    uint64_t held_ms = 0;
    const char *ended = hold_summary(&held_ms);
    serial_line("qr: summary held %llu ms, until %s\n", (unsigned long long)held_ms, ended);
    struct recstore_info si;
    recstore_get(&si);
    uint32_t w, h;
    fbcon_screen(&w, &h);
    struct plan pl = { 0 };
    long z = zlib_compress(qs.zstate, si.data, si.bytes, qs.z, qs.zcap);
    if (z < 0) {
        fbcon_clear();
        screen_line("QR codes: the records (%zu bytes) do not compress into %zu bytes: too many "
                    "codes to photograph. Use a serial port.", si.bytes, qs.zcap);
        fbcon_flush();
        serial_line("qr: no codes: the compressed records exceed %zu bytes\n", qs.zcap);
        return;
    }
    pl.zlen = (size_t)z;
    pl.partial = si.dropped != 0;
    pl.records_crc = crc32_update(0, si.data, si.bytes);
    uint64_t t = rdtsc();
    pl.run_id = crc32_update(pl.records_crc, &t, sizeof(t));
    if (!make_plan(&pl, w, h)) {
        fbcon_clear();
        screen_line("QR codes: this screen (%ux%u) is too small for them.", w, h);
        fbcon_flush();
        return;
    }
    bool clocked = clocksource_current() != 0;
    serial_line("qr: %u parts, version %u level M, %u px a module, run id %08x, %zu bytes of "
                "zlib data for %zu bytes of records\n", pl.parts, pl.version, pl.px, pl.run_id,
                pl.zlen, si.bytes);
    for (unsigned round = 0;; round++) {
        intro_page(&pl, &si, clocked);
        if (!round)
            serial_line("qr: instructions on screen\n");
        wait_ms(qs.part_ms * INTRO_PARTS);
        for (unsigned k = 1; k <= pl.parts; k++) {
            size_t n = build_part(&pl, k);
            if (qr_encode(qs.code, part, n, pl.version, QR_ECC_M, -1))
                continue;                    /* cannot happen: the plan fits the capacity */
            if (k == 1)
                fbcon_clear();               /* the instructions go; later, only row 0 */
            else
                fbcon_home();
            screen_line("ticklab part %u of %u   run %08x   (photograph each; then "
                        "tools/ticklab decode)", k, pl.parts, pl.run_id);
            screen_line("%s", qs.verdict);
            fbcon_flush();
            draw_code(&pl, w, h, k == 1);
            if (!round)
                serial_line("qr: part %u of %u on screen\n", k, pl.parts);
            wait_ms(qs.part_ms);
        }
    }
}
