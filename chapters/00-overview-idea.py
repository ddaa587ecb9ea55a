#!/usr/bin/env python3
"""Chapter 00's idea picture: every technique twice, and a check between the two.

    python3 chapters/00-overview-idea.py [SVG]     (default: chapters/00-overview-idea.svg)

Python's standard library only; boxes and arrows placed by hand on a 760 x 300 canvas."""
import sys
from html import escape

BOXES = [  # x, y, width, height, fill, title, lines
    (20, 115, 130, 70, "#eeeeee", "data", ["a bundled name,", "a file or a generator"]),
    (220, 20, 250, 90, "#dbe8f7", "ref/  (the reference)", ["plain C, one thread, no BLAS,", "the textbook order of sums:",
                                                            "the definition of the answer"]),
    (220, 190, 250, 90, "#f7e3cf", "opt/ + cuda/  (the twin)", ["MPI ranks, OpenMP, BLAS, a GPU:", "same inputs, same outputs,",
                                                               "sums in another order"]),
    (540, 95, 200, 110, "#e0f0dc", "verify/  (the check)", ["bitwise: memcmp equal, or", "fp: max |a-r| / max(1,|r|)",
                                                           "<= 1e-5 (CPU), 1e-4 (GPU);", "many steps, 1 to 4 ranks"]),
]
ARROWS = [(150, 140, 218, 70), (150, 160, 218, 230), (470, 65, 538, 130), (470, 235, 538, 170)]


def box(x, y, w, h, fill, title, lines):
    out = [f'<rect x="{x}" y="{y}" width="{w}" height="{h}" rx="8" fill="{fill}" stroke="#333"/>',
           f'<text x="{x + w / 2}" y="{y + 20}" text-anchor="middle" font-weight="bold">{escape(title)}</text>']
    for i, line in enumerate(lines):
        out.append(f'<text x="{x + w / 2}" y="{y + 40 + 16 * i}" text-anchor="middle">{escape(line)}</text>')
    return out


def main():
    parts = ['<svg xmlns="http://www.w3.org/2000/svg" width="760" height="300" font-family="sans-serif" font-size="13">',
             '<defs><marker id="head" markerWidth="10" markerHeight="8" refX="9" refY="4" orient="auto">'
             '<path d="M0,0 L10,4 L0,8 z" fill="#333"/></marker></defs>']
    for b in BOXES:
        parts += box(*b)
    for x1, y1, x2, y2 in ARROWS:
        parts.append(f'<line x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" stroke="#333" stroke-width="1.5" marker-end="url(#head)"/>')
    parts.append('<text x="345" y="150" text-anchor="middle" font-style="italic">each chapter quotes both,</text>')
    parts.append('<text x="345" y="166" text-anchor="middle" font-style="italic">says why they agree</text>')
    parts.append('</svg>')
    target = sys.argv[1] if len(sys.argv) > 1 else "chapters/00-overview-idea.svg"
    with open(target, "w", encoding="utf-8") as out:
        out.write("\n".join(parts) + "\n")
    print(f"wrote {target}")


if __name__ == "__main__":
    main()
