#!/usr/bin/env python3
"""Chapter 04's idea picture: one rank's batch of the worked example read naively (one memory row
per remote occurrence) and through Sven's Algorithm 2 (each unique remote row once, expanded by Psi).

    python3 chapters/04-dispatch-idea.py chapters/04-dispatch-idea.svg

Standard library only. The stream is verify/test_dispatch.c's worked example (JODIE's entries
[sources; destinations; negatives] of events 0-4 on rank 0 and 5-9 on rank 1, even vertex ids owned
by rank 0 and odd by rank 1); the counts the script prints are the ones that test asserts."""
import sys

# events 0-9: (source, destination, negative), as in test_dispatch's worked example
EVENTS = [(1, 2, 4), (3, 4, 7), (1, 2, 5), (5, 1, 3), (2, 6, 1),
          (1, 4, 6), (4, 5, 3), (2, 1, 7), (4, 2, 2), (1, 5, 4)]
RANKS = 2


def owner(v):
    return v % RANKS  # interval:1 on 2 ranks: even ids on rank 0, odd on rank 1


def entries(rank):
    """V_o of a rank's slice: its sources, then destinations, then negatives."""
    mine = EVENTS[5 * rank:5 * rank + 5]
    return [e[0] for e in mine] + [e[1] for e in mine] + [e[2] for e in mine]


def plan(v_o):
    """Algorithm 2's V_u (first appearance) and Psi (V_o[k] = V_u[Psi[k]])."""
    v_u, psi = [], []
    for v in v_o:
        if v not in v_u:
            v_u.append(v)
        psi.append(v_u.index(v))
    return v_u, psi


def totals():
    """Both ranks: rows a naive read fetches, rows Sven fetches, winning writes sent to their owners
    (a vertex's write is its latest positive occurrence in the whole batch, key 2 event + role)."""
    naive = sum(owner(v) != r for r in range(RANKS) for v in entries(r))
    sven = sum(owner(v) != r for r in range(RANKS) for v in plan(entries(r))[0])
    winner = {}  # vertex -> (key, rank that holds the winning event)
    for j, (src, dst, _) in enumerate(EVENTS):
        for role, v in ((0, src), (1, dst)):
            winner[v] = max(winner.get(v, (-1, 0)), (2 * j + role, j // 5))
    written = sum(owner(v) != rank for v, (_, rank) in winner.items())
    return naive, sven, written


COLOUR = {0: "#cfe3f7", 1: "#f9dcc4"}  # owner rank 0 blue, rank 1 orange


def box(out, x, y, text, fill, w=30, h=26, dim=False):
    out.append(f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="3" fill="{fill}" '
               f'stroke="{"#bbb" if dim else "#555"}" stroke-width="1"/>')
    out.append(f'<text x="{x + w / 2}" y="{y + 18}" font-size="13" text-anchor="middle" '
               f'fill="{"#999" if dim else "#222"}">{text}</text>')


def label(out, x, y, text, size=12, anchor="start", bold=False, colour="#222"):
    text = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    out.append(f'<text x="{x}" y="{y}" font-size="{size}" text-anchor="{anchor}" '
               f'font-weight="{"bold" if bold else "normal"}" fill="{colour}">{text}</text>')


def arrow(out, x1, y1, x2, y2, colour="#c0504d", width=1.2):
    out.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="{colour}" stroke-width="{width}" '
               f'marker-end="url(#head)"/>')


def draw():
    v_o = entries(0)
    v_u, psi = plan(v_o)
    remote = [v for v in v_u if owner(v) != 0]
    naive = sum(owner(v) != 0 for v in v_o)
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="490" font-family="sans-serif">',
           '<defs><marker id="head" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
           '<path d="M0,0 L8,4 L0,8 z" fill="#c0504d"/></marker></defs>',
           '<rect width="1100" height="490" fill="white"/>']
    label(out, 550, 24, "Rank 0 reads the memory rows of its 15 entries (events 0-4); rank 1 owns the odd "
          "vertices (orange), rank 0 the even (blue)", 14, "middle", True)
    x0, step = 150, 34
    # naive: every remote occurrence is a row on the wire
    label(out, 20, 62, "naive", 13, bold=True)
    label(out, 20, 80, "one row per", 11)
    label(out, 20, 94, "occurrence", 11)
    for k, v in enumerate(v_o):
        box(out, x0 + k * step, 60, v, COLOUR[owner(v)])
        if owner(v) != 0:
            arrow(out, x0 + k * step + 15, 150, x0 + k * step + 15, 90)
    out.append(f'<rect x="{x0}" y="150" width="{15 * step - 4}" height="24" fill="{COLOUR[1]}" stroke="#555"/>')
    label(out, x0 + 15 * step / 2, 167, "rank 1's memory rows", 12, "middle")
    label(out, x0 + 15 * step + 20, 110, f"{naive} rows fetched", 13, bold=True, colour="#c0504d")
    label(out, x0 + 15 * step + 20, 128, "(vertex 1 four times)", 11)
    for k, name in ((0, "src"), (5, "dst"), (10, "neg")):
        label(out, x0 + k * step + 2.5 * step - 2, 52, name, 10, "middle", colour="#777")
    # Sven: unique, fetch once, expand by Psi
    top = 230
    label(out, 20, top + 2, "Sven", 13, bold=True)
    label(out, 20, top + 20, "Algorithm 2", 11)
    for k, v in enumerate(v_o):
        box(out, x0 + k * step, top, v, COLOUR[owner(v)])
    label(out, x0 - 8, top + 18, "V_o", 12, "end")
    ux, uy = x0 + 4 * step, top + 110
    label(out, ux - 8, uy + 18, "V_u", 12, "end")
    for i, v in enumerate(v_u):
        box(out, ux + i * step, uy, v, COLOUR[owner(v)])
    for k, i in enumerate(psi):  # Psi: every entry points at its unique row
        out.append(f'<line x1="{ux + i * step + 15}" y1="{uy}" x2="{x0 + k * step + 15}" y2="{top + 26}" '
                   f'stroke="#4f81bd" stroke-width="0.8" opacity="0.7"/>')
    label(out, ux + 7 * step + 10, top + 70, "Psi copies each unique row back to every occurrence", 11,
          colour="#4f81bd")
    store = uy + 80
    out.append(f'<rect x="{ux}" y="{store}" width="{7 * step - 4}" height="24" fill="{COLOUR[1]}" stroke="#555"/>')
    label(out, ux + 7 * step / 2, store + 17, "rank 1's memory rows", 12, "middle")
    for i, v in enumerate(v_u):
        if owner(v) != 0:
            arrow(out, ux + i * step + 15, store, ux + i * step + 15, uy + 30)
    label(out, ux + 7 * step + 20, uy + 40, f"{len(remote)} rows fetched: {' '.join(map(str, remote))}", 13,
          bold=True, colour="#c0504d")
    label(out, ux + 7 * step + 20, uy + 58, "each remote vertex once", 11)
    both = totals()
    label(out, 550, 478, f"Both ranks: naive {both[0]} rows, Sven {both[1]} rows, and {both[2]} winning writes sent "
          "back to their owners (verify/test_dispatch.c asserts all three)", 12, "middle")
    out.append("</svg>")
    return "\n".join(out) + "\n", naive, len(remote)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: chapters/04-dispatch-idea.py OUT.svg")
    svg, naive, fetched = draw()
    with open(sys.argv[1], "w") as f:
        f.write(svg)
    print(f"rank 0: {len(entries(0))} entries, V_u {plan(entries(0))[0]}, naive fetch {naive}, Sven fetch {fetched}")
    print("both ranks: naive fetch %d, Sven fetch %d, Sven write-back %d" % totals())
    print(f"wrote {sys.argv[1]}")
