"""``p2p-chinchon bench NAME [ARGS...]``: run ``benchmarks/NAME.py`` from the source tree;
``p2p-chinchon bench bots`` is built in (the bot tournament, engine only).

The benchmark scripts live in the repository's ``benchmarks/`` folder (they are not installed
with the package); this command finds that folder next to the ``p2p_chinchon`` package and runs
the script with :mod:`runpy` as ``__main__``, passing every remaining argument to it.
"""

from __future__ import annotations

import argparse
import runpy
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from p2p_chinchon.bots.tournament import Decider
    from p2p_chinchon.view import SeatView

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
        "'p2p-chinchon bench bots [--games N] [--json]' plays the bot tournament (built in). "
        f"Found: {', '.join(names) if names else 'none (not running from a source checkout)'}.")
    parser.add_argument("name", metavar="NAME",
                        help="benchmark to run: bots, deck, game, audit, net, wire, melds, soak, faults, web, "
                             "play_start (a script in benchmarks/)")
    parser.add_argument("args", nargs=argparse.REMAINDER,
                        help="arguments passed unchanged to the benchmark script")


def run(args: argparse.Namespace) -> int:
    if args.name == "bots":
        return bench_bots(args.args)
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


# -- bench bots: the bot tournament on the engine alone ------------------------------------

SEATS = 4


def _bots_game(task: tuple[str, str, int, str]) -> dict[str, Any]:
    """One seeded game (``seed``: the seed set) with a ``level`` bot in seat ``g % 4``
    against three ``easy`` bots.
    Returns the winner flag, (level, penalty) per seat and hand, and decision times (ms)."""
    import time

    from p2p_chinchon.autoplay import bot_decider
    from p2p_chinchon.bots import make_bot
    from p2p_chinchon.bots.tournament import play_game
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.rng import SeededRng

    rules_name, level, g, seed = task
    rules = make_rules(rules_name, {})
    hero = g % SEATS
    levels = [level if i == hero else "easy" for i in range(SEATS)]
    times: dict[str, list[float]] = {lv: [] for lv in set(levels)}

    def timed(lv: str, decide: Decider) -> Decider:
        def wrapped(view: SeatView, need: str) -> Any:
            t = time.perf_counter()
            out = decide(view, need)
            if need in ("draw", "discard"):
                times[lv].append((time.perf_counter() - t) * 1000)
            return out
        return wrapped

    deciders = [timed(lv, bot_decider(make_bot(rules, SeededRng(f"{seed}/{level}/{g}/{i}"), lv)))
                for i, lv in enumerate(levels)]
    res = play_game(rules, deciders, SeededRng(f"{seed}/deal/{g}"), first_dealer=0)
    pens = [(levels[s], p) for hand in res.penalties for s, p in hand.items()]
    return {"level": level, "won": res.winner == hero, "unfinished": res.winner is None,
            "hands": len(res.penalties), "penalties": pens, "times": times}


def bench_bots(argv: list[str]) -> int:
    """``bench bots``: for ``normal`` and ``hard``, ``--games`` seeded games of one bot of that
    level against three ``easy`` bots at a four-seat table (the hero's seat rotates), played on
    the engine alone. Reports win rates (0.25 is parity), mean penalty per hand and median
    decision time per level."""
    import json
    import statistics
    import time

    p = argparse.ArgumentParser(prog="p2p-chinchon bench bots", description=(bench_bots.__doc__ or "").replace("``", ""))
    p.add_argument("--games", type=int, default=400, metavar="N", help="games per level (default 400)")
    p.add_argument("--rules", default="classic", metavar="PRESET", help="rule preset (default classic)")
    p.add_argument("--jobs", type=int, default=1, metavar="J", help="worker processes (default 1)")
    p.add_argument("--seed", default="bench-bots", metavar="S",
                   help="seed set: another S deals other games (default bench-bots)")
    p.add_argument("--levels", default="normal,hard", metavar="L,...", help="levels to test (default normal,hard)")
    p.add_argument("--json", action="store_true", help="print one JSON object")
    a = p.parse_args(argv)
    tested = [lv.strip() for lv in a.levels.split(",") if lv.strip()]
    if not tested or any(lv not in ("easy", "normal", "hard") for lv in tested):
        p.error("--levels takes easy, normal and/or hard")
    if a.games < 1 or a.jobs < 1:
        p.error("--games and --jobs must be at least 1")
    tasks = [(a.rules, level, g, a.seed) for level in tested for g in range(a.games)]
    t0 = time.perf_counter()
    if a.jobs == 1:
        results = [_bots_game(t) for t in tasks]
    else:
        import multiprocessing

        with multiprocessing.Pool(a.jobs) as pool:
            results = pool.map(_bots_game, tasks, chunksize=4)
    seconds = time.perf_counter() - t0
    levels = ("easy", "normal", "hard")
    pens: dict[str, list[int]] = {lv: [] for lv in levels}
    times: dict[str, list[float]] = {lv: [] for lv in levels}
    wins = {lv: 0 for lv in tested}
    hands = unfinished = 0
    for r in results:
        wins[r["level"]] += r["won"]
        unfinished += r["unfinished"]
        hands += r["hands"]
        for lv, pen in r["penalties"]:
            pens[lv].append(pen)
        for lv, ts in r["times"].items():
            times[lv].extend(ts)
    out = {
        "games": a.games, "seats": SEATS, "rules": a.rules, "seed": a.seed,
        "win_rate": {lv: round(wins[lv] / a.games, 4) for lv in tested},
        "mean_penalty_per_hand": {lv: round(statistics.fmean(pens[lv]), 3) if pens[lv] else None for lv in levels},
        "decide_ms_median": {lv: round(statistics.median(times[lv]), 3) if times[lv] else None for lv in levels},
        "hands": hands, "unfinished": unfinished, "seconds": round(seconds, 1),
    }
    if a.json:
        print(json.dumps(out))
    else:
        print(f"bot tournament: {a.games} games per level, {SEATS} seats ({a.rules}), one bot "
              f"against three easy bots, seed set {a.seed!r}; {hands} hands in {seconds:.0f} s")
        for lv in levels:
            if not pens[lv]:
                continue  # a level that did not play (not in --levels)
            wr = out["win_rate"].get(lv)
            print(f"  {lv:7} win rate {'-' if wr is None else f'{wr:.3f}':>6}   penalty/hand "
                  f"{out['mean_penalty_per_hand'][lv]}   decide median {out['decide_ms_median'][lv]} ms")
        if unfinished:
            print(f"  {unfinished} games stopped unfinished (a hand ran past the turn limit)")
    return 0
