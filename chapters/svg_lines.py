"""What the chapters' figure scripts share (standard library only): an SVG collected line by line,
its text elements, and the file written beside the script that drew it
(chapters/02-incremental-idea.py, chapters/03-fusion-idea.py)."""
import os


class Drawing:
    """The lines of one SVG file, in order."""

    def __init__(self):
        self.lines = []

    def emit(self, line):
        self.lines.append(line)

    def text(self, x, y, s, fill=None, bold=False, anchor=None, rotate=None):
        """A <text> at (x, y); rotate: degrees about (x, y)."""
        attrs = f'x="{x}" y="{y}"'
        if anchor:
            attrs += f' text-anchor="{anchor}"'
        if fill:
            attrs += f' fill="{fill}"'
        if bold:
            attrs += ' font-weight="bold"'
        if rotate is not None:
            attrs += f' transform="rotate({rotate} {x} {y})"'
        self.emit(f"    <text {attrs}>{s}</text>")

    def save(self, script, name):
        """Write the lines to @name in the folder of @script (the caller's __file__)."""
        path = os.path.join(os.path.dirname(os.path.abspath(script)), name)
        with open(path, "w", encoding="utf-8") as f:
            f.write("\n".join(self.lines) + "\n")
