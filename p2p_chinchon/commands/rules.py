"""``p2p-chinchon rules [PRESET] [--json]``: the presets and every field (option)."""

from __future__ import annotations

import argparse
import json

from ..engine import FIELD_HELP, PRESET_DOCS, PRESETS
from ..engine.rules import OPTION_ALIASES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("preset", nargs="?", choices=tuple(PRESETS), help="one preset in detail")
    parser.add_argument("--json", action="store_true", help="print the presets as JSON")


def _option_name(field: str) -> str:
    for alias, f in OPTION_ALIASES.items():
        if f == field:
            return alias
    return field


def run(args: argparse.Namespace) -> int:
    names = [args.preset] if args.preset else list(PRESETS)
    if args.json:
        print(json.dumps({n: PRESETS[n].to_wire() for n in names}, ensure_ascii=False))
        return 0
    fields = [f for f in PRESETS["classic"].to_wire() if f != "preset"]
    if args.preset:
        print(PRESET_DOCS[args.preset].strip())
        print()
    width = max(len(_option_name(f)) for f in fields)
    print(f"{'option':<{width}}  " + "  ".join(f"{n:>9}" for n in names))
    for f in fields:
        vals = "  ".join(f"{str(PRESETS[n].to_wire()[f]):>9}" for n in names)
        print(f"{_option_name(f):<{width}}  {vals}")
    print()
    for f in fields:
        print(f"{_option_name(f):<{width}}  {FIELD_HELP[f]}")
    print("\nUse --option KEY=VALUE with melds/score (and at the table) to change a field.")
    return 0
