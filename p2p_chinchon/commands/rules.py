"""``p2p-chinchon rules [PRESET] [--json]``: the presets and every field (option)."""

from __future__ import annotations

import argparse
import dataclasses
import json

from ..engine import FIELD_HELP, PRESETS
from ..engine.rules import OPTION_ALIASES


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("preset", nargs="?", choices=tuple(PRESETS), help="one preset in detail")
    parser.add_argument("--json", action="store_true", help="print the presets as JSON")
    parser.add_argument("--lang", default=None, choices=["en", "es", "fr"], help="language of the rules in words")


def _option_name(field: str) -> str:
    for alias, f in OPTION_ALIASES.items():
        if f == field:
            return alias
    return field


def run(args: argparse.Namespace) -> int:
    names = [args.preset] if args.preset else list(PRESETS)
    every = {n: dataclasses.asdict(PRESETS[n]) for n in names}  # optional fields too
    if args.json:
        print(json.dumps(every, ensure_ascii=False))
        return 0
    fields = [f for f in every[names[0]] if f != "preset"]
    if args.preset:  # for players: the rules in words (the design notes are in docs/rules.md)
        from ..i18n import Translator
        from ..ui.lobby import rules_in_words

        for sentence in rules_in_words(PRESETS[args.preset], Translator(args.lang)):
            print("- " + sentence)
        print()
    width = max(len(_option_name(f)) for f in fields)
    print(f"{'option':<{width}}  " + "  ".join(f"{n:>9}" for n in names))
    for f in fields:
        vals = "  ".join(f"{str(every[n][f]):>9}" for n in names)
        print(f"{_option_name(f):<{width}}  {vals}")
    print()
    for f in fields:
        print(f"{_option_name(f):<{width}}  {FIELD_HELP[f]}")
    print("\nUse --option KEY=VALUE with melds/score (and at the table) to change a field.")
    return 0
