#!/usr/bin/env python3
"""Chapter 01b's idea picture: node memory over a stream of events, and what one batch does with it.

    python3 chapters/01b-event-models-idea.py chapters/01b-event-models-idea.svg

Python's standard library only; boxes and arrows placed by hand on a 900 x 420 canvas. The events
and the numbers in the memory rows are those of the chapter's worked example (JODIE, width 1)."""
import sys
from html import escape

WIDTH, HEIGHT = 900, 420


def text(x, y, s, anchor="middle", weight="normal", style="normal", size=13, fill="#000"):
    return (f'<text x="{x}" y="{y}" text-anchor="{anchor}" font-weight="{weight}" font-style="{style}" '
            f'font-size="{size}" fill="{fill}">{escape(s)}</text>')


def box(x, y, w, h, fill, title, lines):
    out = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" stroke="#333"/>',
           text(x + w / 2, y + 20, title, weight="bold")]
    for i, line in enumerate(lines):
        out.append(text(x + w / 2, y + 40 + 16 * i, line, size=12))
    return out


def arrow(x1, y1, x2, y2, dashed=False):
    dash = ' stroke-dasharray="6,4"' if dashed else ""
    return (f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.5"{dash} '
            f'marker-end="url(#head)"/>')


def stream():
    """The events on a time axis, one batch each, the middle one the batch drawn below."""
    out = [arrow(40, 55, 860, 55), text(862, 45, "time", anchor="end", style="italic"),
           text(40, 22, "a stream of events (u, v, t), cut into batches of consecutive events", anchor="start",
                weight="bold")]
    events = [(180, "0 \u2192 1, t = 1", "negative 2"), (450, "1 \u2192 2, t = 2", "negative 0"),
              (720, "0 \u2192 2, t = 3", "negative 1")]
    for i, (x, label, negative) in enumerate(events):
        fill = "#f7e3cf" if i == 1 else "#ffffff"
        out.append(f'<rect x="{x - 95}" y="33" width="190" height="44" rx="6" fill="{fill}" stroke="#777"/>')
        out.append(text(x, 51, f"batch {i + 1}: {label}", size=12))
        out.append(text(x, 68, negative, size=11, fill="#555"))
    return out


def memory_table():
    """Node memory after batch 1 of the worked example: one row per vertex."""
    x, y = 20, 120
    out = [f'<rect x="{x}" y="{y}" width="262" height="170" rx="8" fill="#dbe8f7" stroke="#333"/>',
           text(x + 131, y + 20, "node memory (state, not parameters)", weight="bold", size=12),
           text(x + 131, y + 38, "one row per vertex, zero at each epoch", size=11, fill="#333")]
    columns = [(x + 22, "v"), (x + 70, "s_v"), (x + 131, "mem_ts"), (x + 180, "mail_v"), (x + 228, "mail_ts")]
    for cx, name in columns:
        out.append(text(cx, y + 62, name, weight="bold", size=12))
    rows = [("0", "0.76", "1", "[0.76 0.76]", "1"), ("1", "0.76", "1", "[0.76 0.76]", "1"),
            ("2", "0", "0", "[0 0]", "0")]
    for r, row in enumerate(rows):
        for (cx, _), value in zip(columns, row):
            out.append(text(cx, y + 84 + 20 * r, value, size=12))
    out.append(text(x + 131, y + 155, "after batch 1 (the worked example)", size=11, style="italic", fill="#333"))
    return out


def batch():
    """One batch: read, update, embed, score, then the write-back that closes the loop."""
    out = []
    steps = [(300, "1. read", ["each root's row as it", "was before the batch:", "src, dst, negative", "(TGN: + neighbours)"]),
             (450, "2. update", ["s' = GRU or RNN of", "[mail \u2016 \u03c6(t \u2212 mem_ts)]", "and s_v, once per", "entry (copy)"]),
             (600, "3. embed", ["TGN: attention over", "10 recent neighbours;", "JODIE: s' projected", "to time t"]),
             (750, "4. score", ["(u, v) \u2192 1, (u, n) \u2192 0:", "BCE, backward,", "one Adam step;", "gradient stops at s_v"])]
    for x, title, lines in steps:
        out += box(x, 120, 130, 110, "#f7e3cf", title, lines)
    for x in (430, 580, 730):
        out.append(arrow(x, 175, x + 18, 175))
    out.append(arrow(282, 175, 298, 175))
    out += box(300, 290, 580, 90, "#e0f0dc", "5. write back, no gradient",
               ["each endpoint u of event j: s_u \u2190 s'_u, mail_u \u2190 [s'_u \u2016 s'_v \u2016 e_j], "
                "mem_ts = mail_ts = t_j",
                "written in event order, source before destination: the last write of a vertex wins",
                "negatives (and TGN's neighbours) are read and updated, never written"])
    out.append(arrow(815, 230, 815, 288))
    out.append(f'<path d="M300,335 L145,335 L145,292" fill="none" stroke="#333" stroke-width="1.5" '
               f'stroke-dasharray="6,4" marker-end="url(#head)"/>')
    out.append(text(220, 352, "the next batch reads these rows", size=11, style="italic"))
    out.append(arrow(450, 77, 365, 118))
    out.append(text(470, 102, "its roots", anchor="start", size=11, style="italic"))
    return out


def main():
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" font-family="sans-serif">',
             '<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
             '<path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker></defs>',
             f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>']
    parts += stream() + memory_table() + batch()
    parts.append(text(450, 408, "one batch of a memory-based event model (TGN, JODIE; APAN: M mails a row, "
                      "also delivered to neighbours)", size=12, style="italic", fill="#333"))
    parts.append("</svg>")
    with open(sys.argv[1], "w", encoding="utf-8") if len(sys.argv) > 1 else sys.stdout as out:
        out.write("\n".join(parts) + "\n")
    if len(sys.argv) > 1:
        print(f"wrote {sys.argv[1]}: the stream, node memory and one batch's five steps")


if __name__ == "__main__":
    main()
