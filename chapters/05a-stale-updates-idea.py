#!/usr/bin/env python3
"""Chapter 05a's picture of its idea, drawn (no data; Python's standard library only):

    python3 chapters/05a-stale-updates-idea.py [OUT.svg]      (default: chapters/05a-stale-updates-idea.svg)

Three timelines of the chapter's worked example: two ranks, one parameter w = 0, SGD with lr 1/2,
rank 0's window with the gradient w - 4, rank 1's with 2w (verify/test_async.c,
worked_example_two_ranks, asserts every w printed here). Rank 1 computes a little slower than
rank 0, so a rank that must meet the other waits (hatched). Each compute box says which version
of w the step reads; a dashed red line is an update, with the value it
leaves (on one lane only where that rank alone applies it).

 - synchronous: each step's gradients are summed (all-reduce) and applied before the next step
   reads w, so rank 0 waits for rank 1 twice and both read w0, then w1;
 - staleness 1 (Sven): step k's all-reduce runs behind step k+1's compute, which therefore
   reads w as it stood before (w0 again at step 1), and the last gradient is applied by a flush;
 - averaging every 2 steps (DynaHB): each rank steps its own replica without any exchange and
   the two replicas are averaged once, at the end, where rank 0 waits for rank 1 once.
"""
import sys

COMPUTE = (1.0, 1.4)  # seconds of compute per step on rank 0 and rank 1 (rank 1 is slower)
COMM = 0.5            # an all-reduce, or the all-gather of an average
SCALE = 165.0         # pixels per time unit
LEFT, TOP, LANE, GAP = 170, 70, 38, 20
PANEL = 2 * LANE + GAP + 62

RANK_FILL = ("#cfe2f3", "#d9ead3")
COMM_FILL = "#f9cb9c"

# Each panel: (title, [(rank or None for both, start, end, kind, label)], [(time, text)] updates)
# kind: compute, wait, comm (drawn across both lanes), bg (a non-blocking all-reduce, thin).
PANELS = [
    ("synchronous (chapter 01a): every step reads the newest w",
     [(0, 0.0, 1.0, "compute", "reads w0 = 0"), (1, 0.0, 1.4, "compute", "reads w0 = 0"),
      (0, 1.0, 1.4, "wait", ""), (None, 1.4, 1.9, "comm", "all-reduce|g0 = -2"),
      (0, 1.9, 2.9, "compute", "reads w1 = 1"), (1, 1.9, 3.3, "compute", "reads w1 = 1"),
      (0, 2.9, 3.3, "wait", ""), (None, 3.3, 3.8, "comm", "all-reduce|g1 = -0.5")],
     [(1.9, "w1 = 1"), (3.8, "w2 = 1.25")]),
    ("staleness 1 (Sven, Eq. 13): step 1 reads w0 again; g0 lands a step late",
     [(0, 0.0, 1.0, "compute", "reads w0 = 0"), (1, 0.0, 1.4, "compute", "reads w0 = 0"),
      (None, 1.4, 1.9, "bg", "g0 = -2 summed behind step 1"),
      (0, 1.0, 2.0, "compute", "reads w0 = 0"), (1, 1.4, 2.8, "compute", "reads w0 = 0"),
      (0, 2.0, 2.8, "wait", "g0 applied: w = 1; waits"), (None, 2.8, 3.3, "comm", "flush|g1 = -2")],
     [(2.0, "", 0), (2.8, "", 1), (3.3, "w = 2")]),
    ("averaging every 2 steps (DynaHB): each rank its own w, one average",
     [(0, 0.0, 1.0, "compute", "reads own 0"), (1, 0.0, 1.4, "compute", "reads own 0"),
      (0, 1.0, 2.0, "compute", "reads own 2"), (1, 1.4, 2.8, "compute", "reads own 0"),
      (0, 2.0, 2.8, "wait", ""), (None, 2.8, 3.3, "comm", "average|(3 + 0) / 2")],
     [(3.3, "both w = 1.5")]),
]


def x(t):
    return LEFT + SCALE * t


def rect(out, x0, y0, w, h, fill, extra=""):
    out.append(f'<rect x="{x0:.1f}" y="{y0:.1f}" width="{w:.1f}" height="{h:.1f}" fill="{fill}" '
               f'stroke="#333333" stroke-width="1"{extra}/>')


def text(out, x0, y0, s, anchor="middle", size=12, weight="normal", fill="#222222"):
    out.append(f'<text x="{x0:.1f}" y="{y0:.1f}" text-anchor="{anchor}" font-size="{size}" '
               f'font-weight="{weight}" fill="{fill}">{s}</text>')


def panel(out, index, title, boxes, updates):
    top = TOP + index * PANEL
    text(out, 20, top - 14, title, anchor="start", size=14, weight="bold")
    lane_y = (top, top + LANE + GAP)
    for rank in (0, 1):
        text(out, LEFT - 12, lane_y[rank] + LANE / 2 + 4, f"rank {rank}", anchor="end", size=13)
    for rank, start, end, kind, label in boxes:
        width = SCALE * (end - start)
        if kind == "compute":
            rect(out, x(start), lane_y[rank], width, LANE, RANK_FILL[rank])
            text(out, x(start) + width / 2, lane_y[rank] + LANE / 2 + 4, label)
        elif kind == "wait":
            rect(out, x(start), lane_y[rank] + 6, width, LANE - 12, "url(#hatch)")
            text(out, x(start) + width / 2, lane_y[rank] + LANE / 2 + 4, label or "waits", size=11, fill="#555555")
        elif kind == "comm":
            rect(out, x(start), lane_y[0], width, 2 * LANE + GAP, COMM_FILL)
            words = label.split("|")
            for line, word in enumerate(words):
                text(out, x(start) + width / 2, lane_y[0] + LANE + GAP / 2 + 4 + 15 * (line - (len(words) - 1) / 2),
                     word, size=11)
        else:  # a non-blocking all-reduce running behind compute: a thin bar between the lanes
            rect(out, x(start), lane_y[0] + LANE + 4, width, GAP - 8, COMM_FILL)
            text(out, x(start) - 6, lane_y[0] + LANE + GAP / 2 + 4, label, anchor="end", size=11, fill="#8a4b08")
    bottom = lane_y[1] + LANE
    for time, label, *rank in updates:  # a rank: the update lands on that rank's lane only
        y0, y1 = (lane_y[rank[0]] - 4, lane_y[rank[0]] + LANE + 4) if rank else (top - 4, bottom + 6)
        out.append(f'<line x1="{x(time):.1f}" y1="{y0:.1f}" x2="{x(time):.1f}" y2="{y1:.1f}" '
                   f'stroke="#c0392b" stroke-width="2" stroke-dasharray="5,3"/>')
        if label:
            text(out, x(time) + 4, bottom + 20, label, anchor="middle", size=12, weight="bold", fill="#c0392b")


def main():
    target = sys.argv[1] if len(sys.argv) > 1 else "chapters/05a-stale-updates-idea.svg"
    width = int(LEFT + SCALE * 3.8 + 90)
    height = TOP + len(PANELS) * PANEL + 10
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif">',
           '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" '
           'patternTransform="rotate(45)"><rect width="6" height="6" fill="#ffffff"/>'
           '<line x1="0" y1="0" x2="0" y2="6" stroke="#999999" stroke-width="2"/></pattern></defs>',
           f'<rect width="{width}" height="{height}" fill="#ffffff"/>']
    text(out, 20, 24, "Two ranks, two steps: w = 0, gradients w - 4 (rank 0) and 2w (rank 1), SGD with lr 1/2; "
         "time runs to the right", anchor="start", size=13, fill="#444444")
    for index, (title, boxes, updates) in enumerate(PANELS):
        panel(out, index, title, boxes, updates)
    out.append("</svg>")
    with open(target, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
