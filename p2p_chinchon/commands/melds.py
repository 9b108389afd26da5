"""``p2p-chinchon melds [--rules PRESET] [--option KEY=VALUE]... [--players N] [--json] CARD...``

Best arrangement of 1..8 cards: melds, deadwood, whether the hand may close and its score.
With eight cards it picks the best discard (the best close, else the least deadwood). The hand
is checked against the deck of a table of ``--players`` seats (default 4, within the preset's
range): one pack below ``two_decks_from``, so a second copy of a card is refused there."""

from __future__ import annotations

import argparse
import json
from typing import TypedDict

from ..cli import UsageError
from ..engine import Card, CardError, Rules, RulesError, best_arrangement, check_hands, close_options, close_result
from ..engine.options import PRESET_CHOICES, output_style, parse_hands, rules_from_args
from ..engine.words import counted

DEFAULT_PLAYERS = 4  # the usual table; with it every preset plays one pack unless decks=2


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="classic", choices=PRESET_CHOICES, help="preset")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="rules option (see `p2p-chinchon rules`); repeatable")
    parser.add_argument("--players", type=int, metavar="N",
                        help="seats at the table, which decides one pack or two "
                             f"(default {DEFAULT_PLAYERS}, within the preset's range)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--style", choices=("french", "spanish", "ascii"),
                        help="card names (default: the deck's own)")
    parser.add_argument("cards", nargs="*", metavar="CARD",
                        help="cards: 5♦ 5d 5-oros sota-copas JK (space or comma separated)")


class Analysis(TypedDict):
    """The ``--json`` object of :func:`analyse`, cards still as Card values. ``melds``,
    ``deadwood``, ``points``: the least-deadwood arrangement, what ``score`` charges the hand
    when another player closes; ``close_melds``, ``close_deadwood``, ``score``: the
    arrangement and score of its close (None when it cannot close), which may leave more
    points than the least deadwood (a close allows ``close_max_unmatched`` loose cards)."""

    melds: list[list[Card]]
    deadwood: list[Card]
    points: int
    can_close: bool
    chinchon: bool
    score: int | None
    discard: Card | None
    close_melds: list[list[Card]] | None
    close_deadwood: list[Card] | None


def analyse(cards: list[Card], rules: Rules) -> Analysis:
    """The ``--json`` object (cards still as Card values). Eight cards: the discard of the best
    close, else the one leaving the least deadwood; the rest describes the seven kept."""
    discard: Card | None = None
    kept = list(cards)
    if len(cards) == 8:
        opts = close_options(cards, rules)
        if opts:
            discard = opts[0].discard
        else:
            scored: list[tuple[int, int, Card]] = []
            for i, c in enumerate(cards):
                rest = cards[:i] + cards[i + 1 :]
                scored.append((best_arrangement(rest, rules).points, -rules.value(c), c))
            discard = min(scored)[2]
        kept = [c for c in cards if c != discard]
    closed = close_result(kept, rules) if len(kept) == 7 else None
    arr = best_arrangement(kept, rules)
    return {
        "melds": [list(m.cards) for m in arr.melds],
        "deadwood": list(arr.deadwood),
        "points": arr.points,
        "can_close": closed is not None,
        "chinchon": bool(closed and closed.chinchon),
        "score": closed.score if closed is not None else None,
        "discard": discard,
        "close_melds": None if closed is None else [list(m.cards) for m in closed.arrangement.melds],
        "close_deadwood": None if closed is None else list(closed.arrangement.deadwood),
    }


def run(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.option)
        (cards,) = parse_hands([" ".join(args.cards)], rules)
        if not 1 <= len(cards) <= 8:
            raise CardError(f"{len(cards)} cards: give 1 to 8")
        players = args.players
        if players is None:
            players = min(max(DEFAULT_PLAYERS, rules.min_players), rules.max_players)
        check_hands(rules, [cards], players)
        result = analyse(cards, rules)
    except (CardError, RulesError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    style = output_style(rules, args.style)

    def name(c: Card) -> str:
        return c.name(style)

    melds = [[name(c) for c in m] for m in result["melds"]]
    deadwood = [name(c) for c in result["deadwood"]]
    discard = None if result["discard"] is None else name(result["discard"])
    close_melds = result["close_melds"]
    close_dead = result["close_deadwood"]
    if args.json:  # (the keys in analyse's order, the cards named)
        out = {**result, "melds": melds, "deadwood": deadwood, "discard": discard,
               "close_melds": None if close_melds is None else [[name(c) for c in m] for m in close_melds],
               "close_deadwood": None if close_dead is None else [name(c) for c in close_dead]}
        print(json.dumps(out, ensure_ascii=False))
        return 0
    if discard is not None:
        print(f"discard:  {discard}")
    for m in melds:
        print(f"meld:     {' '.join(m)}")
    print(f"deadwood: {' '.join(deadwood) or '-'}  ({counted(result['points'], 'point')})")
    if result["chinchon"]:
        print("close:    CHINCHÓN, wins the game")
    elif result["can_close"]:
        print(f"close:    yes, scoring {result['score']}")
        if close_dead is not None and [name(c) for c in close_dead] != deadwood:
            assert close_melds is not None
            shown = " / ".join(" ".join(name(c) for c in m) for m in close_melds)
            print(f"          showing {shown}, deadwood {' '.join(name(c) for c in close_dead) or '-'}")
    else:
        print("close:    no")
    return 0
