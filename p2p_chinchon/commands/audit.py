"""``p2p-chinchon audit FILE [--json]``: replay a transcript with no network and no secrets.

Exit 0 with a summary (players, hands, scores per hand, winner) only for a complete, valid
game; 3 for a valid record that stops before the end (it proves nothing about what is missing:
a cut or damaged tail can hide a cheat); 1 naming the first violation (envelope index, seat,
rule or proof) or the damage in the file; 2 when the file cannot be read.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

EXIT_CODES = """exit codes:
  0  a complete game, every envelope valid
  1  a cheat (the seat, envelope and rule are named), an accusation, or a corrupt file;
     with several files also a fork between two of them (the seats that signed both are
     named), or files that are not one game
  2  the file cannot be read
  3  valid as far as it goes, but incomplete: the game did not finish in this record"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, nargs="+", help=(
        "a transcript (.chn) saved by host, join or play; several seats' transcripts of one game are "
        "also compared: where they part, and whether that is a fork (named) or one record being shorter"))
    p.add_argument("--json", action="store_true", help="print the verdict as JSON (with \"complete\": true|false)")
    p.add_argument("--jobs", type=int, default=None, metavar="N", help=(
        "processes checking shuffle proofs beside the replay (default: every core; 1: all in this "
        "process); the verdict is the same for every N"))
    p.epilog = EXIT_CODES
    p.formatter_class = argparse.RawDescriptionHelpFormatter


def run(args: argparse.Namespace) -> int:
    from p2p_chinchon.audit import audit_file, audit_files, default_jobs

    if args.jobs is not None and args.jobs < 1:
        print("p2p-chinchon audit: --jobs must be at least 1", file=sys.stderr)
        return 2
    jobs = args.jobs or default_jobs()

    on_terminal = sys.stdout.isatty() and sys.stderr.isatty()
    bar = _ProgressBar(sys.stderr) if on_terminal and not args.json else None
    try:
        report = (audit_file(args.file[0], progress=bar, jobs=jobs) if len(args.file) == 1
                  else audit_files(args.file, progress=bar, jobs=jobs))
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
