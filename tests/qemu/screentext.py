"""The text on a screendump of ticklab's framebuffer console, read back exactly: the console
draws the 8x16 font of build/gen/font8x16.h at a scale of 1, 2 or 3 (each font pixel a
square; kernel/console/fbcon.c) on a grid from the top left, so each cell is matched
against the font's glyphs, bit for bit. No OCR: a cell that is no glyph (a QR code's
modules) reads as '?'.
"""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FONT = os.path.join(ROOT, "build", "gen", "font8x16.h")
GLYPH_W, GLYPH_H = 8, 16


def font():
    """{16-byte bitmap: character} of the printable characters."""
    text = open(FONT).read()
    data = [int(x, 16) for x in re.findall(r"0x([0-9a-fA-F]{2})", text)]
    out = {}
    for ch in range(0x7E, 0x1F, -1):       # a blank cell reads as a space, not as 0x7F
        out[bytes(data[ch * GLYPH_H:(ch + 1) * GLYPH_H])] = chr(ch)
    return out


def read_ppm(path):
    """(width, height, RGB bytes) of a binary PPM (P6, 8 bits), as QEMU's screendump."""
    data = open(path, "rb").read()
    fields, at = [], 0
    while len(fields) < 4:
        while data[at:at + 1].isspace():
            at += 1
        if data[at:at + 1] == b"#":
            at = data.index(b"\n", at)
            continue
        end = at
        while not data[end:end + 1].isspace():
            end += 1
        fields.append(data[at:end])
        at = end
    assert fields[0] == b"P6" and fields[3] == b"255", fields
    return int(fields[1]), int(fields[2]), data[at + 1:]


def lines(path, only=None):
    """The screen's rows of text, trailing spaces stripped: the scale that reads the most
    glyphs wins. `only`: read just the rows with these numbers (the others empty), for a
    quick look at one row."""
    w, h, rgb = read_ppm(path)
    glyphs = font()

    def lit(x, y):
        i = (y * w + x) * 3
        return rgb[i] + rgb[i + 1] + rgb[i + 2] > 3 * 64

    best = None
    for scale in (1, 2, 3):
        cw, ch = GLYPH_W * scale, GLYPH_H * scale
        rows, known = [], 0
        for r in range(h // ch):
            if only is not None and r not in only:
                rows.append("")
                continue
            row = []
            for c in range(w // cw):
                bits = bytes(sum(0x80 >> x for x in range(GLYPH_W)
                                 if lit(c * cw + x * scale + scale // 2,
                                        r * ch + y * scale + scale // 2))
                             for y in range(GLYPH_H))
                got = glyphs.get(bits)
                known += got is not None and got != " "
                row.append(got or "?")
            rows.append("".join(row).rstrip())
        if best is None or known > best[0]:
            best = (known, rows)
    return best[1]
