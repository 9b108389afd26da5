"""``p2p-chinchon bench NAME [ARGS...]``: run ``benchmarks/NAME.py`` from the source tree.

The benchmark scripts live in the repository's ``benchmarks/`` folder (they are not installed
with the package); this command finds that folder next to the ``p2p_chinchon`` package and runs
the script with :mod:`runpy` as ``__main__``, passing every remaining argument to it.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parent.parent.parent / "benchmarks"


def available() -> list[str]:
    """Names of the benchmark scripts found in the source tree (empty if not a checkout)."""
    if not BENCH_DIR.is_dir():
        return []
    return sorted(p.stem for p in BENCH_DIR.glob("*.py") if not p.stem.startswith("_"))


def add_arguments(parser: argparse.ArgumentParser) -> None:
    names = available()
    parser.description = (
        "Run benchmarks/<name>.py from the source tree (via runpy), passing the remaining "
        "arguments to it, e.g. 'p2p-chinchon bench deck --seats 4 --cards 40 --json', "
        "'p2p-chinchon bench game --seed 1', 'p2p-chinchon bench audit --transcript FILE'. "
        "Use 'p2p-chinchon bench NAME --help' for a benchmark's own options. "
        f"Found: {', '.join(names) if names else 'none (not running from a source checkout)'}.")
    parser.add_argument("name", metavar="NAME",
                        help="benchmark to run: deck, game, audit, net, wire, melds "
                             "(a script in benchmarks/)")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments passed unchanged to the benchmark script")


def run(args: argparse.Namespace) -> int:
    path = BENCH_DIR / f"{args.name}.py"
    if args.name.startswith("_") or "/" in args.name or not path.is_file():
        names = ", ".join(available()) or "none found"
        print(f"p2p-chinchon bench: no benchmark '{args.name}' in {BENCH_DIR} "
              f"(available: {names})", file=sys.stderr)
        return 2
    saved = sys.argv[:]
    sys.argv = [str(path), *args.args]
    try:
        runpy.run_path(str(path), run_name="__main__")
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        print(code, file=sys.stderr)
        return 1
    finally:
        sys.argv = saved
    return 0
