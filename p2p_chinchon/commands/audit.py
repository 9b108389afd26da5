"""``p2p-chinchon audit FILE [--json]``: replay a transcript with no network and no secrets.

Exit 0 with a summary (players, hands, scores per hand, winner) for a valid record; exit 1
naming the first violation (envelope index, seat, rule or proof) or the damage in the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a transcript (.chn) saved by host, join or play")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")


def run(args: argparse.Namespace) -> int:
    from p2p_chinchon.audit import audit_file

    on_terminal = sys.stdout.isatty() and sys.stderr.isatty()
    bar = _ProgressBar(sys.stderr) if on_terminal and not args.json else None
    try:
        report = audit_file(args.file, progress=bar)
    except OSError as exc:
        print(f"p2p-chinchon audit: {exc}", file=sys.stderr)
        return 2
    finally:
        if bar is not None:
            bar.clear()
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(report.summary())
    return report.exit_code


class _ProgressBar:
    """``[#####-----] 120/480 envelopes`` on one terminal line, redrawn in place (only on a
    terminal: piped output and ``--json`` stay silent)."""

    WIDTH = 30

    def __init__(self, out: Any) -> None:
        self.out = out
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        filled = self.WIDTH * done // total if total else self.WIDTH
        if filled == self.shown and done != total:
            return  # redraw only when the bar grows
        self.shown = filled
        self.out.write(f"\r[{'#' * filled}{'-' * (self.WIDTH - filled)}] {done}/{total} envelopes")
        self.out.flush()

    def clear(self) -> None:
        if self.shown >= 0:
            self.out.write("\r" + " " * (self.WIDTH + 30) + "\r")
            self.out.flush()
