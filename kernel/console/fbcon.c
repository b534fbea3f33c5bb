/* kernel/console/fbcon.c - see fbcon.h. */
#include "kernel/console/fbcon.h"

#include "ticklab/errno.h"
#include "ticklab/kstring.h"

#include "font8x16.h"   /* generated from a system bitmap font by the Makefile */

#define GLYPH_W 8
#define GLYPH_H 16
#define EGA_ATTR 0x07   /* light grey on black */

static struct {
    struct fb_info fb;
    uint8_t *base;
    uint32_t cols, rows, cx, cy;
    uint32_t fg;
    bool active;
} con;

static uint32_t rgb_pixel(uint8_t r, uint8_t g, uint8_t b)
{
    const struct fb_info *f = &con.fb;
    return ((uint32_t)(r >> (8 - f->red_size)) << f->red_pos) |
           ((uint32_t)(g >> (8 - f->green_size)) << f->green_pos) |
           ((uint32_t)(b >> (8 - f->blue_size)) << f->blue_pos);
}

static void put_pixel(uint8_t *row, uint32_t x, uint32_t px)
{
    switch (con.fb.bpp) {
    case 32: ((volatile uint32_t *)row)[x] = px; break;
    case 24: {
        volatile uint8_t *p = row + x * 3;
        p[0] = px & 0xFF; p[1] = (px >> 8) & 0xFF; p[2] = (px >> 16) & 0xFF;
        break;
    }
    default: ((volatile uint16_t *)row)[x] = (uint16_t)px; break;
    }
}

static void draw_glyph(uint32_t col, uint32_t row, unsigned char ch)
{
    if (con.fb.kind == FB_EGA_TEXT) {
        volatile uint16_t *cell = (volatile uint16_t *)(con.base + row * con.fb.pitch) + col;
        *cell = (uint16_t)(EGA_ATTR << 8 | ch);
        return;
    }
    const uint8_t *g = &font8x16[(ch & 0x7F) * GLYPH_H];
    for (uint32_t y = 0; y < GLYPH_H; y++) {
        uint8_t *line = con.base + (row * GLYPH_H + y) * con.fb.pitch;
        for (uint32_t x = 0; x < GLYPH_W; x++)
            put_pixel(line, col * GLYPH_W + x, (g[y] & (0x80 >> x)) ? con.fg : 0);
    }
}

static void clear_rows(uint32_t first, uint32_t count)
{
    for (uint32_t r = first; r < first + count && r < con.rows; r++)
        for (uint32_t c = 0; c < con.cols; c++)
            draw_glyph(c, r, ' ');
}

static void scroll(void)
{
    uint32_t by = con.fb.kind == FB_RGB ? (con.rows / 3 ? con.rows / 3 : 1) : 1;
    uint32_t row_bytes = con.fb.pitch * (con.fb.kind == FB_RGB ? GLYPH_H : 1);
    memmove(con.base, con.base + by * row_bytes, (con.rows - by) * row_bytes);
    clear_rows(con.rows - by, by);
    con.cy = con.rows - by;
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
    con.base = map(fb->phys, bytes);
    if (!con.base)
        return -ENOMEM;
    con.fb = *fb;
    con.cols = fb->kind == FB_RGB ? fb->width / GLYPH_W : fb->width;
    con.rows = fb->kind == FB_RGB ? fb->height / GLYPH_H : fb->height;
    con.cx = con.cy = 0;
    con.fg = fb->kind == FB_RGB ? rgb_pixel(0xC0, 0xC0, 0xC0) : 0;
    con.active = true;
    clear_rows(0, con.rows);
    return 0;
}

bool fbcon_active(void)
{
    return con.active;
}

void fbcon_describe(uint32_t *cols, uint32_t *rows)
{
    *cols = con.active ? con.cols : 0;
    *rows = con.active ? con.rows : 0;
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
            draw_glyph(con.cx++, con.cy, ch < 0x20 || ch > 0x7E ? '?' : ch);
            continue;
        }
        if (con.cy >= con.rows)
            scroll();
    }
}
