"""After a close: melds shown, lay-offs, penalties (000 "After a player closes", "Scoring";
001 "Show combinations"; 002 "Cortar"; 003 "Poser sur les combinaisons").

Going round from the closer, each other player shows melds and lays off unmatched cards onto
melds already on the table where ``rules.lay_off`` allows (the closer's only, or also those shown
by earlier players), chaining (4♦ then 3♦ onto 5♦ 6♦ 7♦). After a clean close
``rules.lay_off_after_clean`` forbids lay-off on the closer's melds ("others") or altogether
("none"). Each player gets the melds and lay-offs that minimise their own penalty; ties go to
fewer laid-off cards, then to the first in a fixed order, so every node computes the same.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

from .cards import Card
from .melds import ClosedHand, Meld, best_arrangement, close_result, make_meld
from .rules import Rules

__all__ = ["LayOff", "PlayerShowdown", "Showdown", "ShowdownError", "score_showdown"]


class ShowdownError(ValueError):
    """The closer's cards cannot close, or the hands are malformed (size, repeated cards)."""


@dataclass(frozen=True, slots=True)
class LayOff:
    """``card`` laid off onto meld ``onto_meld`` (index into that player's ``melds``) of player
    ``onto_player`` (index in the showdown: 0 = the closer)."""

    card: Card
    onto_player: int
    onto_meld: int

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {"card": self.card.name(style), "onto_player": self.onto_player,
                "onto_meld": self.onto_meld}


@dataclass(frozen=True, slots=True)
class PlayerShowdown:
    """One player's result: their own ``melds`` as shown, their ``laid_off`` cards, the
    ``deadwood`` left and the ``penalty`` added to their total (negative = bonus)."""

    cards: tuple[Card, ...]
    melds: tuple[Meld, ...]
    laid_off: tuple[LayOff, ...]
    deadwood: tuple[Card, ...]
    penalty: int

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {
            "melds": [m.names(style) for m in self.melds],
            "laid_off": [lo.to_dict(style) for lo in self.laid_off],
            "deadwood": [c.name(style) for c in self.deadwood],
            "penalty": self.penalty,
        }


@dataclass(frozen=True, slots=True)
class Showdown:
    """Everyone's result, closer first. ``game_won``: the closer showed a chinchón and
    ``rules.chinchon_wins`` (000 "Chinchón"). ``table``: per player, the cards of each of
    their melds after all lay-offs."""

    players: tuple[PlayerShowdown, ...]
    closer: ClosedHand
    game_won: bool
    table: tuple[tuple[tuple[Card, ...], ...], ...]

    @property
    def penalties(self) -> tuple[int, ...]:
        return tuple(p.penalty for p in self.players)

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {
            "players": [
                dict(p.to_dict(style), game_won=self.game_won and i == 0)
                for i, p in enumerate(self.players)
            ],
            "penalties": list(self.penalties),
            "game_won": self.game_won,
            "chinchon": self.closer.chinchon,
            "clean": self.closer.clean,
        }


class _Target:
    __slots__ = ("owner", "index", "cards", "kind", "suit", "rank")

    def __init__(self, owner: int, index: int, meld: Meld) -> None:
        self.owner = owner
        self.index = index
        self.cards = list(meld.cards)
        faces = meld.faces()
        self.kind = meld.kind
        self.suit = faces[0].suit
        self.rank = faces[0].rank


def _compatible(card: Card, t: _Target, rules: Rules) -> bool:
    if rules.is_wild(card):
        return True
    return card.suit == t.suit if t.kind == "run" else card.rank == t.rank


def _assign(cards: list[Card], targets: list[_Target], rules: Rules) -> list[int] | None:
    """Target index for each card so that every extended meld is still a meld, or None."""
    extra: list[list[Card]] = [[] for _ in targets]
    choice: list[int] = []

    def rec(k: int) -> bool:
        if k == len(cards):
            return all(
                not extra[j] or make_meld(t.cards + extra[j], rules) is not None
                for j, t in enumerate(targets)
            )
        c = cards[k]
        for j, t in enumerate(targets):
            if not _compatible(c, t, rules):
                continue
            if t.kind == "set" and len(t.cards) + len(extra[j]) >= 4:
                continue
            extra[j].append(c)
            choice.append(j)
            if rec(k + 1):
                return True
            extra[j].pop()
            choice.pop()
        return False

    return list(choice) if rec(0) else None


def _play(
    hand: Sequence[Card], targets: list[_Target], rules: Rules
) -> tuple[tuple[Meld, ...], list[tuple[Card, int]], tuple[Card, ...], int]:
    """Best (melds, [(card, target index)], deadwood, penalty) for one player."""
    cards = sorted(hand)
    eligible = [c for c in cards if any(_compatible(c, t, rules) for t in targets)]
    options: list[tuple[int, int, int, tuple[Card, ...], object]] = []
    order = 0
    for k in range(len(eligible) + 1):
        for combo in combinations(eligible, k):
            rest = [c for c in cards if c not in combo]
            arr = best_arrangement(rest, rules)
            options.append((arr.points, k, order, combo, arr))
            order += 1
    options.sort(key=lambda o: (o[0], o[1], o[2]))
    for points, k, _, combo, arr in options:
        where = _assign(list(combo), targets, rules) if combo else []
        if where is not None:
            return arr.melds, list(zip(combo, where)), arr.deadwood, points  # type: ignore[attr-defined]
    raise AssertionError("laying off nothing is always possible")  # pragma: no cover


def score_showdown(
    rules: Rules, closer_cards: Sequence[Card], other_hands: Sequence[Sequence[Card]]
) -> Showdown:
    """Score a closed hand. ``closer_cards``: the closer's seven kept cards (the face-down
    discard excluded); ``other_hands``: the other players' hands in playing order from the
    closer. Returns a :class:`Showdown` (closer first).

    Raises :class:`ShowdownError` when the closer's cards cannot close under ``rules``, a hand
    has more than 8 cards, or a physical card appears twice."""
    closer = list(closer_cards)
    if len(closer) != 7:
        raise ShowdownError(f"the closer shows 7 cards, got {len(closer)}")
    seen: set[Card] = set()
    for h in [closer, *other_hands]:
        if len(h) > 8:
            raise ShowdownError(f"a hand of {len(h)} cards")
        for c in h:
            if not isinstance(c, Card):
                raise ShowdownError(f"not a card: {c!r}")
            if c in seen:
                raise ShowdownError(f"{c} appears twice")
            seen.add(c)
    try:
        closed = close_result(closer, rules)
    except ValueError as exc:
        raise ShowdownError(str(exc)) from None
    if closed is None:
        best = best_arrangement(closer, rules)
        raise ShowdownError(
            f"the closer cannot close: {len(best.deadwood)} unmatched card(s), "
            f"{best.points} points"
        )
    game_won = closed.chinchon
    clean = closed.clean
    table: list[list[_Target]] = [
        [_Target(0, i, m) for i, m in enumerate(closed.arrangement.melds)]
    ]
    results = [
        PlayerShowdown(tuple(closer), closed.arrangement.melds, (),
                       closed.arrangement.deadwood, closed.score)
    ]
    mode = rules.lay_off
    if clean and rules.lay_off_after_clean == "none":
        mode = "none"
    for p, hand in enumerate(other_hands, start=1):
        if mode == "none":
            targets: list[_Target] = []
        else:
            owners = [0] if mode == "closer" else list(range(len(table)))
            if clean and rules.lay_off_after_clean == "others":
                owners = [o for o in owners if o != 0]
            targets = [t for o in owners for t in table[o]]
        melds, lays, deadwood, penalty = _play(hand, targets, rules)
        laid: list[LayOff] = []
        for card, j in lays:
            t = targets[j]
            t.cards.append(card)
            laid.append(LayOff(card, t.owner, t.index))
        table.append([_Target(p, i, m) for i, m in enumerate(melds)])
        results.append(PlayerShowdown(tuple(hand), melds, tuple(laid), deadwood, penalty))
    final = tuple(
        tuple(_final_cards(t, rules) for t in row) for row in table
    )
    return Showdown(tuple(results), closed, game_won, final)


def _final_cards(t: _Target, rules: Rules) -> tuple[Card, ...]:
    m = make_meld(t.cards, rules)
    assert m is not None
    return m.cards
