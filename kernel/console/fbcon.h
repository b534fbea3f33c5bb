/* kernel/console/fbcon.h - a text console on whatever screen the loader left us: the VGA/EGA text
 * buffer (80x25 cells at 0xB8000) or a linear RGB framebuffer (Multiboot2 tag 8, UEFI GOP),
 * drawn with an 8x16 bitmap font. Output only; for people at a PC with no serial port.
 *
 * Scrolling moves the whole framebuffer, which is slow on a large screen under emulation, so
 * an RGB console scrolls by a third of the screen at a time. */
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

/* map: the caller's way to map the framebuffer (the kernel's paging), so that the console
 * hardware needs nothing above it. Returns -EINVAL for a layout it cannot draw (bpp,
 * sizes, pitch), -ENOMEM when the framebuffer cannot be mapped; the console then stays off. */
int fbcon_init(const struct fb_info *fb, void *(*map)(uint64_t phys, uint64_t bytes));
bool fbcon_active(void);
void fbcon_write(const char *s, unsigned long n);
void fbcon_describe(uint32_t *cols, uint32_t *rows);

#endif
