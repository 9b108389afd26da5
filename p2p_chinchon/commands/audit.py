"""``p2p-chinchon audit FILE [--json]``: replay a transcript with no network and no secrets.

Exit 0 with a summary (players, hands, scores per hand, winner) for a valid record; exit 1
naming the first violation (envelope index, seat, rule or proof) or the damage in the file.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("file", type=Path, help="a transcript (.chn) saved by host, join or play")
    p.add_argument("--json", action="store_true", help="print the verdict as JSON")


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
