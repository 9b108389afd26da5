"""Helpers shared by the ``melds``, ``score`` and ``rules`` commands (no I/O here)."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import JOKER, Card, parse_cards, split_card_text
from .rules import PRESETS, Rules, RulesError, make_rules

__all__ = ["parse_options", "rules_from_args", "parse_hands", "default_style", "output_style"]


def parse_options(items: Sequence[str] | None) -> dict[str, str]:
    """``["limit=70", "jokers=2"]`` -> ``{"limit": "70", "jokers": "2"}``.
    Raises RulesError for an item without ``=``."""
    out: dict[str, str] = {}
    for item in items or ():
        key, sep, value = item.partition("=")
        if not sep or not key.strip():
            raise RulesError(f"option {item!r} is not KEY=VALUE")
        out[key.strip()] = value.strip()
    return out


def rules_from_args(preset: str, options: Sequence[str] | None) -> Rules:
    """The preset plus ``--option KEY=VALUE`` items. Raises RulesError."""
    return make_rules(preset, parse_options(options))


def parse_hands(texts: Sequence[str], rules: Rules | None = None) -> list[list[Card]]:
    """Parse several hands (each a space/comma separated string) together, so repeated faces
    across hands become the two packs' copies. With ``rules``, the k-th joker is the k-th joker
    of the deck (pack by pack), as jokers are alike: with one joker per pack the second is the
    second pack's; the cards are read in the table's notation (:func:`default_style`: on a
    Spanish deck ``5c`` is the 5 of copas and ``1o`` the 1 of oros). Raises CardError."""
    tokens = [split_card_text(t) for t in texts]
    flat = parse_cards([x for ts in tokens for x in ts], default_style(rules) if rules is not None else None)
    if rules is not None:
        ids = [Card(JOKER, s, c) for c in range(2) for s in range(rules.jokers)]
        spare = [Card(JOKER, s, c) for c in range(2) for s in range(2)]
        ids += [c for c in spare if c not in ids]  # beyond the deck: check_hands refuses them
        it = iter(ids)
        flat = [next(it) if c.is_joker else c for c in flat]
    out, i = [], 0
    for ts in tokens:
        out.append(flat[i : i + len(ts)])
        i += len(ts)
    return out


def default_style(rules: Rules) -> str:
    """Card names in the deck's own notation."""
    return "spanish" if rules.suits == "spanish" else "french"


def output_style(rules: Rules, style: str | None = None) -> str:
    """The :meth:`Card.name` style for ``--style`` on a table under ``rules`` (None: the deck's
    own), chosen so that :func:`parse_hands` reads the names back: "ascii" on a Spanish deck is
    the short Spanish notation ("ascii-spanish": ``c`` is copas there, as on input)."""
    if style is None:
        return default_style(rules)
    if style == "ascii" and rules.suits == "spanish":
        return "ascii-spanish"
    return style


PRESET_CHOICES = tuple(PRESETS)
