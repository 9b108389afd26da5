"""The table screen's layout (:class:`ScreenLayout`): what a :class:`~p2p_chinchon.view.SeatView` looks like.

:meth:`ScreenLayout.render` lays the whole screen out for any size (80x24 upward stays readable;
smaller sizes drop the move log first, then the rules text, then seats), so the same function
serves the prompt_toolkit control, resizes and headless tests. Every line is a list of
``(style, text)`` fragments (:data:`~p2p_chinchon.ui.text.Line`); the seats, the pile, the hand,
the showdown and its score sheet, the header, the message line and the key bar each have a method
of their own (line mode prints some of them too).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from .. import view as V
from ..i18n import never_formed_text, own_stop_text
from ..schedule import PROGRESS_KEYS
from .render import card_style, card_text
from .screen_state import AFTER_CLOSE, ASK, CONFIRM_QUIT, FINAL, HELP, PICKER, PILE, RECALL, ScreenState
from .text import Line, asciify, cell, pad, plain, truncate, width

if TYPE_CHECKING:
    from ..engine import Card

NOTICE_LINES = 6  # screen lines the node's notices may take (wrapped; the newest kept)
STATUS_LINES = 2  # screen lines the node's status (waits) may take, wrapped

V_PHASES = frozenset({V.LOBBY, V.SHUFFLING, V.PLAYING, V.RESTOCKING, V.SHOWDOWN, V.HAND_OVER,
                      V.REENTRY, V.OVER, V.STOPPED})


KEY_SEP = " · "  # between the keys of a key line, in every catalogue


def fit_keys(text: str, cols: int) -> str:
    """The key line ``text`` in ``cols`` columns: whole keys left out, the rightmost first, but
    never the step's own (the first) nor ``?`` (help) and ``q`` (quit), which every screen
    keeps (what is left out is listed under ``?``)."""
    keys = text.split(KEY_SEP)
    while width(KEY_SEP.join(keys)) > cols:
        spare = [i for i, k in enumerate(keys) if i and not k.startswith(("? ", "q "))]
        if not spare:
            break
        del keys[spare[-1]]
    return KEY_SEP.join(keys)


def _rcell(text: str, cols: int) -> str:
    """``text`` right-aligned in ``cols`` cells (cut with "…" when longer)."""
    cut = plain(truncate(text, cols))
    return " " * (cols - width(cut)) + cut


def lay_off_targets(showdown: Sequence[V.ShownHand], rules: Any) -> dict[tuple[int, int], int]:
    """``(seat, i) -> owner``: whose meld the ``i``-th card laid off by ``seat`` extends (see
    :func:`lay_off_melds`)."""
    return {k: owner for k, (owner, _) in lay_off_melds(showdown, rules).items()}


def lay_off_melds(showdown: Sequence[V.ShownHand], rules: Any) -> dict[tuple[int, int], tuple[int, int]]:
    """``(seat, i) -> (owner, m)``: the ``i``-th card laid off by ``seat`` extends the ``m``-th
    meld of ``owner``'s shown hand, when exactly one player's meld takes it (display only: the
    view lists laid-off cards without their target; 000 "Laying off"). Cards are tried in order,
    each growing the meld it joined."""
    try:
        from ..engine import make_meld
    except ImportError:
        return {}
    if rules is None:
        return {}
    melds = [(sh.seat, m, list(meld)) for sh in showdown for m, meld in enumerate(sh.melds)]
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for sh in showdown:
        for i, card in enumerate(sh.laid_off):
            fits = []
            for owner, m, cards in melds:
                try:
                    if owner != sh.seat and make_meld(cards + [card], rules) is not None:
                        fits.append((owner, m, cards))
                except Exception:  # a display helper never takes the table down
                    continue
            if len({o for o, _, _ in fits}) == 1:
                owner, m, cards = fits[0]
                out[(sh.seat, i)] = (owner, m)
                cards.append(card)
    return out


class ScreenLayout(ScreenState):
    """The screen's lines, laid out from the view and the screen's own state (no key here)."""

    def pile_lines(self, cols: int) -> list[Line]:
        """The discard pile's history this hand, one line per seat: the cards it threw, in
        order (a taken card is marked ``+``), then the re-shuffles; newest last."""
        view, tr = self.view, self.tr
        assert view is not None
        out: list[Line] = [[("class:label", tr("pile_title"))]]
        for seat in [s.seat for s in view.seats]:
            line: Line = [("class:label", f"{self.seat_name(seat)[:12]:<13}")]
            for who, card, what in self.pile:
                if who == seat and what in ("threw", "took"):
                    if what == "took":
                        line.append(("class:dim", " +"))
                    else:
                        line.append(("", " "))
                    line += self._card_frags(card)
            out.append(truncate(line, cols))
        shuffles = sum(1 for _, _, what in self.pile if what == "reshuffle")
        if shuffles:
            out.append([("class:dim", tr("pile_reshuffles", n=shuffles))])
        out.append([("class:dim", tr("pile_help"))])
        return out

    def seat_name(self, seat: int | None) -> str:
        view = self.view
        if view is None or seat is None:
            return "?"
        for s in view.seats:
            if s.seat == seat:
                return s.name or f"#{seat}"
        return f"#{seat}"

    def _card_frags(self, card: Card, compact: bool = False, extra: str = "") -> Line:
        style = card_style(card, self.faces)
        return [((style + " " + extra).strip(), card_text(card, self.faces, compact))]

    def _cards_frags(self, cards: Sequence[Card], sep: str = " ", compact: bool = False) -> Line:
        out: Line = []
        for i, c in enumerate(cards):
            if i:
                out.append(("", sep))
            out += self._card_frags(c, compact)
        return out

    def header(self) -> Line:
        view, tr = self.view, self.tr
        parts = [("class:title", " p2p-chinchón ")]
        if view is None:
            return parts + [("", " " + (self.status or tr("connecting")))]
        if view.table_name:
            parts.append(("class:title.table", f" {view.table_name} "))
        if view.phase not in (V.LOBBY,):
            parts.append(("", " " + tr("hand_no", n=self.hand_number())))
        parts.append(("", " · "))
        parts.append(("class:phase", self.phase_text()))
        return parts

    def hand_number(self) -> int:
        """The hand the screen is about, from 1: after a close, the hand just scored (the
        table may already count the next one)."""
        view = self.view
        assert view is not None
        if view.phase in AFTER_CLOSE and view.score_history:
            return len(view.score_history)
        if view.phase == V.SHUFFLING:
            return len(view.score_history) + 1
        return view.hand_no + 1

    def phase_text(self) -> str:
        view, tr = self.view, self.tr
        assert view is not None
        if view.phase == V.PLAYING:
            if view.my_turn:
                if view.step in ("draw", "discard"):
                    return tr("your_turn_" + view.step)
                if view.awaiting is not None:  # the other seats still open the drawn card: whose share
                    return tr("your_turn_share", name=self.seat_name(view.awaiting))
                return tr("your_turn_busy")
            return tr("other_turn", name=self.seat_name(view.to_play))
        if view.phase == V.OVER and view.winner is not None:
            return self.winner_text(view.winner)
        return tr("phase_" + view.phase) if view.phase in V_PHASES else view.phase

    def stopped_text(self) -> str:
        """Why the table stopped, for people ("you left the table" when we did)."""
        view = self.view
        assert view is not None and view.fault is not None
        f = view.fault
        never = never_formed_text(f, view.dealer is not None, self.tr)  # no dealer: no hand yet
        if never is not None:
            return never
        reason = own_stop_text(f, view.me, self.tr) or f.reason
        return self.tr("stopped", reason=reason)

    def winner_text(self, seat: int) -> str:
        view = self.view
        if view is not None and seat == view.me:
            return self.tr("you_win")
        return self.tr("winner", name=self.seat_name(seat))

    def seat_lines(self, cols: int) -> list[Line]:
        view, tr, faces = self.view, self.tr, self.faces
        assert view is not None
        arrow = "▶" if faces.unicode else ">"
        lines: list[Line] = []
        for s in view.seats:
            turn = view.to_play == s.seat and view.phase == V.PLAYING
            style = "class:seat.turn" if turn else ("class:seat.out" if s.eliminated else "")
            flags = []
            if s.seat == view.me:
                flags.append(tr("you"))
            if s.is_dealer or view.dealer == s.seat:
                flags.append(tr("dealer_mark"))
            if getattr(s, "left", False):
                flags.append(tr("left_mark"))
            elif s.eliminated:
                flags.append(tr("out"))
            if s.is_bot:
                flags.append(tr("bot"))
            if not s.connected and not getattr(s, "left", False):
                flags.append(tr("offline"))
            agreed = getattr(s, "agreed", None)
            if view.phase == V.LOBBY and agreed:
                flags.append(tr("agreed"))
            # in the lobby fingerprints are whole: people compare them aloud before agreeing
            fp = s.fingerprint if view.phase == V.LOBBY else cell(s.fingerprint, 11)
            line: Line = [(style, f"{arrow if turn else ' '} {cell(s.name or '#' + str(s.seat), 12)} "),
                          ("class:fp", fp + " ")]
            if view.phase != V.LOBBY:
                line.append((style, cell(tr("n_cards", n=s.cards), 9) + " "
                             + cell(tr("total_n", n=s.total), 10) + " "))
            line.append(("class:flags", " ".join(flags)))
            last = self.last_turn.get(s.seat)
            if last is not None and view.phase == V.PLAYING:
                took, threw = last
                key = "turn_drew" if took is None else "turn_took"
                parts = tr(key, took="\x01", card="\x00").split("\x00")
                head, _, mid = parts[0].partition("\x01")
                line.append(("", "  " + head))
                if took is not None:
                    line += self._card_frags(took)
                    line.append(("", mid))
                line += self._card_frags(threw)
                line.append(("", parts[-1] if len(parts) > 1 else ""))
            lines.append(truncate(line, cols))
        if view.provisional:
            lines += [[("class:dim", f"  {cell('#' + str(i), 12)} {tr('free_seat')}")]
                      for i in range(len(view.seats), view.max_seats)]
        return lines

    def pile_line(self) -> Line:
        view, tr = self.view, self.tr
        assert view is not None
        line: Line = [("class:label", tr("discard_pile") + ": ")]
        if view.discard_top is not None:
            line += self._card_frags(view.discard_top, extra="class:card.top")
        else:
            line.append(("", tr("empty")))
        line.append(("", f" ({view.discard_size})   "))
        line.append(("class:label", tr("stock") + ": "))
        line.append(("", str(view.stock_size)))
        return line

    def hand_lines(self, cols: int, keys: bool = True) -> list[Line]:
        """Three lines: title with deadwood, the cards (melds in brackets), position numbers.
        ``keys``: say what the Enter key would discard (the full screen, not line mode)."""
        view, tr = self.view, self.tr
        assert view is not None
        cards, groups = self.display_hand()
        arr = self.arrangement()
        title: Line = [("class:label", tr("your_hand") + ": ")]
        if arr is not None:
            after = self.best_discard() if len(cards) == 8 else None
            if after is not None:  # 8 cards: what is left once the best card is thrown
                title.append(("", tr("deadwood_after", n=after[0], card="\x00").split("\x00")[0]))
                title += self._card_frags(after[1])
                title.append(("", tr("deadwood_after", n=after[0], card="\x00").split("\x00")[-1]))
            else:
                title.append(("", tr("deadwood_n", n=getattr(arr, "points", 0))))
            if getattr(arr, "melds", ()):
                title.append(("", " · " + tr("melds_n", n=len(arr.melds))))
        elif not cards:
            title.append(("", tr("no_cards")))
        if self.order is not None:
            title.append(("class:dim", "  (" + tr("custom_order") + ")"))
        if keys and view.my_turn and view.step == "discard" and self.picked in cards:
            enter = tr("enter_discards", card="\x00").split("\x00")
            said: Line = [("", " · "), ("class:prompt", enter[0]), *self._card_frags(self.picked),
                          ("class:prompt", enter[-1] if len(enter) > 1 else "")]
            if width(title + said) > cols:  # what Enter does is never cut off: the
                title = title[:1]           # deadwood summary gives way, the card row says it
                said = said[1:]
            title += said
        for compact in (False, True):
            row, nums = self._hand_row(cards, groups, compact)
            if width(row) <= cols:
                break
        return [truncate(title, cols), truncate(row, cols), truncate(nums, cols)]

    def _hand_row(self, cards: list[Card], groups: list[int | None],
                  compact: bool) -> tuple[Line, Line]:
        row: Line = []
        nums: Line = []
        prev: int | None = None
        for i, (c, g) in enumerate(zip(cards, groups, strict=True)):
            gap = " " if i else ""
            if g != prev and prev is not None:
                row.append(("class:meld", "]"))
            if g is not None and g != prev:
                row.append(("", gap))
                row.append(("class:meld", "["))
            else:
                row.append(("", gap))
            nums.append(("", " " * (width(row) - width(nums))))
            extra = "class:card.picked" if c == self.picked else ""
            face = self._card_frags(c, compact, extra)
            row += face
            nums.append(("class:dim", str(i + 1) if i < 9 else " "))
            prev = g
        if prev is not None:
            row.append(("class:meld", "]"))
        return row, nums

    def close_line(self) -> Line | None:
        view, tr = self.view, self.tr
        assert view is not None
        if not (view.my_turn and view.step == "discard"):
            return None
        if view.close_options:
            opts = []
            for card, points, chinchon in view.close_options[:3]:
                opts.append(card_text(card, self.faces) + " → " + str(points)
                            + (" " + tr("chinchon") if chinchon else ""))
            return [("class:close", tr("may_close", options=", ".join(opts)))]
        key = "no_close_first_round" if view.first_round else "no_close"
        return [("class:dim", tr(key))]

    def progress_line(self, cols: int) -> Line | None:
        view = self.view
        if view is None or view.progress is None:
            return None
        done, total, label = view.progress
        bar_w = 20
        filled = 0 if total <= 0 else max(0, min(bar_w, done * bar_w // total))
        full, empty = ("█", "░") if self.faces.unicode else ("#", "-")
        return truncate([("class:progress", full * filled + empty * (bar_w - filled)),
                         ("", " " + self.progress_text(done, total, label))], cols)

    def progress_text(self, done: int, total: int, label: str) -> str:
        """A wait in the player's words: the table's "shuffle by Carla" becomes "Shuffling:
        Carla (3 of 12)"; a label of another shape is shown as it is."""
        kind, by, name = label.partition(" by ")
        key = PROGRESS_KEYS.get(kind)
        if not by or key is None:
            return f"{done}/{total} {label}"
        return self.tr(key, name=name, n=min(done + 1, total), total=total)

    def showdown_lines(self, cols: int, view: V.SeatView | None = None) -> list[Line]:
        """The closer, then each player's melds, lay-offs, deadwood and points this hand."""
        view, tr = view or self.view, self.tr
        assert view is not None
        lines: list[Line] = []
        if view.closer is not None and view.showdown:
            said = (tr("you_closed") if view.closer == view.me
                    else tr("closed_by", name=self.seat_name(view.closer)))
            lines.append([("class:label", said)])
        targets = lay_off_targets(view.showdown, view.rules)
        for sh in view.showdown:
            pen = [("class:penalty", f"{sh.penalty:>5}")]
            room = cols - width(pen) - 1
            for compact in (False, True):  # Spanish names are long: shorten before cutting
                line = self._shown_hand(sh, compact, targets)
                if width(line) <= room:
                    break
            lines.append(pad(truncate(line, room), room) + [("", " ")] + pen)
        return lines

    def _shown_hand(self, sh: V.ShownHand, compact: bool,
                    targets: dict[tuple[int, int], int] | None = None) -> Line:
        tr = self.tr
        line: Line = [("", cell(self.seat_name(sh.seat), 10) + " ")]
        for meld in sh.melds:
            line.append(("class:meld", "["))
            line += self._cards_frags(meld, compact=compact)
            line.append(("class:meld", "] "))
        if sh.laid_off:
            line.append(("class:dim", tr("laid_off") + " "))
            arrow = "→" if self.faces.unicode else "->"
            for i, card in enumerate(sh.laid_off):
                line += self._card_frags(card, compact)
                onto = (targets or {}).get((sh.seat, i))
                if onto is not None:  # onto whose meld
                    line.append(("class:dim", arrow + self.seat_name(onto)))
                line.append(("", " "))
        if sh.deadwood:
            line.append(("class:dim", tr("deadwood") + " "))
            line += self._cards_frags(sh.deadwood, compact=compact)
        return line

    def score_lines(self, cols: int, max_rows: int = 99,
                    view: V.SeatView | None = None) -> list[Line]:
        """The score sheet: one column per seat, one row per hand, then totals. A seat that
        went out gets "✗" after its points of that hand; a re-entry is a row of its own
        ("=43": the total starts again at 43, 000 "Winning the game"), so every column adds
        up to its total; a line per seat says it in words."""
        return [line for part in self.score_parts(cols, max_rows, view) for line in part]

    def score_parts(self, cols: int, max_rows: int = 99,
                    view: V.SeatView | None = None) -> tuple[list[Line], list[Line], list[Line], list[Line]]:
        """:meth:`score_lines` in its four parts: (the names' row, a row per hand, the totals
        and tonight's rows, the notes in words); all empty before any score. A screen short of
        rows keeps the totals and shows the last hands."""
        view, tr = view or self.view, self.tr
        assert view is not None
        if not view.score_history and not any(s.total for s in view.seats):
            return [], [], [], []
        seats = list(view.seats)
        col_of = {s.seat: i for i, s in enumerate(seats)}
        colw = max(5, min(10, (cols - 8) // max(1, len(seats)) - 1))
        cross = "✗" if self.faces.unicode else "x"
        head = cell(tr("hand"), 7) + " " + " ".join(_rcell(s.name or f"#{s.seat}", colw)
                                                  for s in seats)
        rows: list[tuple[int, Line]] = []
        for n, row in enumerate(view.score_history, start=1):
            vals = [str(row[i]) if i < len(row) else "" for i in range(len(seats))]
            for after, seat, kind, _total in self.marks:
                if after == n and kind == "out" and seat in col_of:
                    vals[col_of[seat]] += cross
            rows.append((n, [("", cell(str(n), 7) + " "
                                  + " ".join(_rcell(v, colw) for v in vals))]))
            back = [""] * len(seats)
            for after, seat, kind, total in self.marks:
                if after == n and kind == "in" and seat in col_of:
                    back[col_of[seat]] = f"={total}"
            if any(back):
                rows.append((n, [("class:dim", cell(tr("sheet_reentry"), 7) + " "
                                  + " ".join(_rcell(v, colw) for v in back))]))
        if len(rows) > max_rows:
            rows = rows[-max_rows:]
        tot = [str(s.total) + (cross if s.eliminated else "") for s in seats]
        totals: list[Line] = [[("class:label", cell(tr("total"), 7) + " "
                                + " ".join(_rcell(v, colw) for v in tot))]]
        tonight = self.tonight(seats)
        if tonight:
            vals = [f"{tonight[s.fingerprint][0]}/{tonight[s.fingerprint][1]}" if s.fingerprint in tonight else ""
                    for s in seats]
            totals.append([("class:dim", cell(tr("sheet_tonight"), 7) + " "
                            + " ".join(_rcell(v, colw) for v in vals))])
        notes = self.mark_notes(view) + self.near_notes(view) + ([tr("sheet_tonight_note")] if tonight else [])
        return ([truncate([("class:label", head)], cols)], [truncate(r, cols) for _, r in rows],
                [truncate(r, cols) for r in totals], [truncate([("class:dim", t)], cols) for t in notes])

    def near_notes(self, view: V.SeatView) -> list[str]:
        """Who is near the limit (within a fifth of it, at least 10 points) and whether a bust
        would be bought back (re-entries left while enough players are in)."""
        rules, tr = view.rules, self.tr
        limit = getattr(rules, "limit", None)
        if limit is None or view.phase == V.OVER or view.winner is not None:
            return []
        near = max(10, limit // 5)
        playing = [s for s in view.seats if not s.eliminated and not getattr(s, "left", False)]
        out = []
        for s in playing:
            left = limit - s.total
            if 0 <= left <= near:
                may = (s.reentries_used < getattr(rules, "reentries", 0)
                       and len(playing) >= getattr(rules, "reentry_min_remaining", 2))
                out.append(tr("sheet_near_buyback" if may else "sheet_near", name=s.name, n=left, limit=limit))
        return out

    def tonight(self, seats: Sequence[V.SeatInfo]) -> dict[str, tuple[int, int]]:
        """This evening's earlier games among these seats' keys (:attr:`evening`), read once
        per set of players."""
        if self.evening is None:
            return {}
        fps = tuple(s.fingerprint for s in seats)
        if self._evening_cache is None or self._evening_cache[0] != fps:
            self._evening_cache = (fps, self.evening(list(fps)))
        return self._evening_cache[1]

    def mark_notes(self, view: V.SeatView | None = None) -> list[str]:
        """One sentence per seat that went out or re-entered ("Carla: out at 104 after hand 5,
        re-entered at 43")."""
        view = view or self.view
        if view is None:
            return []
        notes = []
        for s in view.seats:
            parts = []
            for after, seat, kind, total in self.marks:
                if seat == s.seat:
                    parts.append(self.tr("sheet_out" if kind == "out" else "sheet_in",
                                         total=total, n=after))
            if parts:
                notes.append(self.tr("sheet_note", name=self.seat_name(s.seat),
                                     events=", ".join(parts)))
        return notes

    def outcome_lines(self, view: V.SeatView | None = None) -> list[Line]:
        view, tr = view or self.view, self.tr
        assert view is not None
        lines: list[Line] = []
        for s in view.seats:
            if s.eliminated:
                said = (tr("you_are_out", total=s.total) if s.seat == view.me
                        else tr("is_out", name=s.name, total=s.total))
                lines.append([("class:seat.out", said)])
        if view is self.view and view.reentry_offer and self.reentry_answered != view.hand_no:
            lines.append([("class:prompt", tr("reentry_question"))])
        if view.winner is not None:
            lines.append([("class:winner", self.winner_text(view.winner))])
        return lines

    def help_lines(self) -> list[Line]:
        lines = [[("class:label" if i == 0 else "", t)]
                 for i, t in enumerate(self.tr("help_text").split("\n"))]
        rules = self.view.rules if self.view is not None else None
        turn = getattr(rules, "turn_time", None)
        if turn is not None:  # this table's turn clock, before "any key closes"
            import textwrap

            # a sentence, not a key line: wrapped at 76 so 80 columns show it whole
            clock = self.tr("help_clock", s=turn) if turn else self.tr("help_no_clock")
            lines[len(lines) - 1:len(lines) - 1] = [[("", "  " * (i > 0) + part)]
                                                    for i, part in enumerate(textwrap.wrap(clock, 76))]
        return lines

    def keybar(self, cols: int | None = None) -> Line:
        """The key line of the mode and step; with ``cols``, keys left out to fit (:func:`fit_keys`)."""
        line = self._keybar()
        return line if cols is None else [(style, fit_keys(text, cols)) for style, text in line]

    def _keybar(self) -> Line:
        view, tr = self.view, self.tr
        if self.mode == FINAL:
            return [("class:prompt", tr("press_any_key_l" if self.shown is not None else "press_any_key"))]
        if self.mode == PICKER:
            return [("class:dim", tr("keys_picker"))]
        if self.mode in (CONFIRM_QUIT, ASK):
            return [("class:prompt", tr("keys_yes_no"))]
        if self.mode == RECALL or self.holding():
            return [("class:prompt", tr("keys_showdown"))]
        if self.typed:
            return [("class:prompt", tr("typing") + " " + self.typed + "_")]
        if view is None:
            return [("class:dim", tr("keys_idle"))]
        if view.phase == V.LOBBY:
            return [("class:dim", tr("keys_idle" if self.i_agreed() else "keys_lobby"))]
        if view.reentry_offer and self.reentry_answered != view.hand_no:
            return [("class:prompt", tr("keys_yes_no"))]
        if view.my_turn and view.step == "draw":
            return [("class:dim", tr("keys_draw"))]
        if view.my_turn and view.step == "discard":
            return [("class:dim", tr("keys_discard"))]
        return [("class:dim", tr("keys_wait" if view.hand else "keys_idle"))]

    def message_line(self) -> Line:
        if self.mode == FINAL:
            return [("class:label", self.final_text)]
        if self.mode == ASK:
            return [("class:prompt", self.ask_question)]
        if self.message:
            return [(self.message_style, self.message)]
        return []

    def message_lines(self, cols: int, most: int = NOTICE_LINES) -> list[Line]:
        """The message line; the node's notices wrapped over at most ``most`` lines (the
        newest kept), every other message cut to one line."""
        import textwrap

        notices = bool(self._notices) and self.message == "\n".join(self._notices)
        if self.mode == FINAL and notices:  # e.g. how the rematch vote ended, above the last line
            return [truncate([(self.message_style, self._notices[-1])], cols),
                    truncate(self.message_line(), cols)][-max(most, 1):]
        if self.mode == ASK:  # a question is read whole: its keys come last (b: refuse ...)
            parts = textwrap.wrap(self.ask_question, max(cols, 1)) or [""]
            return [truncate([("class:prompt", part)], cols) for part in parts[:max(most, 1)]]
        if self.mode == FINAL or not notices:
            return [truncate(self.message_line(), cols)]
        out = [[(self.message_style, part)] for notice in self._notices
               for part in textwrap.wrap(notice, max(cols, 1)) or [""]]
        return [truncate(line, cols) for line in out[-max(most, 1):]]

    def body_blocks(self, cols: int) -> list[tuple[list[Line], int, bool]]:
        """``(lines, priority, flexible)`` in display order; lower priority numbers are kept
        first when space is short; the flexible block (the log) shows its last lines. The
        node's status (:meth:`set_status`: waits, who is offline and for how long) is the
        last body line, kept before anything else, so a message never hides it."""
        blocks = self._body_blocks(cols)
        if self.status and self.view is not None and self.mode not in (HELP, PICKER):
            import textwrap

            # whom and how long we wait is read whole: wrapped over at most STATUS_LINES lines
            parts = textwrap.wrap(self.status, max(cols, 1)) or [self.status]
            blocks.append(([[("class:status", part)] for part in parts[:STATUS_LINES]], 0, False))
        return blocks

    def _body_blocks(self, cols: int) -> list[tuple[list[Line], int, bool]]:
        view, tr = self.view, self.tr
        if self.mode == HELP:
            return [(self.help_lines(), 0, False)]
        if self.mode == PILE and view is not None:
            return [(self.pile_lines(cols), 0, True)]
        if self.mode == PICKER and self.picker is not None:
            return [(self.picker.lines(cols, self.tr), 0, True)]
        if view is None:
            return []
        if self.shown is not None and (self.mode == RECALL or self.holding()):
            said = tr("showdown_of", n=len(self.shown.score_history))
            return [([[("class:label", said)]], 0, False)] + self.showdown_blocks(self.shown, cols)
        blocks: list[tuple[list[Line], int, bool]] = []
        prog = self.progress_line(cols)
        if view.fault is not None:
            f = view.fault
            # leaving is a choice, not a cheat: the reason already says who left
            who = ("" if f.seat is None or f.rule == "left"
                   else tr("blame", name=self.seat_name(f.seat), rule=f.rule))
            blocks.append(([[("class:error", self.stopped_text())]]
                           + ([[("class:error", who)]] if who else []), 0, False))
        if view.phase == V.LOBBY:
            from .lobby import rules_in_words

            if view.provisional or not view.seats:  # the seating is not signed yet
                waiting: list[Line] = [[("class:prompt", tr("lobby_waiting_seat", table=view.table_name or "?"))]]
                if view.provisional and view.max_seats:
                    free = view.max_seats - len(view.seats)
                    waiting.append([("class:prompt", tr("lobby_waiting_more", n=free, taken=len(view.seats),
                                                     max=view.max_seats) if free > 0 else tr("lobby_full"))])
                blocks.append((waiting, 0, False))
            blocks.append((self.seat_lines(cols), 1, False))
            rules = [[("", "• " + s)] for s in rules_in_words(view.rules, tr)]
            if rules:
                blocks.append(([[("class:label", tr("proposed_rules"))]] + rules, 3, False))
            if view.me is not None and not view.provisional:
                agree = tr("agreed_waiting") if self.i_agreed() else tr("press_a_to_agree")
                blocks.append(([[("class:prompt", agree)]], 0, False))
        elif view.phase in AFTER_CLOSE or (view.phase in (V.STOPPED, V.SHUFFLING)
                                           and view.showdown and view.score_history):
            # while the next hand is shuffled the last showdown stays up, so a person can read it
            if view.phase == V.SHUFFLING:
                blocks.append(([[("class:label", tr("last_hand", n=len(view.score_history)))]],
                               1, False))
            blocks += self.showdown_blocks(view, cols)
        else:
            blocks.append((self.seat_lines(cols), 3, False))
            if view.phase in (V.PLAYING, V.RESTOCKING):
                blocks.append(([self.pile_line()], 1, False))
            if view.hand:
                blocks.append((self.hand_lines(cols), 0, False))
            close = self.close_line()
            if close is not None:
                blocks.append(([close], 1, False))
        if prog is not None:
            blocks.append(([prog], 0, False))
        blocks.append(([self.log_line(ev, view) for ev in view.events], 9, True))
        return blocks

    def showdown_blocks(self, view: V.SeatView, cols: int) -> list[tuple[list[Line], int, bool]]:
        """A showdown, its score sheet and what came of it, as :meth:`body_blocks` blocks."""
        head, hands, totals, notes = self.score_parts(cols, view=view)
        # short of rows, the sheet keeps its names, totals and last hands (the hands' rows
        # are flexible: the newest shown); the notes in words go first
        return [(self.showdown_lines(cols, view), 1, False),
                (head, 2, False), (hands, 2, True), (totals, 1, False), (notes, 3, False),
                (self.outcome_lines(view), 0, False)]

    def _render(self, cols: int, rows: int) -> list[Line]:
        if rows <= 0 or cols <= 0:
            return []
        head = truncate(self.header(), cols)
        foot = [truncate(self.message_line(), cols), truncate(self.keybar(cols), cols)]
        if rows <= 3:
            return ([head] + foot)[-rows:] if rows < 3 else [head] + foot
        foot = self.message_lines(cols, min(NOTICE_LINES, rows // 3)) + foot[1:]
        budget = rows - 1 - len(foot)
        blocks = self.body_blocks(cols)
        alloc = [0] * len(blocks)
        for i in sorted(range(len(blocks)), key=lambda i: blocks[i][1]):
            lines, _, flex = blocks[i]
            if flex:
                continue
            alloc[i] = min(len(lines), budget)
            budget -= alloc[i]
        for i, (lines, _, flex) in enumerate(blocks):
            if flex:
                alloc[i] = min(len(lines), budget)
                budget -= alloc[i]
        body: list[Line] = []
        scrolled = False  # the first cut block scrolls (the lobby: rules a person must read)
        for (lines, _, flex), n in zip(blocks, alloc, strict=True):
            if n <= 0:
                continue
            chosen = lines[-n:] if flex else lines[:n]
            if not flex and n < len(lines):
                if not scrolled and n >= 2 and self.view is not None and self.view.phase == V.LOBBY:
                    scrolled = True
                    self._scroll_max = len(lines) - (n - 1)
                    start = max(0, min(self.scroll, self._scroll_max))
                    below = start + n - 1 < len(lines)
                    chosen = lines[start:start + n - 1] + [
                        [("class:dim", self.tr("more_below" if below else "more_above"))]]
                else:
                    chosen = chosen[:-1] + [[("class:dim", "…")]]
            body += [truncate(l, cols) for l in chosen]
        if not scrolled:
            self._scroll_max = 0
        body += [[] for _ in range(rows - 1 - len(foot) - len(body))]
        return [head] + body + foot

    def render(self, cols: int, rows: int) -> list[Line]:
        """The whole screen: exactly ``rows`` lines (fewer only below 3 rows), none wider than
        ``cols`` cells. Header, body (see :meth:`body_blocks`), message line, key bar. Without
        Unicode every character is ASCII."""
        lines = self._render(cols, rows)
        if not self._faces_base.unicode:
            lines = [truncate(asciify(l), cols, "...") for l in lines]
        return lines

    def render_text(self, cols: int = 80, rows: int = 24) -> str:
        """:meth:`render` as plain text, one line per row (for tests and line mode)."""
        return "\n".join(plain(l) for l in self.render(cols, rows))
