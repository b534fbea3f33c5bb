/* kernel/console/fbcon.c - see fbcon.h. */
#include "kernel/console/fbcon.h"

#include "ticklab/errno.h"
#include "ticklab/io.h"
#include "ticklab/kstring.h"

#include "font8x16.h"   /* generated from a system bitmap font by the Makefile */

#define GLYPH_W 8
#define GLYPH_H 16
#define EGA_ATTR 0x07   /* light grey on black */
#define SHOWN_UNKNOWN 0 /* never a character of the text (control bytes are drawn as '?') */

static struct {
    struct fb_info fb;
    uintptr_t base;
    uint32_t scale;               /* screen pixels per font pixel, each way */
    uint32_t cols, rows, cx, cy;
    uint32_t top;                 /* the text row shown on the screen's first row */
    uint32_t fg;
    bool active;
    struct fbcon_stats st;
} con;

static uint8_t text[FBCON_MAX_CELLS];    /* text row t at text[t * cols] */
static uint8_t shown[FBCON_MAX_CELLS];   /* screen row r at shown[r * cols] */
static bool dirty[FBCON_MAX_ROWS];       /* screen rows that may show the wrong text */
static uint32_t first_dirty;             /* no row above it is dirty */

static uint32_t rgb_pixel(uint8_t r, uint8_t g, uint8_t b)
{
    const struct fb_info *f = &con.fb;
    return ((uint32_t)(r >> (8 - f->red_size)) << f->red_pos) |
           ((uint32_t)(g >> (8 - f->green_size)) << f->green_pos) |
           ((uint32_t)(b >> (8 - f->blue_size)) << f->blue_pos);
}

static void put_pixel(uintptr_t row, uint32_t x, uint32_t px)
{
    switch (con.fb.bpp) {
    case 32: mmio_write32(row + x * 4, px); break;
    case 24:
        mmio_write8(row + x * 3, px & 0xFF);
        mmio_write8(row + x * 3 + 1, (px >> 8) & 0xFF);
        mmio_write8(row + x * 3 + 2, (px >> 16) & 0xFF);
        break;
    default: mmio_write16(row + x * 2, (uint16_t)px); break;
    }
}

static unsigned glyph_bytes(void)
{
    return con.fb.kind == FB_EGA_TEXT ? 2 : GLYPH_W * GLYPH_H * con.scale * con.scale *
                                            ((con.fb.bpp + 7) / 8);
}

static void draw_glyph(uint32_t col, uint32_t row, unsigned char ch)
{
    if (con.fb.kind == FB_EGA_TEXT) {
        mmio_write16(con.base + row * con.fb.pitch + col * 2, (uint16_t)(EGA_ATTR << 8 | ch));
        return;
    }
    const uint8_t *g = &font8x16[(ch & 0x7F) * GLYPH_H];
    uint32_t s = con.scale, x0 = col * GLYPH_W * s, y0 = row * GLYPH_H * s;
    for (uint32_t y = 0; y < GLYPH_H * s; y++) {
        uintptr_t line = con.base + (uintptr_t)(y0 + y) * con.fb.pitch;
        uint8_t bits = g[y / s];
        for (uint32_t x = 0; x < GLYPH_W * s; x++)
            put_pixel(line, x0 + x, (bits & (0x80 >> (x / s))) ? con.fg : 0);
    }
}

/* Height tiers (rows of pixels) and the densest panel each is sold as, in pixels per inch
 * (fbcon.h says which panels). */
static const struct { uint32_t max_h, dpi; } DENSEST[] = {
    { 800, 135 }, { 1200, 166 }, { 1600, 226 }, { 0xFFFFFFFFu, 282 },
};
#define MIN_TEXT_UM  3000   /* a text row at least 3 mm tall */
#define UM_PER_INCH  25400
#define MIN_COLS     80

unsigned fbcon_scale_for(uint32_t width, uint32_t height)
{
    if (width < 64 || height < 32)
        return 1;
    uint32_t dpi = DENSEST[0].dpi;
    for (unsigned i = 0; i < sizeof(DENSEST) / sizeof(DENSEST[0]); i++) {
        if (height <= DENSEST[i].max_h) {
            dpi = DENSEST[i].dpi;
            break;
        }
    }
    /* the smallest s with GLYPH_H * s pixels >= 3 mm at dpi: s >= 3 mm * dpi / 16 px */
    uint32_t s = (MIN_TEXT_UM * dpi + GLYPH_H * UM_PER_INCH - 1) / (GLYPH_H * UM_PER_INCH);
    while (s > 1 && width / (GLYPH_W * s) < MIN_COLS)
        s--;
    return s ? s : 1;
}

static uint8_t *text_row(uint32_t screen_row)
{
    return &text[((con.top + screen_row) % con.rows) * con.cols];
}

static void mark_dirty(uint32_t screen_row)
{
    dirty[screen_row] = true;
    if (screen_row < first_dirty)
        first_dirty = screen_row;
}

/* The text moves up a row: the ring turns, the new bottom row is blank, and every screen
 * row now owes its new text. Nothing is copied. */
static void scroll(void)
{
    con.top = (con.top + 1) % con.rows;
    memset(text_row(con.rows - 1), ' ', con.cols);
    for (uint32_t r = 0; r < con.rows; r++)
        mark_dirty(r);
    con.cy = con.rows - 1;
    con.st.scrolls++;
}

static bool layout_ok(const struct fb_info *f)
{
    if (f->kind == FB_EGA_TEXT)
        return f->width >= 20 && f->height >= 5 && f->pitch >= f->width * 2;
    if (f->kind != FB_RGB || f->width < 64 || f->height < 32)
        return false;
    if (f->bpp != 15 && f->bpp != 16 && f->bpp != 24 && f->bpp != 32)
        return false;
    if (f->red_size == 0 || f->red_size > 8 || f->green_size == 0 || f->green_size > 8 ||
        f->blue_size == 0 || f->blue_size > 8)
        return false;
    return f->pitch >= f->width * ((f->bpp + 7) / 8);
}

int fbcon_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes))
{
    con.active = false;
    if (!layout_ok(fb))
        return -EINVAL;
    uint64_t bytes = (uint64_t)fb->pitch * fb->height;
    void *base = map(fb->phys, bytes);
    if (!base)
        return -ENOMEM;
    con.base = (uintptr_t)base;
    con.fb = *fb;
    con.scale = fb->kind == FB_RGB ? fbcon_scale_for(fb->width, fb->height) : 1;
    con.cols = fb->kind == FB_RGB ? fb->width / (GLYPH_W * con.scale) : fb->width;
    con.rows = fb->kind == FB_RGB ? fb->height / (GLYPH_H * con.scale) : fb->height;
    if (con.cols > FBCON_MAX_COLS)
        con.cols = FBCON_MAX_COLS;
    if (con.rows > FBCON_MAX_ROWS)
        con.rows = FBCON_MAX_ROWS;
    if (con.cols * con.rows > FBCON_MAX_CELLS)
        con.rows = FBCON_MAX_CELLS / con.cols;
    con.cx = con.cy = con.top = 0;
    con.fg = fb->kind == FB_RGB ? rgb_pixel(0xC0, 0xC0, 0xC0) : 0;
    con.st = (struct fbcon_stats){ 0 };
    memset(text, ' ', (size_t)con.cols * con.rows);
    memset(shown, SHOWN_UNKNOWN, (size_t)con.cols * con.rows);
    first_dirty = con.rows;
    for (uint32_t r = 0; r < con.rows; r++)
        mark_dirty(r);
    con.active = true;
    fbcon_flush();                       /* whatever the firmware left is cleared */
    return 0;
}

bool fbcon_active(void)
{
    return con.active;
}

void fbcon_cell(uint32_t *width, uint32_t *height)
{
    bool rgb = con.active && con.fb.kind == FB_RGB;
    *width = !con.active ? 0 : rgb ? GLYPH_W * con.scale : 1;
    *height = !con.active ? 0 : rgb ? GLYPH_H * con.scale : 1;
}

void fbcon_describe(uint32_t *cols, uint32_t *rows)
{
    *cols = con.active ? con.cols : 0;
    *rows = con.active ? con.rows : 0;
}

enum fb_kind fbcon_screen(uint32_t *width, uint32_t *height)
{
    *width = con.active ? con.fb.width : 0;
    *height = con.active ? con.fb.height : 0;
    return con.active ? con.fb.kind : FB_NONE;
}

void fbcon_fill(uint32_t x, uint32_t y, uint32_t w, uint32_t h, bool white)
{
    if (!con.active || con.fb.kind != FB_RGB || x >= con.fb.width || y >= con.fb.height)
        return;
    uint32_t px = white ? rgb_pixel(0xFF, 0xFF, 0xFF) : 0;
    uint32_t x_end = w > con.fb.width - x ? con.fb.width : x + w;
    uint32_t y_end = h > con.fb.height - y ? con.fb.height : y + h;
    for (uint32_t r = y; r < y_end; r++) {
        uintptr_t line = con.base + (uintptr_t)r * con.fb.pitch;
        for (uint32_t c = x; c < x_end; c++)
            put_pixel(line, c, px);
    }
}

void fbcon_clear(void)
{
    if (!con.active)
        return;
    con.cx = con.cy = con.top = 0;
    memset(text, ' ', (size_t)con.cols * con.rows);
    memset(shown, SHOWN_UNKNOWN, (size_t)con.cols * con.rows);
    for (uint32_t r = 0; r < con.rows; r++)
        mark_dirty(r);
}

void fbcon_home(void)
{
    con.cx = con.cy = 0;
}

const struct fbcon_stats *fbcon_stats(void)
{
    return &con.st;
}

void fbcon_write(const char *s, unsigned long n)
{
    if (!con.active)
        return;
    for (unsigned long i = 0; i < n; i++) {
        unsigned char ch = (unsigned char)s[i];
        if (ch == '\n') {
            con.cx = 0;
            con.cy++;
        } else if (ch == '\r') {
            con.cx = 0;
        } else {
            if (con.cx == con.cols) {
                con.cx = 0;
                con.cy++;
            }
            if (con.cy >= con.rows)
                scroll();
            text_row(con.cy)[con.cx++] = ch < 0x20 || ch > 0x7E ? '?' : ch;
            mark_dirty(con.cy);
            continue;
        }
        if (con.cy >= con.rows)
            scroll();
    }
}

static void draw_row(uint32_t r)
{
    const uint8_t *want = text_row(r);
    uint8_t *have = &shown[r * con.cols];
    for (uint32_t c = 0; c < con.cols; c++) {
        if (have[c] == want[c])
            continue;
        draw_glyph(c, r, want[c]);
        have[c] = want[c];
        con.st.cells_drawn++;
        con.st.bytes_written += glyph_bytes();
    }
    con.st.rows_drawn++;
}

bool fbcon_flush_row(void)
{
    if (!con.active)
        return false;
    while (first_dirty < con.rows && !dirty[first_dirty])
        first_dirty++;
    if (first_dirty >= con.rows)
        return false;
    uint32_t r = first_dirty;
    dirty[r] = false;
    uint64_t t0 = rdtsc();
    draw_row(r);
    uint64_t d = rdtsc() - t0;
    con.st.draw_cyc += d;
    if (d > con.st.row_max_cyc)
        con.st.row_max_cyc = d;
    return true;
}

void fbcon_flush(void)
{
    while (fbcon_flush_row())
        ;
}

uint64_t fbcon_redraw_all(uint64_t *bytes)
{
    *bytes = 0;
    if (!con.active)
        return 0;
    fbcon_flush();
    uint64_t b0 = con.st.bytes_written;
    memset(shown, SHOWN_UNKNOWN, (size_t)con.cols * con.rows);
    for (uint32_t r = 0; r < con.rows; r++)
        mark_dirty(r);
    uint64_t t0 = rdtsc();
    fbcon_flush();
    uint64_t d = rdtsc() - t0;
    *bytes = con.st.bytes_written - b0;
    return d;
}
