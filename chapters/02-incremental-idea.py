#!/usr/bin/env python3
"""Chapter 02's idea picture: ReInc's delta graphs G-(t) and G+(t) on four vertices.

    python3 chapters/02-incremental-idea.py        (from the repository root)

writes chapters/02-incremental-idea.svg. The two snapshots below are the chapter's worked example
(verify/test_incremental.c, worked_example): D->B is deleted, A->D inserted, A's features change,
all weights 1. What the panels and the table list is computed here by the rule
snapshot_delta_build() (ref/incremental.c) follows, not typed in: a row is listed when one of its
in-edges was deleted or inserted, or when the source of one of its in-edges changed; under the
symmetric (GCN) normalization a vertex whose degree changed counts as changed too, and every
changed vertex re-enters its own self term. Standard library only.
"""
import math

import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the chapters
from svg_lines import Drawing  # noqa: E402 (after the line above)

VERTICES = "ABCD"
POSITION = {"A": (70, 90), "B": (210, 90), "C": (210, 220), "D": (70, 220)}
RADIUS = 18
BEFORE = {("A", "B"), ("B", "C"), ("D", "B")}  # E(t-1), every weight 1
AFTER = {("A", "B"), ("B", "C"), ("A", "D")}   # E(t)
FEATURES_CHANGED = {"A"}

GREY, RED, GREEN, BLUE, DARK = "#555555", "#c0392b", "#1e8449", "#2e6da4", "#333333"
CHANGED_FILL = "#fad7a0"


def in_degree_with_loop(edges):
    """gcn_norm's d: weighted in-degree plus the self loop (all weights 1 here)."""
    return {v: 1 + sum(1 for (_, dst) in edges if dst == v) for v in VERTICES}


DELETED = BEFORE - AFTER
INSERTED = AFTER - BEFORE
D_BEFORE, D_AFTER = in_degree_with_loop(BEFORE), in_degree_with_loop(AFTER)
DEGREE_CHANGED = {v for v in VERTICES if D_BEFORE[v] != D_AFTER[v]}


def minus_edges(changed):
    """G-: the deleted edges plus every out-edge, at t-1, of a changed vertex (each listed once)."""
    return DELETED | {e for e in BEFORE if e[0] in changed}


def plus_edges(changed):
    """G+: the inserted edges plus every out-edge, at t, of a changed vertex."""
    return INSERTED | {e for e in AFTER if e[0] in changed}


SUM_MINUS, SUM_PLUS = minus_edges(FEATURES_CHANGED), plus_edges(FEATURES_CHANGED)
SYM_CHANGED = FEATURES_CHANGED | DEGREE_CHANGED
SYM_MINUS, SYM_PLUS = minus_edges(SYM_CHANGED), plus_edges(SYM_CHANGED)
SYMMETRIC_ONLY = (SYM_MINUS | SYM_PLUS) - (SUM_MINUS | SUM_PLUS)  # B->C: its coefficient moved

drawing = Drawing()
emit, text = drawing.emit, drawing.text


def arrow(src, dst, colour, marker, width=2, dash=None):
    """A straight edge from src's border to just short of dst's border."""
    (x1, y1), (x2, y2) = POSITION[src], POSITION[dst]
    length = math.hypot(x2 - x1, y2 - y1)
    ux, uy = (x2 - x1) / length, (y2 - y1) / length
    sx, sy = x1 + ux * (RADIUS + 2), y1 + uy * (RADIUS + 2)
    ex, ey = x2 - ux * (RADIUS + 4), y2 - uy * (RADIUS + 4)
    style = f' stroke-dasharray="{dash}"' if dash else ""
    emit(f'    <line x1="{sx:.1f}" y1="{sy:.1f}" x2="{ex:.1f}" y2="{ey:.1f}" stroke="{colour}" '
         f'stroke-width="{width}"{style} marker-end="url(#{marker})"/>')


def vertices():
    for v in VERTICES:
        x, y = POSITION[v]
        fill = CHANGED_FILL if v in FEATURES_CHANGED else "white"
        emit(f'    <circle cx="{x}" cy="{y}" r="{RADIUS}" fill="{fill}" stroke="{DARK}" stroke-width="1.5"/>')
        text(x, y + 5, v, bold=True, anchor="middle")


def degrees(d):
    corner = {"A": (40, 72), "B": (240, 72), "C": (240, 254), "D": (40, 254)}
    for v in VERTICES:
        x, y = corner[v]
        text(x, y, f"d={d[v]}", fill=BLUE, anchor="middle", bold=v in DEGREE_CHANGED)


def panel(offset, title, subtitle, title_colour=None):
    emit(f'  <g transform="translate({offset},0)">')
    text(140, 28, title, fill=title_colour, bold=True, anchor="middle")
    text(140, 46, subtitle, fill=GREY, anchor="middle")


def label_of(edge, words):
    """Where an edge's note goes: beside its middle."""
    (x1, y1), (x2, y2) = POSITION[edge[0]], POSITION[edge[1]]
    return (x1 + x2) / 2, (y1 + y2) / 2, words


def edge_note(edge, words, colour):
    x, y, _ = label_of(edge, words)
    if edge[0] == edge[1]:
        return
    if y == POSITION[edge[0]][1] == POSITION[edge[1]][1]:  # horizontal: above it
        text(x, y - 10, words, fill=colour, anchor="middle")
    elif x == POSITION[edge[0]][0] == POSITION[edge[1]][0]:  # vertical: to its right
        for k, part in enumerate(words.split("|")):
            text(x + 10, y - 5 + 16 * k, part, fill=colour)
    else:  # diagonal: along it
        text(x - 30, y + 12, words, fill=colour, rotate=-43)


def snapshot_panel(offset, title, subtitle, edges, d, marks):
    panel(offset, title, subtitle)
    for e in sorted(edges | marks.keys()):
        if e in marks:
            colour, marker, dash, note = marks[e]
            arrow(*e, colour, marker, 3 if dash is None else 2, dash)
            edge_note(e, note, colour)
        else:
            arrow(*e, GREY, "grey")
    vertices()
    degrees(d)
    emit("  </g>")


def delta_panel(offset, title, subtitle, colour, marker, listed, why):
    panel(offset, title, subtitle, colour)
    for e in sorted(listed):
        if e in SYMMETRIC_ONLY:
            arrow(*e, BLUE, "blue", 2, "3,3")
        else:
            arrow(*e, colour, marker, 3)
            edge_note(e, why(e), colour)
    vertices()
    emit("  </g>")


def why_minus(e):
    return "deleted" if e in DELETED else f"{e[0]} changed"


def why_plus(e):
    if e in INSERTED and e[0] in FEATURES_CHANGED:
        return f"inserted, and|{e[0]} changed:|listed once"
    return "inserted" if e in INSERTED else f"{e[0]} changed"


def row_cells(v):
    """The two table cells of row v: sum (and mean, max, min), then symmetric."""
    sm = sorted(e for e in SUM_MINUS if e[1] == v)
    sp = sorted(e for e in SUM_PLUS if e[1] == v)
    if not sm and not sp:
        ins = sorted(e for e in BEFORE if e[1] == v)
        reason = (f"its in-edge {ins[0][0]}→{v} and x_{ins[0][0]} did not change" if ins
                  else f"no in-edge of {v} changed")
        left = f'<tspan fill="#7f8c8d">not listed: {reason}</tspan>'
    else:
        parts = []
        if sm:
            parts.append(f'<tspan fill="{RED}">' + ", ".join(
                f"− {a}→{b}" + (" (old x_A)" if a in FEATURES_CHANGED else "") for a, b in sm) + "</tspan>")
        if sp:
            parts.append(f'<tspan fill="{GREEN}">' + ", ".join(
                f"+ {a}→{b}" + (" (new x_A)" if a in FEATURES_CHANGED else "") for a, b in sp) + "</tspan>")
        before = sum(1 for e in BEFORE if e[1] == v)
        after = sum(1 for e in AFTER if e[1] == v)
        scale = f"1/{before}" if before else "empty row"
        left = ", ".join(parts) + f"; mean: {scale} → 1/{after}"
    sym_edges = sorted(e for e in SYM_MINUS | SYM_PLUS if e[1] == v)
    self_term = v in SYM_CHANGED
    if any(e in SYMMETRIC_ONLY for e in sym_edges) and not self_term and len(sym_edges) == 1:
        a, b = sym_edges[0]
        right = (f'<tspan fill="{BLUE}" font-weight="bold">re-entered: − {a}→{b} with 1/√{D_BEFORE[a]}, '
                 f"+ {a}→{b} with 1/√{D_AFTER[a]} (d_{a} changed)</tspan>")
    elif sym_edges:
        edges = "edge" if len(sym_edges) == 1 else "edges"
        right = (f"the same {edges}, and {v}'s self term; output scale "
                 f"1/√{D_BEFORE[v]} → 1/√{D_AFTER[v]}")
    elif self_term:
        right = f"listed: its self term x_{v} / d_{v} changed with x_{v} (−old, +new)"
    else:
        right = '<tspan fill="#7f8c8d">not listed</tspan>'
    return left, right


def main():
    emit('<?xml version="1.0" encoding="UTF-8"?>')
    emit("<!-- Chapter 02: ReInc's delta graphs G-(t) and G+(t) as snapshot_delta_build() (ref/incremental.c)")
    emit("     lists them, on four vertices. Drawn by chapters/02-incremental-idea.py: do not edit. -->")
    emit('<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="560" viewBox="0 0 1100 560"')
    emit('     font-family="Helvetica, Arial, sans-serif" font-size="13">')
    emit("  <defs>")
    for name, colour in (("grey", GREY), ("red", RED), ("green", GREEN), ("blue", BLUE)):
        emit(f'    <marker id="{name}" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
             f'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{colour}"/></marker>')
    emit("  </defs>")
    emit('  <rect width="1100" height="560" fill="white"/>')
    changed = ", ".join(f"x_{v}" for v in sorted(FEATURES_CHANGED))
    snapshot_panel(0, "snapshot t−1", "edges E(t−1), features x(t−1)", BEFORE, D_BEFORE,
                   {e: (RED, "red", "6,4", "deleted at t") for e in DELETED})
    snapshot_panel(275, "snapshot t", f"edges E(t), features x(t): {changed} changed", AFTER, D_AFTER,
                   {e: (GREEN, "green", None, "inserted") for e in INSERTED})
    delta_panel(550, "G⁻(t): taken away, with x(t−1)", "deleted edges + out-edges of A at t−1", RED, "red",
                SUM_MINUS | (SYMMETRIC_ONLY & SYM_MINUS), why_minus)
    delta_panel(825, "G⁺(t): added, with x(t)", "inserted edges + out-edges of A at t", GREEN, "green",
                SUM_PLUS | (SYMMETRIC_ONLY & SYM_PLUS), why_plus)
    moved = " and ".join(f'<tspan font-weight="bold" fill="{BLUE}">d_{v} from {D_BEFORE[v]} to {D_AFTER[v]}</tspan>'
                         for v in sorted(DEGREE_CHANGED))
    text(20, 282, "d = weighted in-degree plus the self loop (all weights 1); the structural change moves "
         + moved + ".")
    only = ", ".join(f"{a}→{b}" for a, b in sorted(SYMMETRIC_ONLY))
    text(20, 300, f"Dotted blue {only}: in G⁻ and G⁺ for the symmetric aggregator only, because its "
         f"coefficient w / √d_{sorted(SYMMETRIC_ONLY)[0][0]} changed.")
    text(20, 328, "Rows of the aggregation y = A(t) x(t) the delta lists (rows are destinations; each listed row "
         "also stores its new output scale)", bold=True)
    emit(f'  <rect x="20" y="340" width="1060" height="28" fill="#34495e"/>')
    text(40, 359, "row", fill="white", bold=True)
    text(100, 359, "sum, mean, max, min", fill="white", bold=True)
    text(520, 359, "symmetric (GCN: w / √(d_u d_v), self loops)", fill="white", bold=True)
    for k, v in enumerate(VERTICES):
        y = 368 + 36 * k
        emit(f'  <rect x="20" y="{y}" width="1060" height="36" fill="{"#f4f6f7" if k % 2 == 0 else "white"}"/>')
        left, right = row_cells(v)
        text(40, y + 23, v, bold=True)
        text(100, y + 23, left)
        text(520, y + 23, right)
    text(20, 532, "An edge that is both inserted and an out-edge of a changed vertex (A→D) is one entry, as is one "
         "both deleted and", fill=GREY)
    text(20, 550, "out of a changed vertex. Max and min list the same entries as sum. Rows not listed keep their "
         "value exactly.", fill=GREY)
    emit("</svg>")
    drawing.save(__file__, "02-incremental-idea.svg")


main()
