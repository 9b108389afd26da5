"""Benchmark: best-arrangement search for random 8-card hands with 0, 1 and 2 wild cards,
against the brute-force reference measured in the same run.

    python benchmarks/melds.py [--json] [--hands N] [--seed S]

Hands are drawn with a seeded SHAKE-256 source (p2p_chinchon.rng.SeededRng) from the classic
deck with two jokers; every hand's result is also checked against the reference.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from p2p_chinchon.engine import best_arrangement, best_arrangement_bruteforce, make_rules  # noqa: E402
from p2p_chinchon.rng import SeededRng  # noqa: E402


def make_hands(n: int, wilds: int, seed: int):
    rules = make_rules("classic", {"jokers": 2})
    deck = rules.deck(2)
    jokers = [c for c in deck if c.is_joker]
    naturals = [c for c in deck if not c.is_joker]
    rng = SeededRng(f"melds-bench-{seed}-{wilds}")
    hands = []
    for _ in range(n):
        pool = list(naturals)
        hand = list(jokers[:wilds])
        while len(hand) < 8:
            hand.append(pool.pop(rng.randbelow(len(pool))))
        hands.append(hand)
    return rules, hands


def measure(fn, rules, hands):
    t0 = time.perf_counter()
    out = [fn(h, rules).points for h in hands]
    dt = time.perf_counter() - t0
    return out, len(hands) / dt


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--hands", type=int, default=2000, help="hands per wild-card count")
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    rows = []
    for wilds in (0, 1, 2):
        rules, hands = make_hands(args.hands, wilds, args.seed)
        best_arrangement(hands[0], rules)  # warm-up
        fast, fast_hps = measure(best_arrangement, rules, hands)
        n_ref = max(50, args.hands // 10)
        ref, ref_hps = measure(best_arrangement_bruteforce, rules, hands[:n_ref])
        if fast[:n_ref] != ref:
            print("MISMATCH between search and reference", file=sys.stderr)
            return 1
        rows.append({
            "wild_cards": wilds,
            "hands": len(hands),
            "search_hands_per_s": round(fast_hps),
            "search_ms_per_hand": round(1000 / fast_hps, 4),
            "reference_hands": n_ref,
            "reference_hands_per_s": round(ref_hps),
            "speedup": round(fast_hps / ref_hps, 1),
        })
    result = {"benchmark": "melds", "python": platform.python_version(),
              "machine": platform.machine(), "results": rows}
    if args.json:
        print(json.dumps(result))
    else:
        print(f"best_arrangement, random 8-card hands (Python {result['python']})")
        print(f"{'wild':>4} {'search h/s':>11} {'ms/hand':>8} {'reference h/s':>14} {'ratio':>6}")
        for r in rows:
            print(f"{r['wild_cards']:>4} {r['search_hands_per_s']:>11} "
                  f"{r['search_ms_per_hand']:>8} {r['reference_hands_per_s']:>14} "
                  f"{r['speedup']:>5}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
