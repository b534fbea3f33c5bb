/* kernel/report/qrscreen.h - the run's records leave a PC without a serial port as QR codes
 * on its last screen (docs/report-format.md, "QR parts").
 *
 * After the `end` record every record line (kernel/report/recstore.h keeps them, byte for
 * byte as sent) is compressed into one zlib stream (lib/deflate.h), cut into parts, and
 * each part, behind a 24-byte header (magic "TQ", format, flags, run id, part k of n, its
 * offset, the stream's length, the CRC-32 of the record bytes) and followed by the CRC-32
 * of all that, becomes one QR code (lib/qrcode.h, byte mode, level M). First the summary
 * screen (kernel/summary.c, with the verdict) stays until a key is pressed or HOLD_MS pass,
 * the screen counting down; then a page of instructions, then each code for qr_part_ms
 * under two lines, "part k of N" and the verdict, then the page again, until the PC is
 * switched off. Each wait is timed by time_ns() (the calibrated clocksource) and bounded
 * by the TSC too. A text screen (EGA 80x25) cannot draw codes: it says how to get a
 * graphical one.
 *
 * Version and module size are chosen for a phone's photo, not for the fewest pages: at
 * most version QR_VERSION_PHOTO (117 modules a side) and modules of at least QR_MODULE_PX
 * pixels with a 4-module quiet zone, below the text rows (800x600: version 21 at 5 px;
 * 1024x768 and up: version 25 at 5-7 px); then the smallest version that needs no more
 * parts, so a short run gets bigger modules. */
#ifndef TICKLAB_REPORT_QRSCREEN_H
#define TICKLAB_REPORT_QRSCREEN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define QR_MODULE_PX  5      /* screen pixels a module: blur and JPEG in a photo spare it */
#define QR_VERSION_PHOTO 25  /* a phone framing the code gets >= 15 camera px a module */
#define HOLD_MS       60000  /* the summary before the codes, unless a key comes first */
#define QR_PART_HEAD  24     /* bytes before a part's slice of the stream */
#define QR_PART_TAIL  4      /* the CRC-32 after it */
#define QR_FORMAT     1

enum qr_mode { QR_MODE_AUTO, QR_MODE_ON, QR_MODE_OFF };

/* arena: len bytes of RAM no one else uses (NULL/0: none; why says so). Sets up the record
 * store in it; call before the first record. */
void qrscreen_setup(void *arena, size_t len, const char *why, enum qr_mode mode,
                    uint32_t part_ms);
/* What the last screens say beside the codes: the verdict in one line (summary.h), and the
 * TSC's calibrated rate (0: unknown), the second clock that bounds each wait. */
void qrscreen_caption(const char *verdict_line, uint64_t tsc_hz);
/* The run's closing: the `qr_store` record (what the store holds, whether codes will be
 * shown and why) and the store's reserve opened for it and `end`. leaves: the run ends by
 * exiting QEMU or rebooting (qr=auto then shows nothing). */
void qrscreen_closing(bool leaves);
/* After `end`: the summary held, then the codes (never returns), or the text-screen note,
 * when qrscreen_closing() decided so; otherwise returns at once (a run that exits QEMU
 * is not held up). */
void qrscreen_show(void);

#endif
