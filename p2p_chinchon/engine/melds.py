"""Melds, the best arrangement of a hand, and closing.

* :func:`make_meld` decides whether some cards form one meld (set or run, 000 "Melds") under
  the table's wild-card limits, and what each wild card stands for.
* :func:`best_arrangement` is the exact least-deadwood search for 0..8 cards: candidate melds
  are built directly from rank and suit groups, then a memoised exact-cover search over bit
  masks picks the disjoint melds that leave the fewest penalty points.
  :func:`best_arrangement_bruteforce` is the slow reference (every subset checked by
  :func:`make_meld`, every disjoint combination tried) used by tests and the benchmark.
* :func:`close_result`, :func:`can_close` and :func:`close_options` apply the close rules
  (000 "Closing", "Chinchón", "Variants"; 001; 002 "Cortar"; 003 "Fermer").
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations

from .cards import Card
from .hands import check_hands
from .rules import Rules

__all__ = [
    "Meld",
    "Arrangement",
    "ClosedHand",
    "CloseOption",
    "make_meld",
    "best_arrangement",
    "best_arrangement_bruteforce",
    "close_result",
    "can_close",
    "close_options",
    "is_chinchon",
    "MAX_CARDS",
]

MAX_CARDS = 8


@dataclass(frozen=True, slots=True)
class Meld:
    """A set or a run.

    ``cards``: runs from low to high with each wild card in the place it fills, sets in suit
    order. ``stands_for[i]`` is the natural card (copy 0) that ``cards[i]`` stands for when
    ``cards[i]`` is wild, else None."""

    kind: str
    cards: tuple[Card, ...]
    stands_for: tuple[Card | None, ...]

    @property
    def wilds(self) -> int:
        return sum(1 for s in self.stands_for if s is not None)

    def faces(self) -> tuple[Card, ...]:
        """The natural cards the meld shows (wild cards replaced by what they stand for)."""
        return tuple(s if s is not None else c for c, s in zip(self.cards, self.stands_for, strict=True))

    def names(self, style: str = "french") -> list[str]:
        return [c.name(style) for c in self.cards]

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {
            "kind": self.kind,
            "cards": self.names(style),
            "stands_for": [None if s is None else s.name(style) for s in self.stands_for],
        }


@dataclass(frozen=True, slots=True)
class Arrangement:
    """Melds plus deadwood (unmatched cards) and their penalty ``points``."""

    melds: tuple[Meld, ...]
    deadwood: tuple[Card, ...]
    points: int

    @property
    def matched(self) -> int:
        return sum(len(m.cards) for m in self.melds)

    def to_dict(self, style: str = "french") -> dict[str, object]:
        return {
            "melds": [m.names(style) for m in self.melds],
            "deadwood": [c.name(style) for c in self.deadwood],
            "points": self.points,
        }


def make_meld(cards: Sequence[Card], rules: Rules) -> Meld | None:
    """The meld formed by exactly ``cards``, or None.

    Set: 3 or 4 cards of one rank in different suits (two packs: duplicates cannot share a
    set). Run: 3 or more cards of one suit in run order with no gaps (the 7 and J adjacent in
    the 40-card deck; the ace only low, the king only high: no K-A-2). Wild cards fill gaps or
    extend a run (upwards first), or fill missing suits of a set, within
    ``rules.max_wild_per_meld`` and ``rules.min_real_per_meld``."""
    n = len(cards)
    if n < 3:
        return None
    wilds = [c for c in cards if rules.is_wild(c)]
    reals = [c for c in cards if not rules.is_wild(c)]
    if len(wilds) > rules.max_wild_per_meld or len(reals) < rules.min_real_per_meld:
        return None
    if not reals:
        return None
    order = rules.pack_ranks()
    if any(c.rank not in order for c in reals):
        return None
    # Set
    if n <= 4 and len({c.rank for c in reals}) == 1 and len({c.suit for c in reals}) == len(reals):
        rank = reals[0].rank
        missing = [s for s in range(4) if s not in {c.suit for c in reals}]
        by_suit = sorted(reals, key=lambda c: c.suit)
        seq: list[tuple[int, Card, Card | None]] = [(c.suit, c, None) for c in by_suit]
        for w, s in zip(sorted(wilds), missing, strict=False):
            seq.append((s, w, Card(rank, s)))
        seq.sort(key=lambda t: (t[0], t[2] is not None))
        return Meld("set", tuple(t[1] for t in seq), tuple(t[2] for t in seq))
    # Run
    suit = reals[0].suit
    if any(c.suit != suit for c in reals):
        return None
    pos = sorted(order.index(c.rank) for c in reals)
    if len(set(pos)) != len(pos) or n > len(order):
        return None
    lo, hi = pos[0], pos[-1]
    if hi - lo + 1 > n:
        return None
    extra = n - (hi - lo + 1)
    up = min(extra, len(order) - 1 - hi)
    hi += up
    lo -= extra - up
    real_at = {order.index(c.rank): c for c in reals}
    wl = sorted(wilds)
    cards_out: list[Card] = []
    stands: list[Card | None] = []
    for p in range(lo, hi + 1):
        if p in real_at:
            cards_out.append(real_at[p])
            stands.append(None)
        else:
            cards_out.append(wl.pop(0))
            stands.append(Card(order[p], suit))
    return Meld("run", tuple(cards_out), tuple(stands))


# -- fast exact search ------------------------------------------------------------------------


def _candidates(cards: Sequence[Card], rules: Rules) -> list[int]:
    """Bit masks (over ``cards``) of every subset that forms a meld. Built from rank and suit
    groups, so that only plausible subsets are generated."""
    maxw = rules.max_wild_per_meld
    minr = max(1, rules.min_real_per_meld)
    order = rules.pack_ranks()
    plen = len(order)
    pos_of = {r: i for i, r in enumerate(order)}
    wild_idx: list[int] = []
    by_rank: dict[int, list[int]] = {}
    by_suit: dict[int, list[int]] = {}
    for i, c in enumerate(cards):
        if rules.is_wild(c):
            wild_idx.append(i)
        elif c.rank in pos_of:
            by_rank.setdefault(c.rank, []).append(i)
            by_suit.setdefault(c.suit, []).append(i)
    nw = min(len(wild_idx), maxw)
    wild_masks: list[list[int]] = [
        [sum(1 << j for j in combo) for combo in combinations(wild_idx, w)] for w in range(nw + 1)
    ]
    out: set[int] = set()
    for group in by_rank.values():
        for k in range(minr, min(4, len(group)) + 1):
            for combo in combinations(group, k):
                if len({cards[j].suit for j in combo}) != k:
                    continue
                base = sum(1 << j for j in combo)
                for w in range(max(0, 3 - k), min(nw, 4 - k) + 1):
                    for wm in wild_masks[w]:
                        out.add(base | wm)
    for group in by_suit.values():
        group = sorted(group, key=lambda j: pos_of[cards[j].rank])
        for k in range(minr, len(group) + 1):
            if nw == 0 and k < 3:
                continue
            for combo in combinations(group, k):
                ps = [pos_of[cards[j].rank] for j in combo]
                if len(set(ps)) != k:
                    continue
                gaps = ps[-1] - ps[0] + 1 - k
                lo_w = max(gaps, 3 - k)
                hi_w = min(nw, plen - k)
                if lo_w > hi_w:
                    continue
                base = sum(1 << j for j in combo)
                for w in range(lo_w, hi_w + 1):
                    for wm in wild_masks[w]:
                        out.add(base | wm)
    return sorted(out)


_UNLIMITED = 99


def _search(
    n: int,
    values: Sequence[int],
    wildmask: int,
    cands: Sequence[int],
    budget: int,
    wild_dead_ok: bool,
) -> tuple[int, list[int], int] | None:
    """Least deadwood points over disjoint melds from ``cands`` covering all but at most
    ``budget`` cards (``_UNLIMITED``: no bound), wild cards in deadwood only if
    ``wild_dead_ok``. Returns (points, chosen meld masks, deadwood mask) or None when no
    arrangement meets the bounds. Ties: fewer deadwood cards, then the first found."""
    by_card: list[list[int]] = [[] for _ in range(n)]
    for m in cands:
        by_card[(m & -m).bit_length() - 1].append(m)
    memo: dict[tuple[int, int], tuple[int, int, int] | None] = {}
    limited = budget < _UNLIMITED

    def rec(mask: int, left: int) -> tuple[int, int, int] | None:
        if mask == 0:
            return (0, 0, 0)
        key = (mask, left)
        if key in memo:
            return memo[key]
        low = mask & -mask
        i = low.bit_length() - 1
        best: tuple[int, int, int] | None = None
        if left > 0 and (wild_dead_ok or not wildmask & low):
            r = rec(mask ^ low, left - 1 if limited else left)
            if r is not None:
                best = (r[0] + values[i], r[1] + 1, 0)
        # Every candidate containing card i: i is the lowest card left, so a candidate that
        # contains i but a lower card cannot fit; indexing by lowest card is therefore exact.
        for m in by_card[i]:
            if m & mask == m:
                r = rec(mask ^ m, left)
                if r is not None and (best is None or (r[0], r[1]) < (best[0], best[1])):
                    best = (r[0], r[1], m)
        memo[key] = best
        return best

    full = (1 << n) - 1
    top = rec(full, budget)
    if top is None:
        return None
    chosen: list[int] = []
    dead = 0
    mask, left = full, budget
    while mask:
        r = memo[(mask, left)]
        assert r is not None
        if r[2] == 0:
            low = mask & -mask
            dead |= low
            mask ^= low
            if limited:
                left -= 1
        else:
            chosen.append(r[2])
            mask ^= r[2]
    return top[0], chosen, dead


def _check_input(cards: Sequence[Card], rules: Rules) -> list[Card]:
    cs = list(cards)
    if len(cs) > MAX_CARDS:
        raise ValueError(f"{len(cs)} cards: the meld search takes at most {MAX_CARDS}")
    if not all(isinstance(c, Card) for c in cs):
        raise TypeError("cards must be Card values")
    check_hands(rules, [cs])
    return sorted(cs)


def _build(cs: list[Card], rules: Rules, chosen: list[int], dead: int, points: int) -> Arrangement:
    melds = []
    for m in chosen:
        meld = make_meld([cs[j] for j in range(len(cs)) if m >> j & 1], rules)
        assert meld is not None
        melds.append(meld)
    deadwood = tuple(cs[j] for j in range(len(cs)) if dead >> j & 1)
    return Arrangement(tuple(melds), deadwood, points)


def _arrange(
    cards: Sequence[Card], rules: Rules, budget: int = _UNLIMITED, wild_dead_ok: bool = True
) -> Arrangement | None:
    cs = _check_input(cards, rules)
    values = [rules.value(c) for c in cs]
    wildmask = sum(1 << i for i, c in enumerate(cs) if rules.is_wild(c))
    res = _search(len(cs), values, wildmask, _candidates(cs, rules), budget, wild_dead_ok)
    if res is None:
        return None
    return _build(cs, rules, res[1], res[2], res[0])


def best_arrangement(cards: Sequence[Card], rules: Rules) -> Arrangement:
    """Least-deadwood arrangement of 0..8 distinct cards (exact), wild cards within the
    table's limits. A card that fits a set and a run goes where it saves most. Ties: fewer
    unmatched cards. Raises ValueError for more than 8 cards, and CardError (a ValueError) for
    a repeated card or one that no table under ``rules`` holds (a second copy when the rules
    never use two packs, too many jokers: :func:`~p2p_chinchon.engine.hands.check_hands`)."""
    res = _arrange(cards, rules)
    assert res is not None
    return res


def best_arrangement_bruteforce(cards: Sequence[Card], rules: Rules) -> Arrangement:
    """Slow reference for :func:`best_arrangement`: checks every subset with
    :func:`make_meld` and tries every combination of disjoint melds."""
    cs = _check_input(cards, rules)
    n = len(cs)
    values = [rules.value(c) for c in cs]
    melds = [
        m
        for m in range(1, 1 << n)
        if bin(m).count("1") >= 3 and make_meld([cs[j] for j in range(n) if m >> j & 1], rules)
    ]
    full = (1 << n) - 1
    best: tuple[int, int, list[int]] = (
        sum(values),
        n,
        [],
    )

    def dfs(start: int, used: int, chosen: list[int]) -> None:
        nonlocal best
        rest = full & ~used
        pts = sum(values[j] for j in range(n) if rest >> j & 1)
        key = (pts, bin(rest).count("1"))
        if key < best[:2]:
            best = (key[0], key[1], list(chosen))
        for k in range(start, len(melds)):
            if melds[k] & used == 0:
                chosen.append(melds[k])
                dfs(k + 1, used | melds[k], chosen)
                chosen.pop()

    dfs(0, 0, [])
    used = 0
    for m in best[2]:
        used |= m
    return _build(cs, rules, best[2], full & ~used, best[0])


# -- closing ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ClosedHand:
    """How seven kept cards close: the arrangement shown, the closer's ``score`` (penalty
    points, negative is a bonus), ``chinchon`` (an authentic seven-card run: wins the game when
    ``rules.chinchon_wins``) and ``wild_chinchon`` (a seven-card run with wild cards)."""

    arrangement: Arrangement
    score: int
    chinchon: bool
    wild_chinchon: bool

    @property
    def clean(self) -> bool:
        return not self.arrangement.deadwood

    @property
    def wins_game(self) -> bool:
        return self.chinchon


@dataclass(frozen=True, slots=True)
class CloseOption:
    """One legal close from eight cards: put ``discard`` face down and show ``kept``."""

    discard: Card
    kept: tuple[Card, ...]
    arrangement: Arrangement
    score: int
    chinchon: bool
    wild_chinchon: bool

    @property
    def wins_game(self) -> bool:
        return self.chinchon


def is_chinchon(cards: Sequence[Card], rules: Rules) -> bool:
    """Seven natural cards forming one run (000 "Chinchón"; 002: must be authentic)."""
    if len(cards) != 7 or any(rules.is_wild(c) for c in cards):
        return False
    m = make_meld(cards, rules)
    return m is not None and m.kind == "run"


def close_result(cards: Sequence[Card], rules: Rules) -> ClosedHand | None:
    """Can these seven kept cards close, and how? None when they cannot.

    A close needs at most ``close_max_unmatched`` unmatched cards worth at most
    ``close_max_points`` in all, and no wild card among them unless ``close_wild_unmatched``
    (000 "Closing": six matched and one card of 4 or less; 001: 1-3; 002: 5 or less;
    003: at most 5 points, no joker). Score: unmatched points; ``clean_close_points`` when all
    seven are matched; a seven-run with wild cards ``wild_chinchon_points_1/2`` (000 "Variants",
    001) when that is better; an authentic seven-run is a chinchón. The first-round ban is a
    game-state matter (see :class:`p2p_chinchon.engine.game.Game`).
    Raises ValueError unless exactly seven distinct cards are given."""
    cs = list(cards)
    if len(cs) != 7:
        raise ValueError(f"a close keeps 7 cards, got {len(cs)}")
    if rules.chinchon_wins and is_chinchon(cs, rules):
        run = make_meld(cs, rules)
        assert run is not None
        return ClosedHand(Arrangement((run,), (), 0), rules.clean_close_points, True, False)
    options: list[ClosedHand] = []
    arr = _arrange(cs, rules, rules.close_max_unmatched, rules.close_wild_unmatched)
    if arr is not None and arr.points <= rules.close_max_points:
        score = rules.clean_close_points if not arr.deadwood else arr.points
        options.append(ClosedHand(arr, score, False, False))
    run = make_meld(cs, rules)
    if run is not None and run.kind == "run" and run.wilds:
        pts = rules.wild_chinchon_points_1 if run.wilds == 1 else rules.wild_chinchon_points_2
        options.append(ClosedHand(Arrangement((run,), (), 0), pts, False, True))
    if not options:
        return None
    return min(options, key=lambda o: o.score)


def can_close(cards: Sequence[Card], rules: Rules) -> bool:
    """True when these seven kept cards may close (hand rules only, not the first round)."""
    return close_result(cards, rules) is not None


def close_options(cards: Sequence[Card], rules: Rules) -> list[CloseOption]:
    """Every legal close of an eight-card holding, best first (a chinchón, then the lowest
    score, then the highest-value discard). Empty when it cannot close.
    Raises ValueError unless exactly eight distinct cards are given."""
    cs = _check_input(cards, rules)
    if len(cs) != 8:
        raise ValueError(f"closing needs 8 cards (7 kept + the discard), got {len(cs)}")
    out: list[CloseOption] = []
    for i, d in enumerate(cs):
        kept = cs[:i] + cs[i + 1 :]
        r = close_result(kept, rules)
        if r is not None:
            out.append(
                CloseOption(d, tuple(kept), r.arrangement, r.score, r.chinchon, r.wild_chinchon)
            )
    out.sort(key=lambda o: (not o.chinchon, o.score, -rules.value(o.discard), o.discard))
    return out
