#!/usr/bin/env python3
"""Chapter 06a's idea picture: the eight-vertex, two-snapshot example split on two ranks by each
partitioner, every vertex filled by its owner, cut edges dashed red.

The edges come from verify/partition_example.h (the test's own data), the owners, cuts and loads
from what verify/test_partition.c's chapter_example printed (a results file holding its lines), so
the picture shows what the test measured. Python's standard library only.

    python3 chapters/06a-partitioners-idea.py [RESULTS] [OUT]
    (defaults: bench/results/06-partition/chapter_example.txt, chapters/06a-partitioners-idea.svg)
"""
import math
import re
import sys

RESULTS = sys.argv[1] if len(sys.argv) > 1 else "bench/results/06-partition/chapter_example.txt"
OUT = sys.argv[2] if len(sys.argv) > 2 else "chapters/06a-partitioners-idea.svg"

# Where each vertex sits in a snapshot's drawing: the group {0, 1, 4, 5} on the left, {2, 3, 6, 7}
# on the right, so the edges joining them (2 -> 1, 3 -> 4) run across the middle.
POSITION = {0: (18, 60), 5: (52, 22), 1: (82, 60), 4: (52, 98),
            2: (128, 60), 6: (158, 22), 3: (158, 98), 7: (192, 60)}
RANK_FILL = ["#8fb8de", "#f4b183"]  # rank 0 blue, rank 1 orange
WHAT = {"hash": "nothing (v mod R)", "pts": "nothing (id ranges)", "metis": "fewest cut edges",
        "dynahb": "equal walk load", "dgc": "chunks: locality + work", "reflexbicut": "smallest ζ, the busiest rank's traffic"}


def read_edges(header="verify/partition_example.h"):
    """[(t, u, v)] from the C initializer of example_edges."""
    text = open(header, encoding="utf-8").read()
    body = text[text.index("example_edges["):]
    body = body[body.index("{") + 1:body.index("};")]
    edges = []
    for t, block in enumerate(re.findall(r"\{(\{[^;]*?\})\s*\}", body)):
        for u, v in re.findall(r"\{(\d+),\s*(\d+)\}", block):
            edges.append((t, int(u), int(v)))
    return edges


def read_results(path):
    """[(method, owners, cut, total, load0, load1, Sven's cap)] from chapter_example's lines."""
    rows = []
    pattern = re.compile(r"chapter_example: (\S+)\s+owners ([\d ]+); cut (\d+) of (\d+); load (\d+) / (\d+);.*"
                         r"Sven's cap (\d+)")
    for line in open(path, encoding="utf-8"):
        m = pattern.search(line)
        if m:
            owners = [int(x) for x in m.group(2).split()]
            rows.append((m.group(1), owners, *(int(m.group(i)) for i in range(3, 8))))
    if not rows:
        sys.exit(f"{path}: no chapter_example lines (run verify/test_partition first)")
    return rows


def edge_path(x0, y0, x1, y1, bend=7.0, radius=10.0):
    """A slightly bent edge from circle to circle (two opposite edges bend apart)."""
    dx, dy = x1 - x0, y1 - y0
    length = math.hypot(dx, dy)
    ux, uy = dx / length, dy / length
    sx, sy = x0 + ux * radius, y0 + uy * radius
    ex, ey = x1 - ux * (radius + 2), y1 - uy * (radius + 2)
    cx, cy = (sx + ex) / 2 - uy * bend, (sy + ey) / 2 + ux * bend
    return f"M{sx:.1f},{sy:.1f} Q{cx:.1f},{cy:.1f} {ex:.1f},{ey:.1f}"


def panel(out, ox, oy, method, owners, cut, total, loads, cap, edges):
    out.append(f'<text x="{ox + 210}" y="{oy + 14}" text-anchor="middle" font-weight="bold">{method}</text>')
    out.append(f'<text x="{ox + 210}" y="{oy + 30}" text-anchor="middle" font-size="11">optimizes: {WHAT.get(method, "")}'
               f' · cut {cut} of {total} · load {loads[0]} / {loads[1]} · ζ {cap}</text>')
    for t in range(2):
        tx, ty = ox + 8 + t * 212, oy + 38
        out.append(f'<rect x="{tx}" y="{ty}" width="204" height="124" fill="none" stroke="#ccc" rx="6"/>')
        out.append(f'<text x="{tx + 6}" y="{ty + 14}" font-size="10" fill="#666">t = {t}</text>')
        for (s, u, v) in edges:
            if s != t:
                continue
            (x0, y0), (x1, y1) = POSITION[u], POSITION[v]
            crossing = owners[u] != owners[v]
            style = 'stroke="#c00000" stroke-dasharray="4,2" marker-end="url(#cut)"' if crossing else \
                    'stroke="#555" marker-end="url(#arrow)"'
            out.append(f'<path d="{edge_path(tx + x0, ty + y0 + 2, tx + x1, ty + y1 + 2)}" fill="none" '
                       f'stroke-width="1.3" {style}/>')
        for v, (x, y) in POSITION.items():
            out.append(f'<circle cx="{tx + x}" cy="{ty + y + 2}" r="10" fill="{RANK_FILL[owners[v]]}" stroke="#333"/>')
            out.append(f'<text x="{tx + x}" y="{ty + y + 6}" text-anchor="middle" font-size="11">{v}</text>')


def main():
    edges = read_edges()
    rows = read_results(RESULTS)
    columns, width, height = 2, 440, 172
    total_h = 50 + height * ((len(rows) + columns - 1) // columns)
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{columns * width}" height="{total_h}" '
           f'font-family="sans-serif" font-size="12">',
           '<defs><marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker>'
           '<marker id="cut" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#c00000"/></marker></defs>',
           f'<rect width="{columns * width}" height="{total_h}" fill="white"/>',
           f'<text x="{columns * width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
           'Eight vertices, two snapshots, two ranks: who owns what under each partitioner</text>',
           f'<circle cx="250" cy="36" r="7" fill="{RANK_FILL[0]}" stroke="#333"/><text x="262" y="40">rank 0</text>',
           f'<circle cx="330" cy="36" r="7" fill="{RANK_FILL[1]}" stroke="#333"/><text x="342" y="40">rank 1</text>',
           '<line x1="410" y1="36" x2="440" y2="36" stroke="#c00000" stroke-dasharray="4,2"/>'
           '<text x="446" y="40">cut edge (its source row crosses ranks)</text>']
    for i, (method, owners, cut, total, load0, load1, cap) in enumerate(rows):
        panel(out, (i % columns) * width, 50 + (i // columns) * height, method, owners, cut, total, (load0, load1), cap,
              edges)
    out.append("</svg>")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
