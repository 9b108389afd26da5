"""Are these hands possible at one table? Every card must be a physical card of the table's deck
and appear once: one pack unless the table plays two (000 "Variants": two packs from five
players; ``decks``/``two_decks_from`` in ``docs/rules.md``), jokers at most ``jokers`` per pack.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from .cards import Card, CardError
from .rules import Rules
from .words import counted

__all__ = ["check_hands"]


def check_hands(
    rules: Rules, hands: Sequence[Sequence[Card]], n_players: int | None = None
) -> None:
    """Check that ``hands`` (lists of :class:`Card`) can lie together on one table.

    ``n_players``: the table's size, which decides the packs (:meth:`Rules.packs`); None means
    any table these rules allow (:meth:`Rules.max_packs`), for a hand seen on its own.

    Raises :class:`CardError` (one line, naming the card) for a non-card, a card repeated, a
    second copy on a one-pack table, more jokers than the deck holds or a card outside the deck;
    :class:`~p2p_chinchon.engine.rules.RulesError` when ``n_players`` is outside the rules'
    player range."""
    in_deck: Callable[[Card], bool]
    if n_players is None:
        packs = rules.max_packs()
        in_deck = rules.has_card
    else:
        deck = frozenset(rules.deck(n_players))
        packs = rules.packs(n_players)
        in_deck = deck.__contains__
    seen: set[Card] = set()
    for hand in hands:
        for c in hand:
            if not isinstance(c, Card):
                raise CardError(f"not a card: {c!r}")
            if c in seen:
                raise CardError(f"{_name(c, rules)} appears twice")
            seen.add(c)
            if not in_deck(c):
                raise CardError(_why_not(c, seen, rules, packs, n_players))


def _name(c: Card, rules: Rules) -> str:
    return c.name(rules.suits)


def _why_not(c: Card, seen: set[Card], rules: Rules, packs: int, n_players: int | None) -> str:
    table = (f"a table of {n_players} players" if n_players is not None
             else f"every {rules.preset} table with these options")
    pack_words = "one pack" if packs == 1 else f"{packs} packs"
    if c.is_joker:
        held = sum(1 for x in seen if x.is_joker)
        return (f"{counted(held, 'joker')}, but {table} has {rules.jokers * packs} "
                f"({rules.jokers} per pack, {pack_words})")
    if c.copy >= packs and c.rank in rules.pack_ranks():
        again = "appears twice" if Card(c.rank, c.suit) in seen else "is a second pack's card"
        return f"{_name(c, rules)} {again}, but {table} plays {pack_words}"
    return f"{_name(c, rules)} is not in this table's deck ({rules.deck_size} cards per pack)"
