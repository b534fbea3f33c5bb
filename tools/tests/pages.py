"""Checks on what the report and compare commands write: HTML that parses, images that
are real PNG and SVG files, CSV headers that match the records."""
import base64
import csv
import html.parser
import json
import struct
import xml.etree.ElementTree as ET

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
# Elements HTML lets a page leave unclosed; ours closes every one, so none is listed.
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
# Tags whose boundaries separate words in the page's text (table cells, blocks).
BREAKS = {"td", "th", "tr", "table", "p", "li", "ol", "ul", "h1", "h2", "h3", "div",
          "figure", "figcaption", "br", "body"}
HIDDEN = {"style", "title", "script"}


class StrictParser(html.parser.HTMLParser):
    """Collects text, images and ids, and fails on any unbalanced tag."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.images, self.ids, self.text = [], [], set(), []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            assert attrs["id"] not in self.ids, "duplicate id %s" % attrs["id"]
            self.ids.add(attrs["id"])
        if tag == "img":
            self.images.append(attrs)
        if tag in BREAKS:
            self.text.append(" ")
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag):
        assert self.stack, "</%s> at %s closes nothing" % (tag, self.getpos())
        if tag in BREAKS:
            self.text.append(" ")
        opened, pos = self.stack.pop()
        assert opened == tag, "<%s> from %s closed by </%s> at %s" % (opened, pos, tag,
                                                                     self.getpos())

    def handle_data(self, data):
        if not (self.stack and self.stack[-1][0] in HIDDEN):
            self.text.append(data)


def parse_html(text):
    """Parse a page strictly; returns the parser (images, ids, text)."""
    assert text.startswith("<!DOCTYPE html>")
    p = StrictParser()
    p.feed(text)
    p.close()
    assert p.stack == [], "unclosed: %s" % p.stack
    p.text = " ".join("".join(p.text).split())
    return p


def png_size(data):
    """(width, height) of PNG bytes; fails unless the signature and IHDR are right."""
    assert data[:8] == PNG_MAGIC, "not a PNG"
    length, kind = struct.unpack(">I4s", data[8:16])
    assert kind == b"IHDR" and length == 13
    width, height = struct.unpack(">II", data[16:24])
    assert width > 0 and height > 0
    return width, height


def check_png_file(path):
    with open(path, "rb") as f:
        return png_size(f.read())


def check_svg_file(path):
    root = ET.parse(path).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg", root.tag
    assert len(list(root.iter())) > 20  # a drawn figure, not an empty canvas
    return root


def inline_pngs(page):
    """Decode every <img> of a parsed page; they must all be PNG data URIs."""
    sizes = []
    for img in page.images:
        src = img["src"]
        prefix = "data:image/png;base64,"
        assert src.startswith(prefix), src[:40]
        sizes.append(png_size(base64.b64decode(src[len(prefix):], validate=True)))
    return sizes


def read_jsonl(path):
    with open(path, encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def read_csv(path):
    with open(path, encoding="utf-8", newline="") as f:
        rows = list(csv.reader(f))
    return rows[0], rows[1:]
