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


EXIT_CODES = """exit codes:
  0  a complete game, every envelope valid
  1  a cheat (the seat, envelope and rule are named), an accusation, or a corrupt file
  2  the file cannot be read
  3  valid as far as it goes, but incomplete: the game did not finish in this record"""


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a transcript (.chn) saved by host, join or play")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON (with \"complete\": true|false)")
    p.epilog = EXIT_CODES
    p.formatter_class = argparse.RawDescriptionHelpFormatter


def run(args: argparse.Namespace) -> int:
    from p2p_chinchon.audit import audit_file

    try:
        report = audit_file(args.file)
    except OSError as exc:
        print(f"p2p-chinchon audit: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(report.to_json(), indent=2, ensure_ascii=False))
    else:
        print(report.summary())
    return report.exit_code
