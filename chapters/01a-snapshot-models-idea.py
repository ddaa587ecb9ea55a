#!/usr/bin/env python3
"""Chapter 01a's idea picture, drawn (no data), with Python's standard library only:

    python3 chapters/01a-snapshot-models-idea.py        (from the repository root)

writes chapters/01a-snapshot-models-idea.svg: a graph-recurrent cell (T-GCN, ref/models/model_tgcn.c)
over a window of three snapshots. Per snapshot, the graph work (grey, as in 01-models-shapes.svg) is
the aggregation A^_t X_t, fixed by the snapshot alone; it feeds the GRU's three gates, whose
parameters every snapshot shares. What crosses from one snapshot to the next is the state H, one row
per vertex (red, dashed), zero at the window's first snapshot."""

import os

WIDTH, HEIGHT = 1100, 620
GRAPH = "#d0d7de"   # graph work, as in chapters/01-models-shapes.gp
STATE = "#c0392b"   # the carried state, as there
INK = "#333333"

parts = []


def add(element):
    parts.append(element)


def escape(text):
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def text(x, y, s, size=13, anchor="middle", weight="normal", colour=INK, italic=False):
    style = ' font-style="italic"' if italic else ""
    add(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" font-weight="{weight}" '
        f'fill="{colour}"{style}>{escape(s)}</text>')


def box(x, y, w, h, fill, lines, size=13):
    """A rectangle with top-left corner (x, y) and its lines of text centred in it."""
    add(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="6" fill="{fill}" stroke="{INK}" stroke-width="1.2"/>')
    top = y + h / 2 - (len(lines) - 1) * (size + 4) / 2 + size / 3
    for i, line in enumerate(lines):
        text(x + w / 2, top + i * (size + 4), line, size)


def arrow(x1, y1, x2, y2, colour=INK, dashed=False, width=1.4, marker="ink"):
    dash = ' stroke-dasharray="7,5"' if dashed else ""
    add(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="{width}"{dash} '
        f'marker-end="url(#{marker})"/>')


def path_graph(cx, cy, features):
    """The path 0 - 1 - 2 of the worked example, each vertex with its feature."""
    xs = [cx - 60, cx, cx + 60]
    for a, b in ((0, 1), (1, 2)):
        add(f'<line x1="{xs[a]}" y1="{cy}" x2="{xs[b]}" y2="{cy}" stroke="{INK}" stroke-width="1.4"/>')
    for v, x in enumerate(xs):
        add(f'<circle cx="{x}" cy="{cy}" r="15" fill="white" stroke="{INK}" stroke-width="1.4"/>')
        text(x, cy + 5, str(v), 13, weight="bold")
        text(x, cy + 34, f"x={features[v]}", 12)


add('<defs>'
    f'<marker id="ink" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
    f'<path d="M0,0 L10,4 L0,8 z" fill="{INK}"/></marker>'
    f'<marker id="state" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
    f'<path d="M0,0 L10,4 L0,8 z" fill="{STATE}"/></marker>'
    '</defs>')
add(f'<rect x="0" y="0" width="{WIDTH}" height="{HEIGHT}" fill="white"/>')
text(WIDTH / 2, 30, "A graph-recurrent cell (T-GCN) over a window of three snapshots", 17, weight="bold")

columns = [220, 550, 880]
features = [("1", "0", "2"), ("0", "1", "0"), ("…", "…", "…")]
cell_w, cell_h = 250, 118
for t, cx in enumerate(columns, start=1):
    # the snapshot: its graph and features
    path_graph(cx, 470, features[t - 1])
    text(cx, 525, f"snapshot {t}: graph G_{t}, features X_{t}", 13, italic=True)
    arrow(cx, 450, cx, 402)
    # the aggregation: the snapshot's graph work, no parameter
    box(cx - 110, 348, 220, 52, GRAPH, ["A^_t X_t   (one per snapshot,", "shared by the three gates)"])
    arrow(cx, 348, cx, 326)
    # the GRU cell: parameters shared by every snapshot
    box(cx - cell_w / 2, 182, cell_w, cell_h, "white",
        ["C_g = (A^_t X_t) Θ_g + b_g,  g = z, r, h",
         "Z = σ([C_z | H] L_z + c_z)",
         "R = σ([C_r | H] L_r + c_r)",
         "H~ = tanh([C_h | H⊙R] L_h + c_h)",
         "H' = Z⊙H + (1 − Z)⊙H~"], 12)
    text(cx, 318, "the GRU's gates: parameters shared by every snapshot", 11, italic=True)
    arrow(cx, 182, cx, 130)
    box(cx - 85, 84, 170, 44, "white", [f"y_{t} = Linear(ReLU(H_{t}))"])

# the carried state: into the first cell as zero, between the cells, out of the last
left = columns[0] - cell_w / 2
text(left - 48, 236, "H_0 = 0", 13, colour=STATE, weight="bold")
arrow(left - 40, 248, left, 248, STATE, dashed=True, width=2.2, marker="state")
for t in range(2):
    a, b = columns[t] + cell_w / 2, columns[t + 1] - cell_w / 2
    arrow(a, 248, b, 248, STATE, dashed=True, width=2.2, marker="state")
    text((a + b) / 2, 238, f"H_{t + 1}", 14, colour=STATE, weight="bold")
right = columns[2] + cell_w / 2
arrow(right, 248, right + 45, 248, STATE, dashed=True, width=2.2, marker="state")
text(right + 25, 238, "H_3", 14, colour=STATE, weight="bold")

text(40, 578, "grey: per-snapshot graph work, fixed by G_t and X_t alone (no parameter, no state): it can run ahead,"
     " be cached, be served incrementally", 12, anchor="start")
text(40, 600, "red, dashed: the carried state H, one row per vertex, the only thing that crosses snapshots"
     " (back-propagation follows it back through the window)", 12, anchor="start", colour=STATE)

svg = (f'<?xml version="1.0" encoding="utf-8"?>\n'
       f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" '
       f'viewBox="0 0 {WIDTH} {HEIGHT}" font-family="sans-serif">\n'
       + "\n".join(parts) + "\n</svg>\n")
out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "01a-snapshot-models-idea.svg")
with open(out, "w", encoding="utf-8") as f:
    f.write(svg)
