"""HTML building blocks shared by the report and compare pages.

Pages are self-contained: one file, the stylesheet inline, every figure embedded as a PNG
data URI (the SVG files beside it are linked for zooming). Every value is escaped; nothing
from a record reaches the page as markup.
"""

import base64
import html

from .dataset import cell, columns

STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em auto; max-width: 1372px;
       padding: 0 1em; color: #222; }
h1 { font-size: 1.35em; margin: .2em 0; } h2 { border-bottom: 1px solid #ccc; margin-top: 2em; }
table { border-collapse: collapse; margin: .5em 0; font-size: 12px; }
td, th { border: 1px solid #ccc; padding: 1px 5px; text-align: left; vertical-align: top; }
th { background: #f2f2f2; white-space: nowrap; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.scroll { overflow-x: auto; max-width: 100%; }
.ok { color: #176117; font-weight: bold; } .bad { color: #a40000; font-weight: bold; }
.warn { color: #8a5a00; font-weight: bold; }
figure { margin: 1em 0; } figure img { max-width: 100%; border: 1px solid #ddd; }
figcaption { font-size: 12px; color: #444; max-width: 1340px; }
.figs figure { margin: .6em 0; } .figs figure img { width: 100%; max-width: 1342px; }
.flow { display: flex; flex-wrap: wrap; gap: 0 18px; align-items: flex-start; }
.flow > .tab { flex: 0 1 auto; max-width: 100%; min-width: 0; }
.flow > .tab > p, .flow > .tab > details { width: 0; min-width: 100%; }
.flow > .tab > p, .flow > .tab > details { margin: .3em 0; }
.flow > figure { flex: 1 1 100%; margin: .6em 0; }
.flow > figure img { width: 100%; max-width: 1342px; }
.answer { margin: .4em 0 0; } .answer figure { margin: .3em 0 0; }
.answer p { margin: .25em 0; }
.envline { font-size: 15px; font-weight: bold; }
table.answer { width: 100%; table-layout: fixed; font-size: 13px; margin: .2em 0; }
table.answer th { width: 290px; white-space: nowrap; overflow: hidden;
                  text-overflow: ellipsis; }
table.answer td.choice { width: 110px; font-weight: bold; }
table.answer tr.lead td, table.answer tr.lead th { font-size: 15px; padding: 3px 6px; }
table.answer td.claim, table.answer tr.other td { white-space: nowrap; overflow: hidden;
                                                  text-overflow: ellipsis; }
tr.missing td { background: #ffe0e0; color: #a40000; }
td.wrap { max-width: 240px; white-space: normal; }
td.pub { max-width: 190px; white-space: normal; color: #333; background: #f6f9ff; }
th.pub { background: #e8f0ff; }
.exp h3 { margin-bottom: .2em; } .exp > p { margin: .3em 0; }
.note { color: #555; font-size: 12px; } code { font-size: 12px; }
tr.diff td { background: #fff4d6; } tr.partial td { background: #fff0f0; }
.summary { border: 2px solid #888; padding: .2em 1em 1em; margin: 1em 0; background: #fafafa; }
.summary h2 { margin-top: 1em; font-size: 1.15em; }
.env { font-size: 1.15em; font-weight: bold; }
details { margin: 1em 0; } summary { cursor: pointer; font-weight: bold; font-size: 1.2em; }
"""

LONG_LIST = 8  # lists longer than this are summarised in tables; the CSV has them whole


def esc(value):
    return html.escape(str(value), quote=True)


def page(title, body):
    """A whole HTML document."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<title>%s</title><style>%s</style></head>\n<body>\n%s\n</body></html>\n"
            % (esc(title), STYLE, "\n".join(body)))


def readable(value, depth=0):
    """A record value as a person reads it, never as JSON: an object's members as
    "key: value" joined by "; " (nested ones in parentheses), a list's items by ", "."""
    if isinstance(value, dict):
        if not value:
            return "(empty)"
        inner = "; ".join("%s: %s" % (k, readable(v, depth + 1)) for k, v in value.items())
        return "(%s)" % inner if depth else inner
    if isinstance(value, list):
        if not value:
            return "(none)"
        return ", ".join(readable(v, depth + 1) for v in value)
    if value is None:
        return "null" if depth else ""
    return cell(value)


def short(value, limit=160):
    """A value for a table cell: readable (no JSON), long lists summarised, long text cut
    (the data files have every value whole)."""
    if isinstance(value, list) and len(value) > LONG_LIST:
        return "%d values: %s, ..." % (len(value), ", ".join(readable(v, 1)
                                                            for v in value[:3]))
    text = readable(value)
    if isinstance(value, dict) and len(text) > limit:
        return text[:limit - 3].rstrip() + "..."
    return text


def td(value):
    numeric = isinstance(value, (int, float)) and not isinstance(value, bool)
    return "<td%s>%s</td>" % (' class="num"' if numeric else "", esc(short(value)))


def table(rows, keys=None, drop=("type",), row_class=None, extra=None):
    """One row per record; columns: the union of keys (minus `drop`), then `extra`
    (header, function of the row giving HTML-safe text). Each row's capture line is its
    tooltip, not a column. Wide tables scroll inside their box."""
    rows = list(rows)
    if not rows:
        return "<p class=\"note\">(none)</p>"
    keys = [k for k in (keys or columns(rows)) if k not in drop]
    extra = extra or []
    head = "".join("<th>%s</th>" % esc(k) for k in keys) + "".join(
        "<th>%s</th>" % esc(h) for h, _ in extra)
    out = ["<div class=\"scroll\"><table><tr>%s</tr>" % head]
    for row in rows:
        line = getattr(row, "line", None)
        attrs = (" title=\"capture line %d\"" % line if line else "") + (
            " class=\"%s\"" % row_class if row_class else "")
        cells = [td(row.get(k)) for k in keys] + ["<td>%s</td>" % f(row) for _, f in extra]
        out.append("<tr%s>%s</tr>" % (attrs, "".join(cells)))
    out.append("</table></div>")
    return "".join(out)


def plain_table(header, rows, numeric=(), lines=None, pub=(), row_class=None, classes=None):
    """A table of already-formatted text cells; `numeric`: column indexes right-aligned;
    `lines`: each row's capture line, its tooltip; `pub`: the published columns;
    `row_class`: a class for every row (`partial`); `classes`: one per row (None: none)."""
    def cls(i):
        return ' class="num"' if i in numeric else (' class="pub"' if i in pub else "")
    out = ["<div class=\"scroll\"><table><tr>%s</tr>" % "".join(
        "<th%s>%s</th>" % (' class="pub"' if i in pub else "", esc(h))
        for i, h in enumerate(header))]
    for n, row in enumerate(rows):
        line = lines[n] if lines and n < len(lines) else None
        cls_n = (classes[n] if classes and n < len(classes) else None) or row_class
        attrs = (' title="capture line %d"' % line if line else "") + (
            ' class="%s"' % cls_n if cls_n else "")
        out.append("<tr%s>%s</tr>" % (attrs, "".join("<td%s>%s</td>" % (cls(i), esc(c))
                                                     for i, c in enumerate(row))))
    out.append("</table></div>")
    return "".join(out)


def details(summary_html, body, open_=False, id_=None):
    return "<details%s%s><summary>%s</summary>%s</details>" % (
        " id=\"%s\"" % esc(id_) if id_ else "", " open" if open_ else "", summary_html,
        "".join(body))


def key_values(obj, drop=("type",)):
    """A two-column table of one record's keys; nested objects become nested tables."""
    if not obj:
        return "<p class=\"note\">(none)</p>"
    out = ["<div class=\"scroll\"><table>"]
    for key, value in obj.items():
        if key in drop:
            continue
        if isinstance(value, dict) and value:
            shown = key_values(value, drop=())
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            shown = table(value, drop=())
        else:
            shown = esc(short(value))
        out.append("<tr><th>%s</th><td>%s</td></tr>" % (esc(key), shown))
    out.append("</table></div>")
    return "".join(out)


def flow(parts, plots, link_base, id_prefix="fig-"):
    """A table (its HTML parts) and figures side by side where the width allows, wrapping
    onto the next line where it does not."""
    text = "".join(parts)
    if "<table" not in text:  # notes alone: a paragraph as wide as the page
        return text + (figures(plots, link_base, id_prefix) if plots else "")
    out = ["<div class=\"flow\">"]
    if parts:
        out.append("<div class=\"tab\">%s</div>" % text)
    out += [figure(p, link_base, id_prefix) for p in plots]
    out.append("</div>")
    return "".join(out)


def figures(plots, link_base, id_prefix="fig-", wide=True):
    """Figures one under another, each as wide as the page (they are drawn so)."""
    if not plots:
        return ""
    return "<div class=\"figs\">%s</div>" % "".join(figure(p, link_base, id_prefix)
                                                   for p in plots)


def figure(plot, link_base, id_prefix="fig-"):
    """A figure with its PNG inline, its caption (the clock is named under the figure's
    own axes, not again here) and links to its files."""
    with open(plot.png, "rb") as f:
        data = base64.b64encode(f.read()).decode("ascii")
    links = "<a href=\"%s\">PNG</a>" % esc(link_base + plot.name + ".png")
    if plot.svg:
        links += " <a href=\"%s\">SVG</a>" % esc(link_base + plot.name + ".svg")
    return ("<figure id=\"%s%s\"><img class=\"plot\" src=\"data:image/png;base64,%s\" "
            "alt=\"%s\"><figcaption><b>%s.</b> %s %s</figcaption>"
            "</figure>" % (esc(id_prefix), esc(plot.name), data, esc(plot.title),
                           esc(plot.title), esc(plot.caption), links))


def state(text, good):
    return "<span class=\"%s\">%s</span>" % ("ok" if good else "bad", esc(text))
