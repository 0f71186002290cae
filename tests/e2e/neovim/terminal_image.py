"""A terminal screen, as tmux captured it with colours (``capture-pane -e``), drawn as a PNG.

Each row is text with SGR sequences (``ESC[...m``: bold, italic, underline, reverse, the
16 / 256 / RGB colours, defaults); every other escape sequence is dropped. Cells are drawn
in DejaVu Sans Mono (the Debian package ``fonts-dejavu-core``), falling back to DejaVu Sans
for a character the monospace face lacks (fontconfig's ``fc-list`` says which), two cells
wide for East Asian wide characters. Colours the screen leaves at the terminal's default
get a dark theme's.
"""

from __future__ import annotations

import functools
import re
import subprocess
import unicodedata
from dataclasses import dataclass, replace
from pathlib import Path

from PIL import Image, ImageDraw, ImageFont

FONTS = Path("/usr/share/fonts/truetype/dejavu")
FONT_SIZE = 15
DEFAULT_FOREGROUND = (0xD4, 0xD4, 0xD4)
DEFAULT_BACKGROUND = (0x1E, 0x1E, 0x1E)
_ESCAPE = re.compile(r"\x1b\[([0-9;:]*)([A-Za-z])|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b.")
_ANSI16 = [
    (0x00, 0x00, 0x00), (0xCD, 0x31, 0x31), (0x0D, 0xBC, 0x79), (0xE5, 0xE5, 0x10),
    (0x24, 0x72, 0xC8), (0xBC, 0x3F, 0xBC), (0x11, 0xA8, 0xCD), (0xE5, 0xE5, 0xE5),
    (0x66, 0x66, 0x66), (0xF1, 0x4C, 0x4C), (0x23, 0xD1, 0x8B), (0xF5, 0xF5, 0x43),
    (0x3B, 0x8E, 0xEA), (0xD6, 0x70, 0xD6), (0x29, 0xB8, 0xDB), (0xFF, 0xFF, 0xFF),
]  # fmt: skip

Colour = tuple[int, int, int]


@dataclass(frozen=True)
class Style:
    """How a cell is drawn; ``None`` colours are the terminal's defaults."""

    foreground: Colour | None = None
    background: Colour | None = None
    bold: bool = False
    italic: bool = False
    underline: bool = False
    reverse: bool = False


def _palette(index: int) -> Colour:
    """xterm's 256 colours: 16 named, a 6x6x6 cube, 24 greys."""
    if index < 16:
        return _ANSI16[index]
    if index < 232:
        index -= 16
        levels = [0, 95, 135, 175, 215, 255]
        return (levels[index // 36], levels[index // 6 % 6], levels[index % 6])
    grey = 8 + (index - 232) * 10
    return (grey, grey, grey)


def _extended(numbers: list[int], at: int) -> tuple[Colour | None, int]:
    """A ``38;5;n`` / ``38;2;r;g;b`` colour starting after ``numbers[at]``; the next index."""
    if at + 1 < len(numbers) and numbers[at + 1] == 5 and at + 2 < len(numbers):
        return _palette(numbers[at + 2]), at + 3
    if at + 1 < len(numbers) and numbers[at + 1] == 2 and at + 4 < len(numbers):
        red, green, blue = numbers[at + 2 : at + 5]
        return (red, green, blue), at + 5
    return None, len(numbers)


def apply_sgr(style: Style, parameters: str) -> Style:
    """The style after one ``ESC[<parameters>m``."""
    numbers = [int(part) if part else 0 for part in re.split("[;:]", parameters)] or [0]
    at = 0
    while at < len(numbers):
        code = numbers[at]
        at += 1
        if code == 0:
            style = Style()
        elif code in (1, 22):
            style = replace(style, bold=code == 1)
        elif code in (3, 23):
            style = replace(style, italic=code == 3)
        elif code in (4, 24):
            style = replace(style, underline=code == 4)
        elif code in (7, 27):
            style = replace(style, reverse=code == 7)
        elif 30 <= code <= 37 or 90 <= code <= 97:
            style = replace(style, foreground=_ANSI16[code - 30 if code < 90 else code - 82])
        elif 40 <= code <= 47 or 100 <= code <= 107:
            style = replace(style, background=_ANSI16[code - 40 if code < 100 else code - 92])
        elif code in (38, 48):
            colour, at = _extended(numbers, at - 1)
            field = "foreground" if code == 38 else "background"
            style = replace(style, **{field: colour})
        elif code == 39:
            style = replace(style, foreground=None)
        elif code == 49:
            style = replace(style, background=None)
    return style


def cells(row: str) -> list[tuple[str, Style]]:
    """One captured row as (character, style) per character."""
    out: list[tuple[str, Style]] = []
    style = Style()
    position = 0
    for match in _ESCAPE.finditer(row):
        out += [(character, style) for character in row[position : match.start()]]
        if match.group(2) == "m":
            style = apply_sgr(style, match.group(1) or "")
        position = match.end()
    out += [(character, style) for character in row[position:]]
    return out


@functools.cache
def _font(bold: bool, italic: bool, fallback: bool) -> ImageFont.FreeTypeFont:
    face = "DejaVuSans" if fallback else "DejaVuSansMono"
    suffix = ("-Bold" if bold else "") + ("Oblique" if italic else "")
    if suffix == "Oblique":
        suffix = "-Oblique"
    return ImageFont.truetype(str(FONTS / f"{face}{suffix}.ttf"), FONT_SIZE)


@functools.cache
def _monospace_has(character: str) -> bool:
    found = subprocess.run(
        ["fc-list", f":charset={ord(character):x}", "family"],
        capture_output=True,
        text=True,
        check=False,
    ).stdout
    return "DejaVu Sans Mono" in found


def render(
    screen: str,
    columns: int,
    lines: int,
    default_foreground: Colour = DEFAULT_FOREGROUND,
    default_background: Colour = DEFAULT_BACKGROUND,
) -> Image.Image:
    """Draw ``screen`` (capture-pane -e output) as a ``columns`` x ``lines`` terminal.

    ``default_*``: the terminal's own colours, for cells the screen leaves at the default
    (an editor usually wants its theme's: Neovim paints only what it changed explicitly).
    """
    regular = _font(False, False, False)
    cell_width = round(regular.getlength("M"))
    ascent, descent = regular.getmetrics()
    cell_height = ascent + descent + 2
    image = Image.new("RGB", (columns * cell_width, lines * cell_height), default_background)
    draw = ImageDraw.Draw(image)
    for row_index, row in enumerate(screen.split("\n")[:lines]):
        column = 0
        y = row_index * cell_height
        for character, style in cells(row):
            if column >= columns:
                break
            width = 2 if unicodedata.east_asian_width(character) in ("W", "F") else 1
            foreground = style.foreground or default_foreground
            background = style.background or default_background
            if style.reverse:
                foreground, background = background, foreground
            x = column * cell_width
            box = (x, y, x + width * cell_width - 1, y + cell_height - 1)
            draw.rectangle(box, fill=background)
            if not character.isspace():
                fallback = not _monospace_has(character)
                font = _font(style.bold, style.italic, fallback)
                draw.text((x, y + 1), character, font=font, fill=foreground)
            if style.underline:
                draw.line((x, y + cell_height - 2, box[2], y + cell_height - 2), fill=foreground)
            column += width
    return image
