#!/usr/bin/env python3
"""Chapter 06b's idea picture: the example of chapter 06a split as DGC's chunks (and METIS) split it, seen from each
rank. Exchange mode (left, one column a snapshot): a rank holds its owned rows and, for each
product, fetches its halo rows (dashed) from their owners and gives their gradients back. Cache
mode (right): a rank holds its owned rows and the closure of its in-neighbours over every snapshot,
once, and sends nothing but gradients.

The edges come from verify/partition_example.h; the owners and the worked product's numbers from
the lines verify/test_partition.c (chapter_example) and verify/test_partition_part.c
(worked_exchange_product) printed, kept in a results file. Python's standard library only.

    python3 chapters/06b-partitioned-training-idea.py [RESULTS] [OUT]
    (defaults: bench/results/06-partition/chapter_example.txt, chapters/06b-partitioned-training-idea.svg)
"""
import importlib.util
import os
import re
import sys

RESULTS = sys.argv[1] if len(sys.argv) > 1 else "bench/results/06-partition/chapter_example.txt"
OUT = sys.argv[2] if len(sys.argv) > 2 else "chapters/06b-partitioned-training-idea.svg"

# The example's reader and its drawing helpers live beside this script, in chapter 06a's.
_spec = importlib.util.spec_from_file_location(
    "partitioners_idea", os.path.join(os.path.dirname(os.path.abspath(__file__)), "06a-partitioners-idea.py"))
idea = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(idea)


def worked_numbers(path):
    """y_1, the gradient handed back and the sum at the owner, from worked_exchange_product's line."""
    for line in open(path, encoding="utf-8"):
        m = re.search(r"y_1 = .*? = ([\d.]+) .*dx_2 handed back ([\d.]+), summed at rank 1 ([\d.]+)", line)
        if m:
            return m.group(1), m.group(2), m.group(3)
    sys.exit(f"{path}: no worked_exchange_product line (run verify/test_partition_part first)")


def rank_box(out, x, y, w, h, title, fill):
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" fill-opacity="0.18" stroke="#888"/>')
    out.append(f'<text x="{x + 8}" y="{y + 16}" font-weight="bold" font-size="12">{title}</text>')


def vertex(out, x, y, v, fill, dashed=False):
    dash = ' stroke-dasharray="3,2"' if dashed else ""
    out.append(f'<circle cx="{x}" cy="{y}" r="11" fill="{fill}" stroke="#333"{dash}/>')
    out.append(f'<text x="{x}" y="{y + 4}" text-anchor="middle" font-size="11">{v}</text>')


def arcs(out, rows, x0, y, step, pairs, highlight=None):
    """The edges u -> v among a rank's rows, as arcs above the row of vertices (the row's own
    in-edges: what its products read); the edges into `highlight` drawn bold."""
    for (u, v) in sorted(set(pairs)):
        xu, xv = x0 + rows.index(u) * step, x0 + rows.index(v) * step
        lift = 10 + 7 * abs(rows.index(u) - rows.index(v))
        bold = v == highlight
        out.append(f'<path d="M{xu},{y - 11} Q{(xu + xv) / 2},{y - 11 - 2 * lift} {xv + (3 if xv > xu else -3)},{y - 12}" '
                   f'fill="none" stroke="{"#000" if bold else "#777"}" stroke-width="{1.8 if bold else 1}" '
                   f'marker-end="url(#a)"/>')


def main():
    edges = idea.read_edges()
    owners = {m: o for (m, o, *_rest) in idea.read_results(RESULTS)}["dgc"]
    y1, returned, summed = worked_numbers(RESULTS)
    n = len(owners)
    owned = [[v for v in range(n) if owners[v] == r] for r in range(2)]
    halo = [[sorted({u for (s, u, v) in edges if s == t and owners[v] == r and owners[u] != r}) for t in range(2)]
            for r in range(2)]
    closure = [sorted({u for (s, u, v) in edges if owners[v] == r and owners[u] != r}) for r in range(2)]
    fill = idea.RANK_FILL
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="900" height="470" font-family="sans-serif" font-size="12">',
           '<defs><marker id="a" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="6" markerHeight="6" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#333"/></marker></defs>',
           '<rect width="900" height="470" fill="white"/>',
           '<text x="450" y="20" text-anchor="middle" font-size="14" font-weight="bold">'
           'Owners, halos and cache closures: the example split in its two groups</text>',
           '<text x="290" y="44" text-anchor="middle" font-weight="bold">exchange mode: each product fetches its halo</text>',
           '<text x="740" y="44" text-anchor="middle" font-weight="bold">cache mode: the closure, held once</text>']
    step = 44
    for t in range(2):
        x0 = 20 + t * 280
        out.append(f'<text x="{x0 + 130}" y="66" text-anchor="middle" fill="#666">snapshot t = {t}</text>')
        for r in range(2):
            y0 = 76 + r * 160
            rows = owned[r] + halo[r][t]
            rank_box(out, x0, y0, 260, 140, f"rank {r}: {len(owned[r])} owned + {len(halo[r][t])} halo", fill[r])
            arcs(out, rows, x0 + 30, y0 + 100, step,
                 [(u, v) for (s, u, v) in edges if s == t and owners[v] == r], highlight=1 if (r, t) == (0, 0) else None)
            for i, v in enumerate(rows):
                vertex(out, x0 + 30 + i * step, y0 + 100, v, fill[owners[v]], dashed=v not in owned[r])
            for v in halo[r][t]:
                out.append(f'<text x="{x0 + 30 + rows.index(v) * step}" y="{y0 + 128}" text-anchor="middle" '
                           f'font-size="10">fetched</text>')
        if halo[0][t]:
            h = halo[0][t][0]
            xs, xe = x0 + 30 + owned[1].index(h) * step, x0 + 30 + len(owned[0]) * step
            out.append(f'<path d="M{xs},{236 + 100 - 12} C{xs + 40},{250} {xe + 20},{240} {xe + 4},{76 + 128 + 6}" '
                       f'fill="none" stroke="#c00000" stroke-dasharray="4,2" marker-end="url(#a)"/>')
            out.append(f'<text x="{x0 + 130}" y="{236 + 156}" text-anchor="middle" font-size="11">'
                       f'row {h} to rank 0 forward; its gradient back</text>')
    # The worked product (t = 0, rank 0, the bold arcs).
    out.append(f'<text x="20" y="420" font-size="12">t = 0, rank 0, row 1 (bold in-edges): '
               f'y_1 = (x_1 + x_5 + x_2) / 3 = (2 + 6 + 3) / 3 = {y1}</text>')
    out.append(f'<text x="20" y="440" font-size="12">backward with dy = 1: rank 0 gives dx_2 = {returned} back to '
               f'rank 1, which adds its own 1/3 (self loop): {summed}</text>')
    for r in range(2):
        x0, y0 = 600, 76 + r * 160
        rows = owned[r] + closure[r]
        rank_box(out, x0, y0, 280, 140, f"rank {r}: {len(owned[r])} owned + {len(closure[r])} cached", fill[r])
        arcs(out, rows, x0 + 26, y0 + 100, 42, [(u, v) for (s, u, v) in edges if owners[v] == r])
        for i, v in enumerate(rows):
            vertex(out, x0 + 26 + i * 42, y0 + 100, v, fill[owners[v]], dashed=v not in owned[r])
        cached = ", ".join(str(v) for v in closure[r]) or "none"
        out.append(f'<text x="{x0 + 8}" y="{y0 + 132}" font-size="11">closure, 1 hop over both snapshots: {cached}</text>')
    total = sum(len(owned[r]) + len(closure[r]) for r in range(2))
    out.append(f'<text x="740" y="420" text-anchor="middle" font-size="12">{total} rows held for {n} vertices '
               f'(replication {total / n:.2f})</text>')
    out.append('<text x="740" y="440" text-anchor="middle" font-size="12">no feature sent while training</text>')
    out.append("</svg>")
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
