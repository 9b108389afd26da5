"""The page state: one seat's screen as JSON, texts already in the seat's language.

:func:`page_state` reads a :class:`~p2p_chinchon.ui.screen.TableScreen` (the same front-end state
the terminal keeps: the view, the hand's order and pick, the pile this hand, the showdown held, the
question asked, the messages) and what the web front end adds (:class:`Extras`: the question's id,
the node's status, the code word, how the node ended) and returns a dict of plain JSON values whose
keys docs/web.md lists ("STATE"). It decides no rule and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from .. import view as V
from ..ui.lobby import rules_in_words
from ..ui.render import SUIT_LETTER, SUIT_SPANISH_TINY, Faces, card_text
from ..ui.screen import ASK, CONFIRM_QUIT, HOLD, PICKER, TableScreen, must_agree
from ..ui.screen_layout import lay_off_melds
from ..ui.text import plain

# the page's fixed words (STATE.texts): its own web_* messages and the terminal's it shows too
PAGE_TEXTS = (
    "web_draw_stock", "web_take_discard", "web_discard", "web_close", "web_hint", "web_leave", "web_agree",
    "web_yes", "web_no", "web_block", "web_continue", "web_pile_history", "web_keys", "web_scores", "web_rules",
    "web_players", "web_log", "web_regroup", "web_code_word", "web_fingerprint", "web_your_fingerprint",
    "web_to_limit", "web_connecting", "web_reconnecting", "web_seat_gone", "web_ended", "web_transcript", "web_tables",
    "web_choose", "web_none", "web_reenter_yes", "web_reenter_no", "web_last_showdown", "web_away", "web_back",
    "web_relayed", "web_drop_here", "web_lobby",
    # with {fields} the page fills: the template as it is
    "web_meld", "web_your_order", "web_points_n", "web_penalty_n", "web_n_cards", "web_close_with",
    "web_close_chinchon", "web_over_limit", "web_discard_card", "web_stock_n", "web_discard_n", "web_hand_no",
    "web_showdown_title", "web_closed", "web_laid_off_by", "web_laid_off_n", "web_limit_n", "web_bought_back",
    "web_pile_title", "web_pile_empty", "web_pile_upcard", "web_pile_threw", "web_pile_took", "web_pile_reshuffle",
    "web_waiting_for", "web_waiting_absent", "web_wild", "web_card_back", "web_not_now", "web_close_pick",
    "web_close_not_now", "web_close_panel", "web_exit_code", "web_mouse_help",
    "your_hand", "discard_pile", "stock", "empty", "laid_off", "deadwood", "total", "hand", "pile_title",
    "tables_heard", "no_tables_yet", "free_seat", "you", "dealer_mark", "out", "bot", "offline", "agreed",
    "left_mark", "chinchon", "sheet_reentry", "sheet_tonight",
)
SUITS_BY_DECK = {"french": SUIT_LETTER, "spanish": SUIT_SPANISH_TINY}
CLOCK_WAITS = ("agree", "draw", "discard", "reenter", "rematch")  # waits for a person's decision


@dataclass
class Extras:
    """What the web front end knows beyond the screen: ``question_id`` (the id of the open
    question), ``status`` (the node's last :class:`~p2p_chinchon.net.status.NodeStatus`, or
    None), ``code`` (``(word, join command)`` of ``host --code``), ``code_met`` (the word a
    friend used), ``hint`` (``(text, card)`` of the last hint asked, until the next view),
    ``ended`` (``{how, transcript, exit_code, error}`` once the node is done)."""

    question_id: int = 0
    status: Any = None
    code: tuple[str, str] | None = None
    code_met: str | None = None
    hint: tuple[str, Any] | None = None
    ended: dict[str, Any] | None = None
    log_kept: int = 20  # log lines sent


def card_id(card: Any) -> str:
    """The id the page sends back for ``card``: rank, French suit letter, copy (``"7d0"``)."""
    return f"{card.rank}{SUIT_LETTER[card.suit]}{getattr(card, 'copy', 0)}"


def card_json(card: Any, deck: str, tr: Callable[..., str], *, wild: Any = None,
              courts: str = "JQK") -> dict[str, Any]:
    """CARD (docs/web.md) for an engine card in ``deck`` ("french"/"spanish"), its words for
    screen readers by ``tr`` (a :class:`~p2p_chinchon.i18n.Translator`); ``wild``: the
    table's wild card (compared by rank and suit), or None; ``courts``: the French deck's J Q K
    letters in the reader's language (:data:`~p2p_chinchon.ui.render.COURTS`)."""
    deck = deck if deck in SUITS_BY_DECK else "french"
    joker = card.rank == 0
    if joker:
        alt = tr("web_joker")
    else:
        rank = (tr(f"web_rank_{deck}_{card.rank}") if 10 <= card.rank <= 12 else tr(f"web_rank_{card.rank}"))
        alt = tr("web_card_alt", rank=rank, suit=tr(f"web_suit_{deck}_{card.suit}"))
    return {"id": card_id(card), "rank": card.rank, "suit": SUITS_BY_DECK[deck][card.suit],
            "label": card_text(card, Faces(deck, True, True, courts)), "alt": alt, "joker": joker,
            "wild": bool(wild is not None and not joker and (card.rank, card.suit) == (wild.rank, wild.suit))}


class _Cards:
    """Card -> CARD for one state (the faces, the language and the wild card fixed)."""

    def __init__(self, screen: TableScreen) -> None:
        self.faces = screen.faces
        self.tr = screen.tr
        rules = screen.view.rules if screen.view is not None else None
        try:
            self.wild = rules.wild() if rules is not None and getattr(rules, "wild_card", None) else None
        except Exception:  # noqa: BLE001 - a bad wild_card option: no wild card shown
            self.wild = None

    def __call__(self, card: Any) -> dict[str, Any] | None:
        return None if card is None else self.one(card)

    def one(self, card: Any) -> dict[str, Any]:
        return card_json(card, self.faces.deck, self.tr, wild=self.wild, courts=self.faces.courts)

    def many(self, cards: Sequence[Any]) -> list[dict[str, Any]]:
        return [self.one(c) for c in cards]


def page_state(screen: TableScreen, extras: Extras | None = None) -> dict[str, Any]:
    """STATE (docs/web.md) for ``screen`` now."""
    ex = extras or Extras()
    tr, view = screen.tr, screen.view
    cj = _Cards(screen)
    state: dict[str, Any] = {
        "lang": tr.lang, "texts": {k: tr.template(k) for k in PAGE_TEXTS}, "deck": screen.faces.deck,
        "help": [line.rstrip() for line in tr("help_text").split("\n")],
        "status": screen.status, "message": screen.message, "message_kind": _message_kind(screen),
        "notices": list(screen._notices),
        "question": _question(screen, ex), "picker": _picker(screen),
        "ended": ex.ended, **_waits(ex.status),
    }
    if view is None:
        state.update(phase="connecting", header=tr("connecting"), phase_text=tr("connecting"), table_name="",
                     hand_no=0, me=None, my_fingerprint=None, limit=None, rules_lines=[], seats=[], hand=[],
                     groups=[], hand_summary="", custom_order=False, picked=None, my_turn=False, step=None,
                     can_draw={"stock": False, "discard": False}, can_discard=False, discard_top=None,
                     discard_size=0, stock_size=0, pile=[], close_options=[], close_text=None, hint=None,
                     progress=None, showdown=None, showdown_held=False, showdown_seconds=0, scores=None,
                     outcome=[], winner=None, winner_text=None, reentry_offer=False, stopped_text=None,
                     log=[], lobby=None)
        return state
    me = next((s for s in view.seats if s.seat == view.me), None)
    limit = getattr(view.rules, "limit", None)
    cards, groups = screen.display_hand()
    playing = view.my_turn
    state.update(
        phase=view.phase, header=" ".join(plain(screen.header()).split()), phase_text=screen.phase_text(),
        table_name=view.table_name, hand_no=screen.hand_number(), me=view.me,
        my_fingerprint=me.fingerprint if me is not None else None, limit=limit,
        rules_lines=rules_in_words(view.rules, tr), seats=_seats(screen, ex, cj, limit),
        hand=cj.many(cards), groups=_groups(groups, screen.order is not None),
        hand_summary=_hand_summary(screen), custom_order=screen.order is not None,
        picked=next((i for i, c in enumerate(cards) if c == screen.picked), None),
        my_turn=playing, step=view.step if view.phase == V.PLAYING else None,
        can_draw={"stock": playing and view.step == "draw",
                  "discard": playing and view.step == "draw" and view.discard_top is not None},
        can_discard=playing and view.step == "discard",
        discard_top=cj(view.discard_top), discard_size=view.discard_size, stock_size=view.stock_size,
        pile=_pile(screen, cj), close_options=_close_options(view, me, limit, cj),
        close_text=_text_or_none(screen.close_line()),
        hint=({"text": ex.hint[0], "card": cj(ex.hint[1]) if ex.hint[1] in view.hand else None}
              if ex.hint is not None else None),
        progress=({"done": view.progress[0], "total": view.progress[1],
                   "text": screen.progress_text(*view.progress)} if view.progress is not None else None),
        showdown=_showdown(screen, cj), showdown_held=screen.mode == HOLD and screen.holding(),
        showdown_seconds=round(screen.hold_left(), 1),
        scores=_scores(screen), outcome=[plain(line) for line in screen.outcome_lines(screen.shown or view)],
        winner=view.winner, winner_text=screen.winner_text(view.winner) if view.winner is not None else None,
        reentry_offer=view.reentry_offer and screen.reentry_answered != view.hand_no,
        stopped_text=screen.stopped_text() if view.fault is not None else None,
        log=[plain(screen.log_line(e, view)) for e in view.events[-ex.log_kept:]],
        lobby=_lobby(screen, ex) if view.phase == V.LOBBY else None,
    )
    return state


def _text_or_none(line: Any) -> str | None:
    return None if line is None else plain(line)


def _message_kind(screen: TableScreen) -> str:
    style = screen.message_style
    return "error" if "error" in style else "hint" if "hint" in style else "info"


def _question(screen: TableScreen, ex: Extras) -> dict[str, Any] | None:
    if screen.mode == ASK and screen._ask_answer is not None:
        return {"id": ex.question_id, "kind": "ask", "text": screen.ask_question, "block": screen._ask_block}
    if screen.mode == CONFIRM_QUIT:
        return {"id": ex.question_id, "kind": "leave", "text": screen.message, "block": False}
    return None


def _picker(screen: TableScreen) -> dict[str, Any] | None:
    picker = screen.picker
    if screen.mode != PICKER or picker is None:
        return None
    return {"tables": [{"index": i, "name": str(getattr(t, "name", "?")), "host": str(getattr(t, "host", "?")),
                        "port": getattr(t, "port", None), "preset": str(getattr(t, "preset", "")),
                        "seats_taken": getattr(t, "seats_taken", None), "max_seats": getattr(t, "max_seats", None),
                        "fingerprint": str(getattr(t, "fingerprint", "")),
                        "text": picker.describe(i, t, screen.tr).strip()}
                       for i, t in enumerate(picker.tables)]}


def _waits(status: Any) -> dict[str, Any]:
    """``clock`` and ``waiting`` from the node's status (module doc of net/status.py)."""
    w = getattr(status, "wait", None)
    if w is None:
        return {"clock": None, "waiting": None}
    left = w.shown if w.shown is not None else w.left
    left = None if left is None else round(max(0.0, left), 1)
    waiting = {"seat": w.seat, "name": w.name, "what": w.what, "seconds_left": left, "absent": w.absent}
    clock = ({"seat": w.seat, "name": w.name, "mine": w.mine, "seconds_left": left}
             if w.what in CLOCK_WAITS and left is not None and not w.absent else None)
    return {"clock": clock, "waiting": waiting}


def _seats(screen: TableScreen, ex: Extras, cj: _Cards, limit: int | None) -> list[dict[str, Any]]:
    view, tr = screen.view, screen.tr
    assert view is not None
    presence = {p.seat: p for p in getattr(ex.status, "seats", ())}
    out = []
    for s in view.seats:
        p = presence.get(s.seat)
        flags = []
        if s.seat == view.me:
            flags.append(tr("you"))
        if s.is_dealer or view.dealer == s.seat:
            flags.append(tr("dealer_mark"))
        if s.left:
            flags.append(tr("left_mark"))
        elif s.eliminated:
            flags.append(tr("out"))
        if s.is_bot:
            flags.append(tr("bot"))
        if not s.connected and not s.left:
            flags.append(tr("offline"))
        if view.phase == V.LOBBY and s.agreed:
            flags.append(tr("agreed"))
        last = screen.last_turn.get(s.seat) if view.phase == V.PLAYING else None
        last_turn = None
        if last is not None:
            took, threw = last
            text = (tr("turn_drew", card=card_text(threw, screen.faces)) if took is None else
                    tr("turn_took", took=card_text(took, screen.faces), card=card_text(threw, screen.faces)))
            last_turn = {"took": cj(took), "threw": cj(threw), "text": text.strip()}
        out.append({
            "seat": s.seat, "name": s.name, "fingerprint": s.fingerprint, "cards": s.cards, "total": s.total,
            "to_limit": None if limit is None else limit - s.total, "eliminated": s.eliminated, "left": s.left,
            "is_dealer": s.is_dealer or view.dealer == s.seat, "is_bot": s.is_bot, "connected": s.connected,
            "away": not s.left and (not s.connected or (p is not None and not p.connected)), "back": bool(getattr(p, "back", False)),
            "relayed": bool(p is not None and p.connected and getattr(p, "relayed", False)),
            "agreed": s.agreed, "to_play": view.phase == V.PLAYING and view.to_play == s.seat,
            "me": s.seat == view.me, "flags": flags, "last_turn": last_turn,
        })
    return out


def _groups(groups: list[int | None], custom: bool) -> list[dict[str, Any]]:
    if custom:
        return [{"kind": "custom", "cards": list(range(len(groups)))}] if groups else []
    out: list[dict[str, Any]] = []
    for i, g in enumerate(groups):
        if not out or g != groups[i - 1]:  # the deadwood (None) comes last, together
            out.append({"kind": "deadwood" if g is None else "meld", "cards": []})
        out[-1]["cards"].append(i)
    return out


def _hand_summary(screen: TableScreen) -> str:
    view = screen.view
    assert view is not None
    if not view.hand:
        return ""
    title = plain(screen.hand_lines(400, keys=False)[0])
    head = screen.tr("your_hand") + ": "
    return title[len(head):].strip() if title.startswith(head) else title.strip()


def _pile(screen: TableScreen, cj: _Cards) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for who, item, what in screen.pile:
        if what == "reshuffle":
            out.append({"what": what, "seat": None, "name": None, "card": None, "count": int(item)})
        else:
            seat = who if who >= 0 else None
            out.append({"what": what, "seat": seat, "name": screen.seat_name(seat) if seat is not None else None,
                        "card": cj(item), "count": None})
    return out


def _close_options(view: V.SeatView, me: V.SeatInfo | None, limit: int | None, cj: _Cards) -> list[dict[str, Any]]:
    if not (view.my_turn and view.step == "discard"):
        return []
    total = me.total if me is not None else 0
    return [{"card": cj(card), "points": points, "chinchon": bool(chinchon),
             "over_limit": limit is not None and total + points > limit}
            for card, points, chinchon in view.close_options]


def _showdown(screen: TableScreen, cj: _Cards) -> dict[str, Any] | None:
    shown = screen.shown
    if shown is None or not shown.showdown:
        return None
    targets = lay_off_melds(shown.showdown, shown.rules)
    said = (screen.tr("you_closed") if shown.closer == shown.me
            else screen.tr("closed_by", name=screen.seat_name(shown.closer)))
    hands = []
    for sh in shown.showdown:
        laid = []
        for i, card in enumerate(sh.laid_off):
            onto = targets.get((sh.seat, i))
            laid.append({"card": cj(card), "onto_seat": onto[0] if onto else None,
                         "onto_meld": onto[1] if onto else None})
        hands.append({"seat": sh.seat, "name": screen.seat_name(sh.seat), "melds": [cj.many(m) for m in sh.melds],
                      "laid_off": laid, "deadwood": cj.many(sh.deadwood), "penalty": sh.penalty})
    return {"hand": shown.hand_no, "closer": shown.closer, "closer_name": screen.seat_name(shown.closer), "said": said,
            "hands": hands}


def _scores(screen: TableScreen) -> dict[str, Any] | None:
    view = screen.shown if screen.shown is not None and screen.view is not None and (
        len(screen.shown.score_history) > len(screen.view.score_history)) else screen.view
    if view is None or (not view.score_history and not any(s.total for s in view.seats)):
        return None
    seats = list(view.seats)
    rows = []
    for n, row in enumerate(view.score_history, start=1):
        rows.append({"hand": n, "points": [row[i] if i < len(row) else None for i in range(len(seats))],
                     "out": [seat for after, seat, kind, _ in screen.marks if after == n and kind == "out"],
                     "back": [[seat, total] for after, seat, kind, total in screen.marks
                              if after == n and kind == "in"]})
    tonight = screen.tonight(seats)
    return {"names": [s.name or f"#{s.seat}" for s in seats], "seats": [s.seat for s in seats], "rows": rows,
            "totals": [s.total for s in seats], "eliminated": [s.eliminated for s in seats],
            "limit": getattr(view.rules, "limit", None),
            "tonight": ([f"{tonight[s.fingerprint][0]}/{tonight[s.fingerprint][1]}" if s.fingerprint in tonight
                         else None for s in seats] if tonight else None),
            "notes": screen.mark_notes(view) + screen.near_notes(view)}


def _lobby(screen: TableScreen, ex: Extras) -> dict[str, Any]:
    view = screen.view
    assert view is not None
    code, join = ex.code if ex.code is not None else (None, None)
    return {"provisional": view.provisional, "code_word": code, "code_join": join, "code_met": ex.code_met,
            "seats": [{"seat": s.seat, "name": s.name, "fingerprint": s.fingerprint, "agreed": s.agreed,
                       "me": s.seat == view.me} for s in view.seats],
            "free_seats": max(0, view.max_seats - len(view.seats)) if view.max_seats else 0,
            "max_seats": view.max_seats, "can_agree": must_agree(view, screen.agreed),
            "agreed": not must_agree(view, screen.agreed) and not view.provisional and bool(view.seats)}
