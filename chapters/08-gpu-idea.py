#!/usr/bin/env python3
"""Draws chapters/08-gpu-idea.svg, chapter 08's idea: why a fixed summation order makes the GPU's
float sums equal the CPU's bit for bit, and why atomic adds cannot.

One output value y[0] = x0 + x1 + x2 + x3 with x = (1e8, 1, -1e8, 1) (the exact sum is 2), added
three ways, each partial sum rounded to float as it is formed: in the reference's order (what
ref/, opt/ and the CUDA kernel of cuda/propagate.cu all do: one thread walks the row's terms in
CSR order), and in two of the orders in which four threads' atomicAdd calls may arrive. The
partial sums are computed here with float32 rounding (struct), not typed in, so the picture
cannot disagree with the arithmetic; verify/test_kernels.c (summation_order_by_hand) asserts
the same numbers.

    python3 chapters/08-gpu-idea.py        (from the repository root; standard library only)
"""
import struct

OUT = "chapters/08-gpu-idea.svg"
X = [1e8, 1.0, -1e8, 1.0]
NAMES = ["x0 = 1e8", "x1 = 1", "x2 = -1e8", "x3 = 1"]


def f32(value):
    """value rounded to the nearest float32."""
    return struct.unpack("f", struct.pack("f", value))[0]


def partial_sums(order):
    """The float32 partial sums of X added in `order`, left to right."""
    sums, total = [], None
    for i in order:
        total = f32(X[i]) if total is None else f32(total + f32(X[i]))
        sums.append(total)
    return sums


def show(value):
    """1e8 rather than Python's 1e+08."""
    return ("%.8g" % value).replace("e+0", "e").replace("e+", "e")


COLUMNS = [
    ("fixed order: one thread per output", "ref, opt and the CUDA kernel alike", [0, 1, 2, 3], "#2b7a3d"),
    ("atomicAdd, arrival order A", "threads 1 and 3 first", [1, 3, 0, 2], "#b03a2e"),
    ("atomicAdd, arrival order B", "threads 0 and 2 first", [0, 2, 1, 3], "#b03a2e"),
]

WIDTH, HEIGHT = 900, 470
COLUMN_WIDTH = WIDTH / len(COLUMNS)
BOX_W, BOX_H, TOP, STEP = 200, 40, 120, 78


def text(x, y, content, size=13, anchor="middle", weight="normal", colour="#222"):
    return ('<text x="%.1f" y="%.1f" font-family="sans-serif" font-size="%d" text-anchor="%s" '
            'font-weight="%s" fill="%s">%s</text>' % (x, y, size, anchor, weight, colour, content))


def main():
    parts = ['<?xml version="1.0" encoding="utf-8"?>',
             '<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">'
             % (WIDTH, HEIGHT, WIDTH, HEIGHT),
             '<rect width="100%" height="100%" fill="white"/>',
             '<defs><marker id="arrow" markerWidth="8" markerHeight="8" refX="7" refY="4" orient="auto">'
             '<path d="M0,0 L8,4 L0,8 z" fill="#555"/></marker></defs>',
             text(WIDTH / 2, 28, "y = x0 + x1 + x2 + x3 in float32, x = (1e8, 1, -1e8, 1): the exact sum is 2",
                  size=16, weight="bold"),
             text(WIDTH / 2, 50, "each box is a partial sum, rounded to float32 as it is formed "
                  "(next to 1e8 floats are 8 apart, so 1e8 + 1 is 1e8)", size=12, colour="#444")]
    for c, (title, subtitle, order, colour) in enumerate(COLUMNS):
        centre = COLUMN_WIDTH * (c + 0.5)
        parts.append(text(centre, 85, title, size=14, weight="bold", colour=colour))
        parts.append(text(centre, 103, subtitle, size=12, colour="#444"))
        sums = partial_sums(order)
        for k, (i, s) in enumerate(zip(order, sums)):
            y = TOP + k * STEP
            parts.append('<rect x="%.1f" y="%.1f" width="%d" height="%d" rx="6" fill="#f4f4f4" stroke="%s" '
                         'stroke-width="%s"/>' % (centre - BOX_W / 2, y, BOX_W, BOX_H, colour,
                                                  "2.5" if k == 3 else "1"))
            addend = NAMES[i].split(" = ")[1]
            addend = "− " + addend[1:] if addend.startswith("-") else "+ " + addend
            label = NAMES[i] if k == 0 else "%s  →  %s" % (addend, show(s))
            parts.append(text(centre, y + 25, label, size=14, weight="bold" if k == 3 else "normal"))
            if k > 0:
                parts.append('<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#555" stroke-width="1.5" '
                             'marker-end="url(#arrow)"/>' % (centre, y - STEP + BOX_H, centre, y - 2))
        parts.append(text(centre, TOP + 3 * STEP + BOX_H + 28, "result %s" % show(sums[-1]), size=15,
                          weight="bold", colour=colour))
    parts.append(text(WIDTH / 2, HEIGHT - 18, "The fixed order gives 1 on every run, on the CPU and on the GPU; "
                      "atomic adds give 0, 1 or 2 depending on which thread arrives first.", size=13))
    parts.append("</svg>")
    with open(OUT, "w", encoding="utf-8") as out:
        out.write("\n".join(parts) + "\n")
    print("wrote %s: fixed order %s, arrival order A %s, arrival order B %s" % (
        OUT, show(partial_sums(COLUMNS[0][2])[-1]), show(partial_sums(COLUMNS[1][2])[-1]),
        show(partial_sums(COLUMNS[2][2])[-1])))


if __name__ == "__main__":
    main()
