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

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from .cards import Card
from .hands import check_hands
from .melds import Arrangement, ClosedHand, Meld, best_arrangement, close_result, make_meld
from .rules import Rules
from .words import counted

__all__ = ["LayOff", "PlayerShowdown", "Showdown", "ShowdownError", "check_showdown",
           "score_showdown"]

HAND_SIZE = 7


class ShowdownError(ValueError):
    """The closer's cards cannot close, or the hands are malformed (size, repeated cards)."""


@dataclass(frozen=True, slots=True)
class LayOff:
    """``card`` laid off onto meld ``onto_meld`` (index into that player's ``melds``) of player
    ``onto_player`` (index in the showdown: 0 = the closer); ``onto_cards``: that meld as it
    lies when the card goes on (earlier lay-offs included, runs low to high). A player's
    lay-offs are listed in an order in which they can be laid one at a time."""

    card: Card
    onto_player: int
    onto_meld: int
    onto_cards: tuple[Card, ...] = ()

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {"card": self.card.name(style), "onto_player": self.onto_player,
                "onto_meld": self.onto_meld, "onto_cards": [c.name(style) for c in self.onto_cards]}


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
    closer: ClosedHand | None  # None: nobody closed (a dead hand scored as it stands)
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
            "chinchon": self.closer.chinchon if self.closer is not None else False,
            "clean": self.closer.clean if self.closer is not None else False,
        }


class _Target:
    """A meld on the table: its cards as they lie (lay-offs appended). The meld is its cards,
    not the reading it was first shown as: one real card and wild cards may be a set or a run,
    and a lay-off may turn one into the other (000 "as long as the meld stays correct")."""

    __slots__ = ("owner", "index", "cards")

    def __init__(self, owner: int, index: int, meld: Meld) -> None:
        self.owner = owner
        self.index = index
        self.cards = list(meld.cards)


def _may_join(card: Card, cards: Sequence[Card], rules: Rules) -> bool:
    """A quick necessary condition for ``cards`` plus ``card`` to be a meld: a wild card, or a
    real card with the rank of every real card there (a set of at most four) or their suit (a
    run). :func:`make_meld` decides."""
    if rules.is_wild(card):
        return True
    reals = [c for c in cards if not rules.is_wild(c)]
    as_set = len(cards) < 4 and all(c.rank == card.rank for c in reals)
    return as_set or all(c.suit == card.suit for c in reals)


def _playable(base: list[Card], extra: list[Card], rules: Rules) -> list[Card] | None:
    """``extra`` in an order in which each card, laid on its own, leaves ``base`` a meld (4♦
    before 3♦ onto 5♦ 6♦ 7♦), or None. Tries the cards in the given order, so it is
    deterministic."""
    if not extra:
        return []
    for i, c in enumerate(extra):
        if make_meld(base + [c], rules) is not None:
            rest = _playable(base + [c], extra[:i] + extra[i + 1 :], rules)
            if rest is not None:
                return [c, *rest]
    return None


def _assign(
    cards: list[Card], targets: list[_Target], rules: Rules
) -> list[tuple[Card, int]] | None:
    """(card, target index) for every card, in an order in which they can be laid one at a
    time with every meld still a meld after each; None when there is no such assignment."""
    extra: list[list[Card]] = [[] for _ in targets]
    plan: list[tuple[Card, int]] = []

    def rec(k: int) -> bool:
        if k == len(cards):
            plan.clear()
            for j, t in enumerate(targets):
                order = _playable(t.cards, extra[j], rules)
                if order is None:
                    return False
                plan.extend((c, j) for c in order)
            return True
        c = cards[k]
        for j, t in enumerate(targets):
            if not _may_join(c, t.cards + extra[j], rules):
                continue
            extra[j].append(c)
            if rec(k + 1):
                return True
            extra[j].pop()
        return False

    return plan if rec(0) else None


def _play(
    hand: Sequence[Card], targets: list[_Target], rules: Rules
) -> tuple[tuple[Meld, ...], list[tuple[Card, int]], tuple[Card, ...], int]:
    """Best (melds, [(card, target index)], deadwood, penalty) for one player."""
    cards = sorted(hand)
    eligible = [c for c in cards if any(_may_join(c, t.cards, rules) for t in targets)]
    options: list[tuple[int, int, int, tuple[Card, ...], Arrangement]] = []
    order = 0
    for k in range(len(eligible) + 1):
        for combo in combinations(eligible, k):
            rest = [c for c in cards if c not in combo]
            arr = best_arrangement(rest, rules)
            options.append((arr.points, k, order, combo, arr))
            order += 1
    options.sort(key=lambda o: (o[0], o[1], o[2]))
    for points, _k, _, combo, arr in options:
        plan = _assign(list(combo), targets, rules) if combo else []
        if plan is not None:
            return arr.melds, plan, arr.deadwood, points
    raise AssertionError("laying off nothing is always possible")  # pragma: no cover


def check_showdown(
    rules: Rules, closer_cards: Sequence[Card], other_hands: Sequence[Sequence[Card]],
    n_players: int | None = None, closer_sizes: tuple[int, ...] = (HAND_SIZE,),
) -> None:
    """Can these hands be a showdown at one table? The table has ``n_players`` seats (default:
    one per hand shown), within the rules' player range; at least one other hand and no more
    than the seats; the closer shows a size in ``closer_sizes`` and every other player holds
    seven (000 "Setup": seven cards each); every card is in the table's deck once
    (:func:`~p2p_chinchon.engine.hands.check_hands`). Raises :class:`ShowdownError`."""
    shown = 1 + len(other_hands)
    if shown < 2:
        raise ShowdownError("give the closer's hand and at least one other")
    n = shown if n_players is None else n_players
    if not rules.min_players <= n <= rules.max_players:
        raise ShowdownError(f"{n} players: the {rules.preset} rules take "
                            f"{rules.min_players}-{rules.max_players}")
    if shown > n:
        raise ShowdownError(f"{shown} hands shown at a table of {n} players")
    if len(closer_cards) not in closer_sizes:
        sizes = " or ".join(map(str, closer_sizes))
        raise ShowdownError(f"the closer shows {sizes} cards, got {len(closer_cards)}")
    for i, h in enumerate(other_hands, start=1):
        if len(h) != HAND_SIZE:
            raise ShowdownError(f"hand {i} has {len(h)} cards: a player who did not close "
                                f"holds {HAND_SIZE}")
    try:
        check_hands(rules, [closer_cards, *other_hands], n)
    except ValueError as exc:  # CardError, RulesError
        raise ShowdownError(str(exc)) from None


def score_showdown(
    rules: Rules, closer_cards: Sequence[Card], other_hands: Sequence[Sequence[Card]],
    *, n_players: int | None = None,
) -> Showdown:
    """Score a closed hand. ``closer_cards``: the closer's seven kept cards (the face-down
    discard excluded); ``other_hands``: the other players' seven-card hands in playing order
    from the closer; ``n_players``: seats at the table, which decide the packs (default: one
    per hand shown; a game passes its seat count, as eliminated seats show no hand). Returns a
    :class:`Showdown` (closer first).

    Raises :class:`ShowdownError` when the hands cannot be (:func:`check_showdown`: player
    count, hand sizes, a card twice or not in the deck) or the closer's cards cannot close."""
    closer = list(closer_cards)
    check_showdown(rules, closer, other_hands, n_players)
    closed = close_result(closer, rules)
    if closed is None:
        best = best_arrangement(closer, rules)
        raise ShowdownError(
            f"the closer cannot close: {counted(len(best.deadwood), 'unmatched card')}, "
            f"{counted(best.points, 'point')}"
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
            laid.append(LayOff(card, t.owner, t.index, _final_cards(t, rules)))
            t.cards.append(card)
        table.append([_Target(p, i, m) for i, m in enumerate(melds)])
        results.append(PlayerShowdown(tuple(hand), melds, tuple(laid), deadwood, penalty))
    final = tuple(
        tuple(_final_cards(t, rules) for t in row) for row in table
    )
    return Showdown(tuple(results), closed, game_won, final)


def score_standing(rules: Rules, hands: Sequence[Sequence[Card]], *, n_players: int | None = None) -> Showdown:
    """Score a hand nobody closed, as it stands (table options ``max_reshuffles`` and
    ``reshuffle_end="score"``): each player shows seven cards and scores the
    deadwood of their best arrangement; nobody lays off (there is no closer's table to lay
    off on) and nobody gets a close's bonus. ``hands`` in playing order from the seat whose
    turn it was. Raises :class:`ShowdownError` as :func:`score_showdown` does."""
    if not hands:
        raise ShowdownError("no hand to score")
    check_showdown(rules, list(hands[0]), hands[1:], n_players)
    results, table = [], []
    for hand in hands:
        melds, _lays, deadwood, penalty = _play(list(hand), [], rules)
        results.append(PlayerShowdown(tuple(hand), melds, (), deadwood, penalty))
        table.append(tuple(m.cards for m in melds))
    return Showdown(tuple(results), None, False, tuple(table))


def _final_cards(t: _Target, rules: Rules) -> tuple[Card, ...]:
    m = make_meld(t.cards, rules)
    assert m is not None
    return m.cards
