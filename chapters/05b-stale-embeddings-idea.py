#!/usr/bin/env python3
"""Chapter 05b's picture of its idea, drawn (no data; Python's standard library only):

    python3 chapters/05b-stale-embeddings-idea.py [OUT.svg]   (default: chapters/05b-stale-embeddings-idea.svg)

DGC's rule in the plane of the chapter's worked example: rank 0 owns vertices a and b, rank 1 owns v,
whose product reads y_v = (x_a + x_b) / 2, and rows have two values, so each row is a point. Around
the copy of a row that rank 0 last SENT to rank 1 (hollow) the threshold theta is a circle: a fresh
row (filled) inside it is not sent, and rank 1 keeps reading the copy (stale); a row outside is sent
and becomes the new copy. Three panels: epoch 2 (theta = D / 2 under both signs), and epoch 3 after
the loss halved under the text's sign of Eq. 6 (theta = 0.62 D) and the printed one (0.38 D).
verify/test_async.c (worked_example_receiver) runs these rows through the simulation's product and
asserts every number printed here.
"""
import math
import sys

SCALE = 90.0                   # pixels per unit of a row's value
ORIGIN = (-0.8, 3.0)           # the value at a panel's top-left corner
PANEL_W, PANEL_H = 306, 342    # the plane: values -0.8 .. 2.6 across, -0.8 .. 3.0 up
LEFT, TOP, GAP, NOTES = 20, 78, 26, 92

SENT, STALE = "#1f78b4", "#d95f02"

# Each panel: title, theta, [(name, last sent copy, fresh row, earlier row or None)], message, what v reads.
PANELS = [
    ("epoch 2: theta = D/2 = 0.625", 0.625,
     [("a", (1, 0), (1.5, 0), None), ("b", (0, 1), (0.75, 2), None)],
     "bitmap 0x02 + row b: 9 of 16 bytes",
     "v reads y_v = (0.875, 1); fresh (1.125, 1)"),
    ("epoch 3, text's sign: theta = 0.62 D", 1 / (1 + math.exp(-0.5)),
     [("a", (1, 0), (2, 0), (1.5, 0)), ("b", (0.75, 2), (0.75, 2.5), None)],
     "bitmap 0x01 + row a: 9 of 16 bytes",
     "v reads y_v = (1.375, 1); fresh (1.375, 1.25)"),
    ("epoch 3, printed sign: theta = 0.38 D", 1 / (1 + math.exp(0.5)),
     [("a", (1, 0), (2, 0), (1.5, 0)), ("b", (0.75, 2), (0.75, 2.5), None)],
     "bitmap 0x03 + rows a, b: 17 bytes, more than 16",
     "v reads the fresh y_v = (1.375, 1.25)"),
]


def text(out, x0, y0, s, anchor="middle", size=12, weight="normal", fill="#222222"):
    out.append(f'<text x="{x0:.1f}" y="{y0:.1f}" text-anchor="{anchor}" font-size="{size}" '
               f'font-weight="{weight}" fill="{fill}">{s}</text>')


def panel(out, index, title, theta, rows, message, reads):
    left = LEFT + index * (PANEL_W + GAP)

    def at(point):
        return left + SCALE * (point[0] - ORIGIN[0]), TOP + SCALE * (ORIGIN[1] - point[1])

    text(out, left, TOP - 12, title, anchor="start", size=14, weight="bold")
    out.append(f'<clipPath id="plane{index}"><rect x="{left}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}"/>'
               '</clipPath>')
    out.append(f'<rect x="{left}" y="{TOP}" width="{PANEL_W}" height="{PANEL_H}" fill="#fbfbfb" stroke="#999999"/>')
    for k in range(0, 3):  # grid lines at the integers
        gx, _ = at((k, 0))
        _, gy = at((0, k))
        out.append(f'<line x1="{gx:.1f}" y1="{TOP}" x2="{gx:.1f}" y2="{TOP + PANEL_H}" stroke="#e4e4e4"/>')
        out.append(f'<line x1="{left}" y1="{gy:.1f}" x2="{left + PANEL_W}" y2="{gy:.1f}" stroke="#e4e4e4"/>')
        text(out, gx, TOP + PANEL_H - 4, str(k), size=10, fill="#888888")
        text(out, left + 4, gy - 3, str(k), anchor="start", size=10, fill="#888888")
    largest = max(math.dist(copy, fresh) for _, copy, fresh, _ in rows)
    for name, copy, fresh, earlier in rows:
        d = math.dist(copy, fresh)
        sent = d > theta * largest
        colour = SENT if sent else STALE
        cx, cy = at(copy)
        fx, fy = at(fresh)
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="{SCALE * theta * largest:.1f}" fill="{colour}" '
                   f'fill-opacity="0.08" stroke="{colour}" stroke-dasharray="5,3" clip-path="url(#plane{index})"/>')
        if earlier:  # last epoch's value: the rule never compares with it
            ex, ey = at(earlier)
            out.append(f'<circle cx="{ex:.1f}" cy="{ey:.1f}" r="3" fill="#bbbbbb"/>')
            text(out, ex, ey - 8, "epoch 2", size=9, fill="#888888")
        out.append(f'<line x1="{cx:.1f}" y1="{cy:.1f}" x2="{fx:.1f}" y2="{fy:.1f}" stroke="#555555" '
                   f'stroke-width="1.5" marker-end="url(#arrow)"/>')
        out.append(f'<circle cx="{cx:.1f}" cy="{cy:.1f}" r="5" fill="#ffffff" stroke="{colour}" stroke-width="2"/>')
        out.append(f'<circle cx="{fx:.1f}" cy="{fy:.1f}" r="5" fill="{colour}"/>')
        verdict = "sent" if sent else "stale: v reads the copy"
        below = fresh[1] < copy[1] + 0.25  # a row moving sideways: its label under it, clear of the arrow
        text(out, fx, fy + 20 if below else fy - 14, f"{name}: d = {d:g}, {verdict}",
             anchor="end" if fx > left + PANEL_W - 60 else "middle", size=11, fill=colour, weight="bold")
    text(out, left, TOP + PANEL_H + 22, message, anchor="start", size=12)
    text(out, left, TOP + PANEL_H + 42, reads, anchor="start", size=12)


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else "chapters/05b-stale-embeddings-idea.svg"
    width = LEFT + len(PANELS) * (PANEL_W + GAP)
    height = TOP + PANEL_H + NOTES - 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
           '<defs><marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
           'orient="auto-start-reverse"><path d="M 0 0 L 10 5 L 0 10 z" fill="#555555"/></marker></defs>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    text(out, LEFT, 22, "Rank 0 owns a and b, rank 1 owns v with y_v = (x_a + x_b) / 2; epoch 1 sent both rows, "
         "so rank 1 holds a = (1, 0) and b = (0, 1).", anchor="start", size=13, fill="#444444")
    text(out, LEFT, 42, "Hollow: the copy last sent; filled: the fresh row; dashed circle: theta around the copy "
         "(D = the largest d of the two). Blue: sent; orange: reused stale.", anchor="start", size=13, fill="#444444")
    for index, panel_args in enumerate(PANELS):
        panel(out, index, *panel_args)
    out.append("</svg>")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
