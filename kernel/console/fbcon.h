/* kernel/console/fbcon.h - a text console on whatever screen the loader left us: the VGA/EGA text
 * buffer (80x25 cells at 0xB8000) or a linear RGB framebuffer (Multiboot2 tag 8, UEFI GOP),
 * drawn with an 8x16 bitmap font, each font pixel a square of `scale` screen pixels so
 * that text stays readable on a dense panel (fbcon_scale_for). Output only; for people at
 * a PC with no serial port.
 *
 * Video memory is never read: real framebuffers are uncached or write-combining, and reading
 * them back (a memmove to scroll) costs a tenth of a second to seconds per scroll on a large
 * screen. The console keeps the text in RAM (a ring of rows, so a scroll moves no text) and
 * what each cell of the screen shows; fbcon_write() changes only the RAM copy, and
 * fbcon_flush_row() redraws one screen row, writing only the cells whose character changed.
 * The caller (the console's drain, kernel/report/klog.c) flushes row by row with interrupts
 * on, outside measurement windows. Every video memory access goes through lib/port/io.h
 * (mmio_write*), which lets the host tests see each one. */
#ifndef TICKLAB_DRIVERS_FBCON_H
#define TICKLAB_DRIVERS_FBCON_H
#include <stdbool.h>
#include <stdint.h>

enum fb_kind { FB_NONE, FB_EGA_TEXT, FB_RGB };

struct fb_info {
    enum fb_kind kind;
    uint64_t phys;            /* physical address of the first pixel/cell */
    uint32_t pitch;           /* bytes per row (of pixels, or of text cells) */
    uint32_t width, height;   /* pixels, or text cells for FB_EGA_TEXT */
    uint8_t bpp;              /* 15/16/24/32 for RGB */
    uint8_t red_pos, red_size, green_pos, green_size, blue_pos, blue_size;
};

/* The text the console keeps: screens beyond this many cells use their top-left part only
 * (4K at 8x16 would be 480x135 = 64800 cells; scaled x3 it is 160x45). */
#define FBCON_MAX_COLS  512
#define FBCON_MAX_ROWS  256
#define FBCON_MAX_CELLS (64u * 1024u)

/* What drawing cost, for the `console` records (TSC cycles, bytes written to video memory). */
struct fbcon_stats {
    uint64_t scrolls;             /* rows scrolled in the RAM copy */
    uint64_t rows_drawn, cells_drawn, bytes_written;
    uint64_t draw_cyc;            /* TSC cycles spent writing video memory, in all */
    uint64_t row_max_cyc;         /* the longest single fbcon_flush_row() */
};

/* map: the caller's way to map the framebuffer (the kernel's paging), so that the console
 * hardware needs nothing above it. Returns -EINVAL for a layout it cannot draw (bpp,
 * sizes, pitch), -ENOMEM when the framebuffer cannot be mapped; the console then stays off.
 * Clears the screen (writes only). */
int fbcon_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes));
bool fbcon_active(void);
/* The text scale for an RGB screen of width x height pixels. No EDID is read, so the
 * panel's size is not known: each height tier assumes the densest panel sold with that
 * many rows (up to 800 rows: 11.6" 1366x768, ~135 dpi; up to 1600: 13.3" 1080p or 1440p,
 * ~166-226 dpi; beyond: 15.6" 4K, ~282 dpi) and takes the smallest scale that makes a
 * 16-pixel text row at least 3 mm tall there, but never fewer than 80 columns. 1 below
 * 64x32 pixels or on a text screen. */
unsigned fbcon_scale_for(uint32_t width, uint32_t height);
/* One text cell's size in screen pixels (8 x 16 times the scale; 1 x 1 on a text screen,
 * 0 x 0 when the console is off). */
void fbcon_cell(uint32_t *width, uint32_t *height);
/* Into the RAM copy only: no video memory is touched. */
void fbcon_write(const char *s, unsigned long n);
/* Redraws the first screen row that changed; false when none had. */
bool fbcon_flush_row(void);
/* Every changed row (the synchronous path: a fault, the end of the run). */
void fbcon_flush(void);
/* Draws every cell of the screen once from the RAM copy and returns its cost in TSC cycles:
 * the most one scroll can cost (every character moved). bytes: video memory written. */
uint64_t fbcon_redraw_all(uint64_t *bytes);
void fbcon_describe(uint32_t *cols, uint32_t *rows);
/* The screen's kind and size (pixels for FB_RGB, cells for FB_EGA_TEXT); FB_NONE when the
 * console is off. */
enum fb_kind fbcon_screen(uint32_t *width, uint32_t *height);
/* The last screen's pictures (kernel/report/qrscreen.c): fills a rectangle of an FB_RGB
 * screen with white or black, clipped to the screen (nothing on a text screen). The RAM
 * copy does not know of it: fbcon_clear() before text is drawn there again. */
void fbcon_fill(uint32_t x, uint32_t y, uint32_t w, uint32_t h, bool white);
/* Blank text, the cursor at the top left, every cell redrawn by the next flush. */
void fbcon_clear(void);
/* The cursor to the top left, the text kept: what is written next replaces it, and the next
 * flush redraws only the cells that changed. */
void fbcon_home(void);
const struct fbcon_stats *fbcon_stats(void);

#endif
