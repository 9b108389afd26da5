"""Before the game: the LAN table picker and the proposed rules in words.

:class:`TablePicker` is the model behind ``join`` without a table name (shown by the full screen
and by line mode through :meth:`p2p_chinchon.ui.bridge.UiBridge.pick_table`).
:func:`rules_in_words` turns an engine ``Rules`` into sentences for the lobby screen (field
meanings: ``p2p_chinchon.engine.rules.FIELD_HELP``; sources: the rule documents 000-003).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

from ..i18n import Translator
from .text import Line, cell, truncate


def seat_request(name: str, fingerprint: str, address: str, tr: Translator | None = None, *,
                 came: int = 0, queued: int = 0, blockable: bool = True) -> str:
    """The host's yes/no question before seating a joiner (no seat without the host's
    consent): the name the joiner gave, its key fingerprint to compare aloud, its address, how
    many sit already from there (``came``), the key that refuses everyone from there, and how
    many more wait (``queued``); in ``tr``'s language (None: English). ``blockable`` False:
    the address is shared by strangers (the transit relay), so no key refuses it all."""
    tr = tr or Translator("en")
    parts = [tr("ask_seat_request", name=name, fingerprint=fingerprint, address=address)]
    if came:
        parts.append(tr("ask_seat_came", n=came))
    if blockable:
        parts.append(tr("ask_seat_block", address=address))
    if queued:
        parts.append(tr("ask_seat_queued", n=queued))
    return " ".join(parts)


def _key(info: Any) -> tuple[Any, ...]:
    return (getattr(info, "name", None), getattr(info, "host", None), getattr(info, "port", None))


class TablePicker:
    """A live list of tables heard on the LAN, one selected; ``choose(info | None)`` is called
    once, with the chosen table or None when the person quits.

    Tables are any objects with ``name, host, port, preset, seats_taken, max_seats,
    fingerprint, version`` (``net`` discovery's ``TableInfo``)."""

    def __init__(self, choose: Callable[[Any], None]) -> None:
        self.tables: list[Any] = []
        self.index = 0
        self.done = False
        self._choose = choose

    def set_tables(self, tables: Sequence[Any]) -> None:
        """Replace the list, keeping the same table selected when it is still there."""
        current = _key(self.tables[self.index]) if self.tables else None
        self.tables = list(tables)
        keys = [_key(t) for t in self.tables]
        if current in keys:
            self.index = keys.index(current)
        else:
            self.index = min(self.index, max(0, len(self.tables) - 1))

    def choose(self, info: Any) -> None:
        if not self.done:
            self.done = True
            self._choose(info)

    def key(self, k: str) -> None:
        """"up"/"down" move, "enter" chooses, "1".."9" choose by number, "escape" quits."""
        if self.done:
            return
        if k == "up" and self.tables:
            self.index = (self.index - 1) % len(self.tables)
        elif k == "down" and self.tables:
            self.index = (self.index + 1) % len(self.tables)
        elif k == "enter" and self.tables:
            self.choose(self.tables[self.index])
        elif k.isdigit() and 1 <= int(k) <= len(self.tables):
            self.index = int(k) - 1
            self.choose(self.tables[self.index])
        elif k in ("escape", "q"):
            self.choose(None)

    def describe(self, i: int, info: Any, tr: Translator) -> str:
        addr = f"{getattr(info, 'host', '?')}:{getattr(info, 'port', '?')}"
        seats = tr("seats_n", taken=getattr(info, "seats_taken", "?"),
                   max=getattr(info, "max_seats", "?"))
        return (f"{i + 1:>2} {cell(str(getattr(info, 'name', '?')), 18)} {cell(addr, 21)} "
                f"{cell(str(getattr(info, 'preset', '')), 9)} {cell(seats, 10)} "
                f"{cell(str(getattr(info, 'fingerprint', '')), 11)} "
                f"v{getattr(info, 'version', '?')}")

    def lines(self, cols: int, tr: Translator) -> list[Line]:
        out: list[Line] = [[("class:label", tr("tables_heard"))]]
        if not self.tables:
            out.append([("class:dim", tr("no_tables_yet"))])
        for i, info in enumerate(self.tables):
            style = "class:card.picked" if i == self.index else ""
            out.append(truncate([(style, self.describe(i, info, tr))], cols))
        return out


# ------------------------------------------------------------------ rules in words

def _get(rules: Any, name: str, default: Any = None) -> Any:
    return getattr(rules, name, default)


def _wild_card_words(wild_card: str, rules: Any) -> tuple[str, dict[str, str]]:
    """``(catalogue key, fields)`` saying which card is wild, as the table's deck names it:
    "the 1 of oros" for a Spanish deck (never "Ad", which reads as a code), "A♦"
    for a French one; the stored text when it names no card."""
    from p2p_chinchon.engine import parse_card

    from .render import RANK_SPANISH, SUIT_SPANISH, Faces, card_text, deck_style

    try:
        card = parse_card(wild_card)
    except ValueError:
        return "rule_wild_card", {"card": wild_card}
    if deck_style(rules) == "spanish":
        return "rule_wild_card_spanish", {"rank": RANK_SPANISH.get(card.rank, str(card.rank)),
                                          "suit": SUIT_SPANISH[card.suit]}
    return "rule_wild_card", {"card": card_text(card, Faces(deck_style(rules), True, False))}


def rules_in_words(rules: Any, tr: Translator) -> list[str]:
    """One sentence per rule field that says something (a field with nothing to say, such as
    the wild-card value at a table without wild cards, gets none). Related fields share a
    sentence (close limit and unmatched count; re-entries, their count and condition).

    ``rules`` is an engine ``Rules`` (None gives []); an unknown field is listed as
    "field: value" so that nothing agreed on is hidden."""
    if rules is None:
        return []
    out: list[str] = []
    done: set[str] = set()

    def say(key: str, *fields: str, **kw: Any) -> None:
        out.append(tr(key, **kw))
        done.update(fields)

    preset = _get(rules, "preset")
    if preset:
        say("rule_preset", "preset", preset=preset)
    deck = _get(rules, "deck_size", _get(rules, "deck"))
    # the courts named as the table's cards show them: sota, caballo, rey on a Spanish deck
    faces = "_spanish" if _get(rules, "suits") == "spanish" and deck in (40, 48) else ""
    if deck in (40, 48, 52):
        say(f"rule_deck_{deck}{faces}", "deck_size", "deck")
    decks, two_from = _get(rules, "decks"), _get(rules, "two_decks_from")
    if decks == 1 or (decks == 0 and not two_from):
        say("rule_one_pack", "decks", "two_decks_from")
    elif decks == 2:
        say("rule_two_packs", "decks", "two_decks_from")
    elif decks == 0 and two_from:
        say("rule_two_packs_from", "decks", "two_decks_from", n=two_from)
    lo, hi = _get(rules, "min_players"), _get(rules, "max_players")
    if lo is not None and hi is not None:
        say("rule_players", "min_players", "max_players", lo=lo, hi=hi)
    jokers, wild_card = _get(rules, "jokers", 0), _get(rules, "wild_card", "")
    wild_fields = ("wild_points", "max_wild_per_meld", "min_real_per_meld",
                   "close_wild_unmatched", "wild_chinchon_points_1", "wild_chinchon_points_2")
    done.update(("jokers", "wild_card"))
    if jokers:
        say("rule_jokers", "jokers", n=jokers)
    if wild_card:
        key, fields = _wild_card_words(wild_card, rules)
        say(key, "wild_card", **fields)
    if jokers or wild_card:
        say("rule_wild_points", "wild_points", n=_get(rules, "wild_points"))
        binds = getattr(rules, "wild_cap_binds", None)
        real = _get(rules, "min_real_per_meld")
        if callable(binds) and not binds():  # a cap the deck's wild cards never reach: unsaid
            say("rule_wild_no_cap",
                "max_wild_per_meld", "min_real_per_meld", m=real)
        else:
            say("rule_wild_per_meld", "max_wild_per_meld", "min_real_per_meld",
                n=_get(rules, "max_wild_per_meld"), m=real)
        if _get(rules, "close_wild_unmatched"):
            say("rule_close_wild_unmatched", "close_wild_unmatched")
        else:
            say("rule_close_wild_matched", "close_wild_unmatched")
    else:
        done.update(wild_fields)
    court = _get(rules, "court_points")
    if court is not None:
        rank_valued = court == "rank" or (court == "auto" and deck == 48)
        say(("rule_court_rank" if rank_valued else "rule_court_flat") + faces, "court_points")
    suits = _get(rules, "suits")
    if suits in ("french", "spanish"):
        say(f"rule_suits_{suits}", "suits")
    n_unmatched, max_points = _get(rules, "close_max_unmatched"), _get(rules, "close_max_points")
    if n_unmatched is not None:
        if n_unmatched == 0:
            say("rule_close_all", "close_max_unmatched", "close_max_points")
        elif n_unmatched == 1:
            say("rule_close_one", "close_max_unmatched", "close_max_points", p=max_points)
        else:
            say("rule_close_many", "close_max_unmatched", "close_max_points",
                n=n_unmatched, p=max_points)
    ban = _get(rules, "first_round_ban")
    if ban is not None:
        say("rule_first_round_ban" if ban else "rule_no_first_round_ban", "first_round_ban")
    clean = _get(rules, "clean_close_points")
    if clean is not None:
        say("rule_clean_close", "clean_close_points", n=clean)
    wins = _get(rules, "chinchon_wins")
    if wins is not None:
        say("rule_chinchon_wins" if wins else "rule_chinchon_no_win", "chinchon_wins")
    if jokers or wild_card:
        most = getattr(rules, "most_wild_per_meld", None)
        if callable(most) and most() < 2:  # a seven-card run never holds two wild cards
            say("rule_wild_chinchon_one", "wild_chinchon_points_1", "wild_chinchon_points_2",
                a=_get(rules, "wild_chinchon_points_1"))
        else:
            say("rule_wild_chinchon", "wild_chinchon_points_1", "wild_chinchon_points_2",
                a=_get(rules, "wild_chinchon_points_1"), b=_get(rules, "wild_chinchon_points_2"))
    lay = _get(rules, "lay_off")
    if lay in ("all", "closer", "none"):
        say(f"rule_lay_off_{lay}", "lay_off")
    after = _get(rules, "lay_off_after_clean")
    if after in ("same", "others", "none") and lay != "none":
        say(f"rule_after_clean_{after}", "lay_off_after_clean")
    done.add("lay_off_after_clean")
    limit = _get(rules, "limit")
    if limit is not None:
        say("rule_limit", "limit", n=limit)
    re_n = _get(rules, "reentries")
    if re_n is not None:
        if re_n == 1:
            say("rule_reentry_once", "reentries", "reentry_min_remaining", "reentry_score",
                m=_get(rules, "reentry_min_remaining"))
        elif re_n:
            say("rule_reentries", "reentries", "reentry_min_remaining", "reentry_score",
                n=re_n, m=_get(rules, "reentry_min_remaining"))
        else:
            say("rule_no_reentry", "reentries", "reentry_min_remaining", "reentry_score")
    shown = _get(rules, "showdown_time")
    if shown is not None:
        say("rule_showdown_time" if shown else "rule_no_showdown_time", "showdown_time", n=shown)
    k, system = _get(rules, "shuffle_proof_rounds"), _get(rules, "shuffle_proof")
    if system == "terelius-wikstrom":  # k only counts for cut-and-choose
        say("rule_proof_tw", "shuffle_proof", "shuffle_proof_rounds")
    elif k is not None:
        say("rule_proof_rounds", "shuffle_proof_rounds", "shuffle_proof", k=k)
    turn = _get(rules, "turn_time")
    if turn is not None:  # the clocks
        say("rule_turn_time" if turn else "rule_no_turn_time", "turn_time", s=turn)
    wait = _get(rules, "rejoin_wait")
    if wait is not None:
        say("rule_rejoin_wait", "rejoin_wait", s=wait)
    stall = _get(rules, "stall_limit")
    if stall is not None:
        say("rule_stall_limit", "stall_limit", m=round(stall / 60, 1) if stall % 60 else stall // 60)
    reshuffles = _get(rules, "max_reshuffles")
    if reshuffles:  # options no document states, said only when on
        say("rule_max_reshuffles_score" if _get(rules, "reshuffle_end") == "score" else "rule_max_reshuffles",
            "max_reshuffles", n=reshuffles)
    done.add("max_reshuffles")
    done.add("reshuffle_end")
    if _get(rules, "discard_taken") is False:
        say("rule_no_discard_taken", "discard_taken")
    done.add("discard_taken")
    if dataclasses.is_dataclass(rules):
        for f in dataclasses.fields(rules):
            if f.name not in done:
                out.append(f"{f.name.replace('_', ' ')}: {getattr(rules, f.name)}")
    return out
