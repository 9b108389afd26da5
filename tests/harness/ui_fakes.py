"""Fakes shared by the UI tests: SeatViews for a three-seat table, a scripted node.

No tests here; the builders only make views the way table.py will (the contract in view.py).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from p2p_chinchon import view as V
from p2p_chinchon.engine import Card, Rules, make_rules, parse_card, parse_cards

RULES = make_rules("classic")  # French faces, 40 cards
SPANISH = make_rules("fournier")

HAND = tuple(parse_cards("5d 6d 7d Qs Qh Qc 3h"))  # two melds, 3 points of deadwood
DRAWN = Card(12, 0)  # K♦


NAMES = ("Ana", "Ben", "Carla")


def ev(kind: str, *seats: int | None, **fields: Any) -> V.LogEvent:
    """A log event about ``seats`` of NAMES (None: nobody), built as the table builds it;
    ``cards`` as text."""
    fields.setdefault("names", tuple(NAMES[s] if s is not None and s < len(NAMES) else "-" for s in seats))
    fields["cards"] = tuple(parse_card(c) for c in fields.get("cards", ()))
    return V.log_event(kind, tuple(s for s in seats if s is not None), **fields)


def seats(totals: Sequence[int] = (12, 30, 46), eliminated: Sequence[int] = ()) -> tuple[V.SeatInfo, ...]:
    names = NAMES
    return tuple(
        V.SeatInfo(i, names[i], f"{i}f3a9c21d07b", 7, totals[i], eliminated=i in eliminated,
                   is_dealer=i == 2, is_bot=i != 0)
        for i in range(len(totals)))


def lobby(rules: Rules = RULES) -> V.SeatView:
    return V.SeatView(me=0, table_name="kitchen", rules=rules, seats=seats((0, 0, 0)),
                      phase=V.LOBBY)


def draw_view(**kw: Any) -> V.SeatView:
    base = V.SeatView(me=0, table_name="kitchen", rules=RULES, seats=seats(), phase=V.PLAYING,
                      hand_no=1, dealer=2, to_play=0, step="draw", hand=HAND,
                      discard_top=Card(12, 2), discard_size=4, stock_size=23,
                      last_from_discard={1: Card(4, 3)},
                      events=(ev("draw_discard", 1, cards=["4♣"]), ev("discard", 1, cards=["K♠"])),
                      log_total=2)
    return dataclasses.replace(base, **kw)


def discard_view(close_options: Sequence[Any] = (), first_round: bool = True, **kw: Any) -> V.SeatView:
    kw = {"hand": HAND + (DRAWN,), "stock_size": 22, **kw}
    return draw_view(step="discard", close_options=close_options, first_round=first_round, **kw)


def waiting_view(**kw: Any) -> V.SeatView:
    return draw_view(to_play=1, step="draw", **kw)


def showdown_view(**kw: Any) -> V.SeatView:
    base = V.SeatView(
        me=0, table_name="kitchen", rules=RULES, seats=seats((15, 104, 49), eliminated=(1,)),
        phase=V.REENTRY, hand_no=2, dealer=0, closer=2,
        showdown=(
            V.ShownHand(2, (tuple(parse_cards("Ah 2h 3h")), tuple(parse_cards("Js Jh Jc"))), (),
                        (Card(3, 2),), 3),
            V.ShownHand(0, (tuple(parse_cards("5d 6d 7d")),), (Card(4, 0),),
                        tuple(parse_cards("Qs 2c")), 12),
            V.ShownHand(1, (), (), tuple(parse_cards("Kd Ks 7c")), 27),
        ),
        score_history=((3, 77, 46), (12, 27, 3)), reentry_offer=False)
    return dataclasses.replace(base, **kw)
