"""Renders a terminal capture with ANSI colours (`tmux capture-pane -e -p`) to a PNG.

usage: /usr/bin/python3 render_ansi.py CAPTURE.txt OUT.png  (needs Pillow and DejaVu Sans Mono)
"""
import re
import sys

from PIL import Image, ImageDraw, ImageFont

FONT = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf"
BOLD = "/usr/share/fonts/truetype/dejavu/DejaVuSansMono-Bold.ttf"
BASE16 = [(0, 0, 0), (205, 49, 49), (13, 188, 121), (229, 229, 16), (36, 114, 200), (188, 63, 188), (17, 168, 205),
          (229, 229, 229), (102, 102, 102), (241, 76, 76), (35, 209, 139), (245, 245, 67), (59, 142, 234),
          (214, 112, 214), (41, 184, 219), (255, 255, 255)]
FG, BG = (220, 220, 220), (24, 24, 24)


def xterm256(n):
    if n < 16:
        return BASE16[n]
    if n < 232:
        n -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return levels[n // 36], levels[(n // 6) % 6], levels[n % 6]
    g = 8 + (n - 232) * 10
    return g, g, g


def sgr(params, state):
    codes = [int(p) if p else 0 for p in params.split(";")] if params else [0]
    i = 0
    while i < len(codes):
        c = codes[i]
        if c == 0:
            state.update(fg=FG, bg=BG, bold=False, reverse=False)
        elif c == 1:
            state["bold"] = True
        elif c == 22:
            state["bold"] = False
        elif c == 7:
            state["reverse"] = True
        elif c == 27:
            state["reverse"] = False
        elif 30 <= c <= 37 or 90 <= c <= 97:
            state["fg"] = BASE16[c - 30 if c < 90 else c - 82]
        elif 40 <= c <= 47 or 100 <= c <= 107:
            state["bg"] = BASE16[c - 40 if c < 100 else c - 92]
        elif c == 39:
            state["fg"] = FG
        elif c == 49:
            state["bg"] = BG
        elif c in (38, 48) and i + 1 < len(codes):
            key = "fg" if c == 38 else "bg"
            if codes[i + 1] == 5 and i + 2 < len(codes):
                state[key] = xterm256(codes[i + 2])
                i += 2
            elif codes[i + 1] == 2 and i + 4 < len(codes):
                state[key] = tuple(codes[i + 2:i + 5])
                i += 4
        i += 1


def main(src, out):
    lines = open(src, encoding="utf-8", errors="replace").read().rstrip("\n").split("\n")
    font, bold = ImageFont.truetype(FONT, 14), ImageFont.truetype(BOLD, 14)
    cw, ch = int(font.getlength("M")), 18
    cols = 0
    cells = []
    for line in lines:
        state = dict(fg=FG, bg=BG, bold=False, reverse=False)
        row = []
        for part in re.split(r"(\x1b\[[0-9;]*m)", line):
            if part.startswith("\x1b["):
                sgr(part[2:-1], state)
            else:
                for char in part:
                    fg, bg = (state["bg"], state["fg"]) if state["reverse"] else (state["fg"], state["bg"])
                    row.append((char, fg, bg, state["bold"]))
        cols = max(cols, len(row))
        cells.append(row)
    image = Image.new("RGB", (cols * cw + 16, len(cells) * ch + 16), BG)
    draw = ImageDraw.Draw(image)
    for y, row in enumerate(cells):
        for x, (char, fg, bg, is_bold) in enumerate(row):
            box = (8 + x * cw, 8 + y * ch, 8 + (x + 1) * cw, 8 + (y + 1) * ch)
            if bg != BG:
                draw.rectangle(box, fill=bg)
            if char.strip():
                draw.text((box[0], box[1] + 1), char, font=bold if is_bold else font, fill=fg)
    image.save(out, optimize=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
