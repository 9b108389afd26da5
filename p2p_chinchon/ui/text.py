"""Styled lines for the terminal screen: fragments, widths, truncation.

A line is a list of prompt_toolkit ``(style, text)`` fragments. Widths are terminal cells
(``prompt_toolkit.utils.get_cwidth``), so wide characters never overflow a line.
"""

from __future__ import annotations

from prompt_toolkit.utils import get_cwidth

Fragment = tuple[str, str]
Line = list[Fragment]


def width(line: Line | str) -> int:
    if isinstance(line, str):
        return get_cwidth(line)
    return sum(get_cwidth(t) for _, t in line)


def plain(line: Line) -> str:
    return "".join(t for _, t in line)


def truncate(line: Line | str, cols: int, ellipsis: str = "…") -> Line:
    """``line`` cut to at most ``cols`` cells, ending in ``ellipsis`` when something was cut."""
    if isinstance(line, str):
        line = [("", line)]
    if cols <= 0:
        return []
    if width(line) <= cols:
        return list(line)
    room = cols - get_cwidth(ellipsis)
    out: Line = []
    used = 0
    for style, text in line:
        for ch in text:
            w = get_cwidth(ch)
            if used + w > room:
                if room > 0 or not out:
                    out.append(("", ellipsis if room >= 0 else ""))
                return out
            if out and out[-1][0] == style:
                out[-1] = (style, out[-1][1] + ch)
            else:
                out.append((style, ch))
            used += w
    return out


_ASCII = {"←": "<-", "→": "->", "↑": "^", "↓": "v", "·": "|", "…": "...", "▶": ">",
          "█": "#", "░": "-", "★": "*", "♦": "d", "♥": "h", "♠": "s", "♣": "c", "•": "-",
          "«": "\"", "»": "\"", "¿": "", "¡": "", "œ": "oe", "–": "-", "—": "-"}


def asciify(line: Line) -> Line:
    """``line`` with only ASCII characters: accents dropped, symbols spelt out (for terminals
    without Unicode)."""
    import unicodedata

    out: Line = []
    for style, text in line:
        chars = []
        for ch in text:
            if ord(ch) < 128:
                chars.append(ch)
            elif ch in _ASCII:
                chars.append(_ASCII[ch])
            else:
                base = "".join(c for c in unicodedata.normalize("NFKD", ch) if ord(c) < 128)
                chars.append(base or "?")
        out.append((style, "".join(chars)))
    return out


def pad(line: Line, cols: int) -> Line:
    """``line`` padded with spaces to ``cols`` cells (never cut)."""
    gap = cols - width(line)
    return line + [("", " " * gap)] if gap > 0 else line


def cell(text: str, cols: int) -> str:
    """``text`` fitted to exactly ``cols`` cells (cut with "…" or padded)."""
    return plain(pad(truncate(text, cols), cols))
