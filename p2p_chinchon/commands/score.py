"""``p2p-chinchon score --rules PRESET [--option K=V]... --closer CARDS --hand CARDS
[--hand CARDS]... [--json]``

Scores a closed hand: each player's melds, lay-offs and penalty, closer first, the other hands
in playing order from the closer. The closer gives 7 cards (or 8: the best close is used), every
other player 7. One hand per seat: the number of hands (2 to the preset's most players) decides
the packs, so below ``two_decks_from`` a card may appear only once across all hands. Lay-offs
are listed in an order in which they can be laid, each with the meld it goes onto."""

from __future__ import annotations

import argparse
import json

from ..cli import UsageError
from ..engine import CardError, RulesError, ShowdownError, check_showdown, close_options, score_showdown
from ..engine.options import PRESET_CHOICES, output_style, parse_hands, rules_from_args


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--rules", default="classic", choices=PRESET_CHOICES, help="preset")
    parser.add_argument("--option", action="append", default=[], metavar="KEY=VALUE",
                        help="rules option (see `p2p-chinchon rules`); repeatable")
    parser.add_argument("--closer", required=True, metavar="CARDS",
                        help="the closer's 7 cards (or 8: the best discard is chosen)")
    parser.add_argument("--hand", action="append", default=[], metavar="CARDS",
                        help="another player's hand, in playing order from the closer")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--style", choices=("french", "spanish", "ascii"),
                        help="card names (default: the deck's own)")


def run(args: argparse.Namespace) -> int:
    try:
        rules = rules_from_args(args.rules, args.option)
        closer, *hands = parse_hands([args.closer, *args.hand], rules)
        check_showdown(rules, closer, hands, closer_sizes=(7, 8))
        discard = None
        if len(closer) == 8:
            opts = close_options(closer, rules)
            if not opts:
                raise ShowdownError("the closer's 8 cards cannot close with any discard")
            discard = opts[0].discard
            closer = list(opts[0].kept)
        sd = score_showdown(rules, closer, hands)
    except (CardError, RulesError, ShowdownError, ValueError) as exc:
        raise UsageError(str(exc)) from None
    style = output_style(rules, args.style)
    d = sd.to_dict(style)
    d["discard"] = None if discard is None else discard.name(style)
    if args.json:
        print(json.dumps(d, ensure_ascii=False))
        return 0
    if discard is not None:
        print(f"closer discards {d['discard']} face down")
    for i, p in enumerate(sd.players):  # (the names as in the JSON object: to_dict(style))
        if i == 0 and sd.game_won:
            print("closer: CHINCHÓN, wins the game")
        else:
            print(f"{_who(i)}: penalty {p.penalty}")
        for m in p.melds:
            print(f"  meld     {' '.join(m.names(style))}")
        for lo in p.laid_off:
            print(f"  lays off {lo.card.name(style)} onto {_who(lo.onto_player)}'s meld "
                  f"{lo.onto_meld + 1} ({' '.join(c.name(style) for c in lo.onto_cards)})")
        print(f"  deadwood {' '.join(c.name(style) for c in p.deadwood) or '-'}")
    return 0


def _who(player: int) -> str:
    return "closer" if player == 0 else f"hand {player}"
