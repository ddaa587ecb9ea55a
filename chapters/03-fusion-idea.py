#!/usr/bin/env python3
"""Chapter 03's idea picture: DGC's temporal fusion of A1..A4, B1 B2, C1 C2.

    python3 chapters/03-fusion-idea.py        (from the repository root)

writes chapters/03-fusion-idea.svg: (a) the three vertex sequences, (b) the zero-padded plan (one
sequence per lane, every lane computed for T_max steps), (c) the fused lanes, packed here by the
rule opt_fusion_plan_lanes() (opt/fusion.c) follows: first-fit decreasing into lanes of T_max
steps, lanes renumbered fullest first, a reset at every sequence start; and (d) where the carried
state enters a GRU step, which is why DGC's Eq. 4 mask on the update gate is not enough. The plans
and their step counts are computed from the lengths below, not typed in (verify/test_fusion.c,
worked_example, asserts the same plans). Standard library only.
"""
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the chapters
from svg_lines import Drawing  # noqa: E402 (after the line above)

SEQUENCES = [("A", 4, "#aed6f1"), ("B", 2, "#f9e79f"), ("C", 2, "#abebc6")]
T_MAX = max(length for _, length, _ in SEQUENCES)
CELL, PITCH, ROW = 46, 52, 44
RED, GREY, BLUE, DARK = "#c0392b", "#555555", "#2e6da4", "#333333"

drawing = Drawing()
emit, text = drawing.emit, drawing.text


def padded_plan():
    """One sequence per lane: [(lane, start step, sequence index)]."""
    return [(i, 0, i) for i in range(len(SEQUENCES))]


def fused_plan():
    """First-fit decreasing into lanes of T_MAX steps, then lanes renumbered fullest first."""
    order = sorted(range(len(SEQUENCES)), key=lambda i: (-SEQUENCES[i][1], i))
    used, placed = [], []
    for i in order:
        length = SEQUENCES[i][1]
        lane = next((k for k, u in enumerate(used) if u + length <= T_MAX), None)
        if lane is None:
            lane = len(used)
            used.append(0)
        placed.append((lane, used[lane], i))
        used[lane] += length
    rank = {lane: r for r, lane in enumerate(sorted(range(len(used)), key=lambda k: (-used[k], k)))}
    return [(rank[lane], start, i) for lane, start, i in placed], len(used)


def cell(x, y, fill, label=None, hatched=False):
    if hatched:
        emit(f'      <rect x="{x}" y="{y}" width="{CELL}" height="32" fill="url(#hatch)" stroke="#999999"/>')
    else:
        emit(f'      <rect x="{x}" y="{y}" width="{CELL}" height="32" fill="{fill}" stroke="{DARK}"/>'
             f'<text x="{x + CELL // 2}" y="{y + 21}">{label}</text>')


def grid(left, plan, lanes, pad):
    """Cells of a plan; returns how many steps it computes."""
    text_steps = "".join(f'<text x="{left + 23 + PITCH * t}" y="60">{"t=0" if t == 0 else t}</text>'
                         for t in range(T_MAX))
    emit(f'    <g fill="{GREY}" text-anchor="middle">{text_steps}</g>')
    for lane in range(lanes):
        text(0, 85 + ROW * lane, f"lane {lane}")
    emit('    <g font-weight="bold" text-anchor="middle">')
    computed, resets = 0, []
    for lane, start, i in sorted(plan):
        name, length, colour = SEQUENCES[i]
        for p in range(length):
            cell(left + PITCH * (start + p), 64 + ROW * lane, colour, f"{name}{p + 1}")
        resets.append((lane, start))
        computed += length
        if pad:
            for t in range(length, T_MAX):
                cell(left + PITCH * t, 64 + ROW * lane, None, hatched=True)
            computed += T_MAX - length
    emit("    </g>")
    bars = "".join(f'<rect x="{left - 4 + PITCH * start}" y="{62 + ROW * lane}" width="6" height="36"/>'
                   for lane, start in resets)
    emit(f'    <g fill="{RED}">{bars}</g>')
    return computed, resets


def gru_step_panel():
    text(20, 310, "(d) where the carried state enters the GRU step at C1 (carried state: B2's h)", bold=True)
    emit(f'  <rect x="20" y="392" width="120" height="40" fill="#f9e79f" stroke="{DARK}"/>')
    text(80, 417, "h(t−1) = h_B2", anchor="middle")
    emit(f'  <line x1="140" y1="412" x2="206" y2="412" stroke="{GREY}" stroke-width="2" marker-end="url(#arrow)"/>')
    emit(f'  <rect x="210" y="388" width="150" height="48" fill="white" stroke="{RED}" stroke-width="2"/>')
    for y, s in ((408, "twofold: h_prev ="), (426, "reset ? 0 : h(t−1)"), (456, "one select cuts all four"),
                 (472, "paths (h and c for LSTM)")):
        text(285, y, s, fill=RED, anchor="middle")
    lines = [("r = σ(W_ir x + b_ir + W_hr h_prev + b_hr)", "reset gate", False),
             ("z = σ(W_iz x + b_iz + W_hz h_prev + b_hz)", "update gate: the only one|DGC's Eq. 4 masks (×M)", True),
             ("n = tanh(W_in x + b_in + r ⊙ (W_hn h_prev + b_hn))", "candidate", False),
             ("h' = (1 − z) ⊙ n + z ⊙ h_prev", "interpolation", False)]
    emit(f'  <g stroke="{GREY}" stroke-width="2" fill="none">')
    for k in range(len(lines)):
        y = 336 + 44 * k
        bend = 420 if k in (0, len(lines) - 1) else 430
        emit(f'    <path d="M360,412 C{bend},412 {bend},{y} 476,{y}" marker-end="url(#arrow)"/>')
    emit("  </g>")
    emit(f'  <circle cx="437" cy="383" r="11" fill="white" stroke="{BLUE}" stroke-width="2"/>')
    text(437, 388, "×M", fill=BLUE, bold=True, anchor="middle")
    for k, (formula, role, masked) in enumerate(lines):
        y = 320 + 44 * k
        stroke = f'stroke="{BLUE}" stroke-width="2"' if masked else 'stroke="#999999"'
        emit(f'  <rect x="480" y="{y}" width="360" height="32" fill="#fdfefe" {stroke}/>')
        text(490, y + 21, formula)
        for j, part in enumerate(role.split("|")):
            text(852, y + 21 + 16 * j, part, fill=BLUE if masked else None)
    text(20, 516, "With the mask on the update gate only, h_B2 still reaches C1 through r, n and h' "
         "(the worked example in the chapter puts numbers on it).", fill=BLUE)
    text(20, 536, "Masking the state itself gives every step exactly the reference's inputs: outputs "
         "bitwise equal.", fill=RED)


def main():
    emit('<?xml version="1.0" encoding="UTF-8"?>')
    emit("<!-- Chapter 03: DGC's temporal fusion as opt/fusion.c plans it (ref/fusion_plan.h). Drawn by")
    emit("     chapters/03-fusion-idea.py: do not edit. -->")
    emit('<svg xmlns="http://www.w3.org/2000/svg" width="1100" height="560" viewBox="0 0 1100 560"')
    emit('     font-family="Helvetica, Arial, sans-serif" font-size="13">')
    emit("  <defs>")
    emit('    <marker id="arrow" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="7" markerHeight="7" '
         f'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="{GREY}"/></marker>')
    emit('    <pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)">'
         '<rect width="6" height="6" fill="#eeeeee"/><line x1="0" y1="0" x2="0" y2="6" stroke="#bbbbbb" '
         'stroke-width="2"/></pattern>')
    emit("  </defs>")
    emit('  <rect width="1100" height="560" fill="white"/>')
    useful = sum(length for _, length, _ in SEQUENCES)

    emit('  <g transform="translate(20,0)">')
    text(0, 26, "(a) three vertex sequences", bold=True)
    text(0, 44, "one step per snapshot the vertex lives in", fill=GREY)
    emit('    <g font-weight="bold" text-anchor="middle">')
    for k, (name, length, colour) in enumerate(SEQUENCES):
        for p in range(length):
            cell(40 + PITCH * p, 64 + ROW * k, colour, f"{name}{p + 1}")
    emit("    </g>")
    for k, (name, _, _) in enumerate(SEQUENCES):
        text(0, 85 + ROW * k, name)
    text(0, 214, f"{useful} useful steps; each sequence", fill=GREY)
    text(0, 230, "starts from h = 0 (and c = 0)", fill=GREY)
    emit("  </g>")

    emit('  <g transform="translate(300,0)">')
    text(0, 26, "(b) zero-padded: one sequence per lane", bold=True)
    text(0, 44, f"every lane computed for T_max = {T_MAX} steps", fill=GREY)
    computed, _ = grid(90, padded_plan(), len(SEQUENCES), pad=True)
    emit(f'    <text x="0" y="214">computed {computed} steps for {useful} useful: '
         f'<tspan font-weight="bold">{computed / useful:.2f}</tspan></text>')
    text(0, 230, "hatched: padding, computed and thrown away", fill=GREY)
    emit("  </g>")

    plan, lanes = fused_plan()
    emit('  <g transform="translate(640,0)">')
    text(0, 26, "(c) fused lanes (first-fit decreasing)", bold=True)
    text(0, 44, "(A1..A4) beside (B1, B2, C1, C2), as DGC's Fig. 9c", fill=GREY)
    computed, resets = grid(90, plan, lanes, pad=False)
    for lane, start in resets:
        if start > 0:  # a sequence that starts mid-lane: the reset the paper's mask misses
            x = 90 + PITCH * start - 1
            text(x, 160 + ROW * (lane - 1), "reset: B2's state", fill=RED, anchor="middle")
            text(x, 176 + ROW * (lane - 1), "does not reach C1", fill=RED, anchor="middle")
    emit(f'    <text x="0" y="214">computed {computed} steps for {useful} useful: '
         f'<tspan font-weight="bold">{computed / useful:.2f}</tspan></text>')
    text(0, 230, "active lanes per step are a prefix (fullest lane first)", fill=GREY)
    emit("  </g>")

    emit(f'  <rect x="20" y="250" width="6" height="16" fill="{RED}"/>')
    text(34, 263, "reset(t, lane) = 1: the carried state is replaced by zero before the step, h_prev = 0 (and "
         "c_prev = 0 for the LSTM); set at t = 0 and at the first step of every sequence.")
    emit('  <line x1="20" y1="284" x2="1080" y2="284" stroke="#cccccc"/>')
    gru_step_panel()
    emit("</svg>")
    drawing.save(__file__, "03-fusion-idea.svg")


main()
