"""The view: what this seat may see (:class:`~p2p_chinchon.view.SeatView`), what it must
decide now, and the public log (:class:`EventLog`). The view reads the other parts and
changes none of them."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from p2p_chinchon import engine, view as v
from p2p_chinchon.schedule import SHARE_KINDS

from .common import LOG_KEEP, VERIFYING, Player
from .state import Flow

if TYPE_CHECKING:
    from .hand import Hand
    from .lobby import Lobby
    from .removal import Removal
    from .turns import Turns


# a seat's close options: (the card to discard, the close's score, a chinchón), best first
CloseOptions = tuple[tuple[engine.Card, int, bool], ...]


class EventLog:
    """The public log of one table: the last :data:`LOG_KEEP` events (``entries``) and how many
    were ever logged (``total``). ``players()`` gives the seating, to name the seats."""

    def __init__(self, players: Callable[[], Sequence[Player]]) -> None:
        self.players = players
        self.entries: deque[v.LogEvent] = deque(maxlen=LOG_KEEP)
        self.total = 0

    def event(self, kind: str, seats: tuple[int | None, ...] = (), **fields: object) -> v.LogEvent:
        """Add one public happening to the log (:func:`p2p_chinchon.view.log_event`): the
        ``seats``' names are filled in ("-" for a seat not at the table); a None seat is
        dropped. ``fields``: the other :class:`~p2p_chinchon.view.LogEvent` fields."""
        players = self.players()
        known = tuple(s for s in seats if s is not None)
        given = fields.pop("names", None)  # a removed seat's name, given by the caller
        names = given if isinstance(given, tuple) and given else tuple(
            players[s].name if 0 <= s < len(players) else "-" for s in known)
        ev = v.log_event(kind, known, names, **fields)
        self.entries.append(ev)
        self.total += 1
        return ev


class TableView:
    """The view part of :class:`~p2p_chinchon.table.Table`: builds the
    :class:`~p2p_chinchon.view.SeatView` from the other parts, read only. Owns one memo (the
    close options last computed)."""

    def __init__(self, flow: Flow, lobby: Lobby, hand: Hand, turns: Turns, removal: Removal,
                 events: EventLog) -> None:
        self.flow = flow
        self.lobby = lobby
        self.hand = hand
        self.turns = turns
        self.removal = removal
        self.events = events
        self._close_memo: tuple[tuple[object, ...], tuple[bool, CloseOptions]] | None = None

    def waiting(self) -> str | None:
        """Why this seat's own next step is held back, or None: ``VERIFYING`` while a step
        that would release a decryption share (or the end-of-hand secret) waits for the
        peers' shuffle proofs."""
        step = self.flow.expected()
        if not self.hand.verifying or step is None or step.seat != self.lobby.me:
            return None
        if step.kind in (*SHARE_KINDS, "discard", "secret"):
            return VERIFYING
        return None

    def needs_decision(self) -> str | None:
        """What this seat must decide now: "agree", "draw", "discard", "reenter" or None."""
        step = self.flow.expected()
        if step is None or self.lobby.me is None or step.seat != self.lobby.me or self.flow.catching_up:
            return None  # (catching up: nothing is decided before the others were heard)
        if step.kind in ("agree", "draw", "discard", "reenter"):
            if step.kind == "agree" and self.lobby.agreed:
                return None
            if step.kind == "discard" and self.hand.verifying:
                return None  # waiting(): a discard carries a share
            return step.kind
        return None

    def view(self) -> v.SeatView:
        """The :class:`SeatView` for this seat (or an observer), rebuilt from the state."""
        e = self.flow.engine
        step = self.flow.expected()
        seats = []
        # before the seating: who sits so far (host: its own list; joiner: the host's unsigned
        # lobby updates), shown as provisional seats, never used for anything else
        provisional = not self.lobby.players and self.flow.phase == v.LOBBY and bool(self.lobby.pending)
        me = self.lobby.me
        if provisional and self.lobby.identity is not None:
            mine = [i for i, p in enumerate(self.lobby.pending) if p.key == self.lobby.identity.public_bytes]
            me = mine[0] if mine else None
        for i, p in enumerate(self.lobby.players or (self.lobby.pending if provisional else ())):
            seats.append(
                v.SeatInfo(
                    seat=i, name=p.name, fingerprint=p.fingerprint,
                    cards=len(e.hands.get(i, [])) if e and self.flow.hand_started else 0,
                    total=e.totals[i] if e else 0,
                    eliminated=(i in e.eliminated) if e else False,
                    reentries_used=e.reentries_used[i] if e else 0,
                    is_dealer=(e is not None and e.dealer == i),
                    connected=i not in self.flow.left,
                    agreed=i in self.lobby.toss_commits,
                    left=i in self.removal.removed,
                )
            )
        hand: tuple[engine.Card, ...] = ()
        discard_top = None
        close_options: CloseOptions = ()
        to_play = None
        stepname = None
        if e is not None and self.flow.hand_started:
            if self.lobby.me is not None:
                hand = tuple(e.faces[s] for s in e.hands.get(self.lobby.me, []) if e.faces.get(s) is not None)
            if e.discard_pile:
                discard_top = e.faces.get(e.discard_pile[-1])
            if self.flow.phase in (v.PLAYING, v.RESTOCKING):
                to_play = e.to_play
                if step is not None and step.kind in ("draw", "discard"):
                    stepname = step.kind
                if stepname == "discard" and self.hand.verifying and self.lobby.me == e.to_play:
                    stepname = None  # waiting(): a discard carries a share
                if stepname == "discard" and self.lobby.me == e.to_play:
                    close_options = self._close_view()[1]
        progress = None
        if self.flow.phase == v.SHUFFLING and self.flow.queue:
            total = self.hand.total_steps or len(self.flow.queue)
            label = VERIFYING if self.hand.verifying else f"{self.flow.queue[0].kind} by {self.lobby.name(self.flow.queue[0].seat)}"
            progress = (total - len(self.flow.queue), total, label)
        elif self.hand.verifying:
            progress = (0, 1, VERIFYING)
        return v.SeatView(
            me=me,
            table_name=self.lobby.table_name,
            max_seats=self.lobby.max_seats,
            provisional=provisional,
            rules=self.lobby.rules,
            seats=tuple(seats),
            phase=self.flow.phase,
            hand_no=e.hand_no if e else 0,
            dealer=e.dealer if e else None,
            to_play=to_play,
            step=stepname,
            awaiting=(step.seat if step is not None and self.flow.phase == v.PLAYING and step.kind == "draw_share"
                      and step.seat != self.lobby.me else None),
            hand=hand,
            discard_top=discard_top,
            discard_size=len(e.discard_pile) if e and self.flow.hand_started else 0,
            stock_size=len(e.stock) if e and self.flow.hand_started else 0,
            last_from_discard=dict(e.last_from_discard) if e else {},
            close_options=close_options,
            first_round=bool(e and self.flow.hand_started and not self._close_view()[0]),
            progress=progress,
            showdown=self.turns.last_showdown,
            closer=self.turns.last_closer,
            score_history=tuple(self.turns.score_history),
            reentry_offer=bool(step and step.kind == "reenter" and step.seat == self.lobby.me),
            winner=self.flow.winner,
            fault=self.flow.fault,
            events=tuple(self.events.entries)[-50:],
            log_total=self.events.total,
        )

    def _close_view(self) -> tuple[bool, CloseOptions]:
        """(whether this seat, to discard now, is not held back by the first-round ban, its
        close options as ``(card, score, chinchon)`` best first). Remembered for the hand and
        faces they were found for: a view is rebuilt after every envelope, and each search
        tries every card of the hand (a fifth of a bot seat's CPU went here)."""
        e, me = self.flow.game(), self.lobby.me
        if e.phase != engine.Phase.DISCARD or me is None or me != e.to_play:
            return True, ()
        slots = tuple(e.hands.get(me, []))
        key = (e.hand_no, slots, tuple(e.faces.get(s) for s in slots), e.close_banned())
        if self._close_memo is not None and self._close_memo[0] == key:
            return self._close_memo[1]
        legal = {a.slot for a in e.legal_actions(me) if isinstance(a, engine.Close)}
        raw = self._close_options_raw(e, me)
        legal_cards = {e.faces.get(s) for s in legal}  # a card just drawn may not be open yet
        opts = sorted((o for o in raw if o.discard in legal_cards), key=lambda o: (o.score, str(o.discard)))
        found = (bool(legal) or not raw, tuple((o.discard, o.score, bool(o.chinchon)) for o in opts))
        self._close_memo = (key, found)
        return found

    def _close_options_raw(self, e: engine.Game, me: int) -> list[engine.CloseOption]:
        faces = [e.faces.get(s) for s in e.hands.get(me, [])]
        cards = [c for c in faces if c is not None]
        if len(cards) != len(faces) or len(faces) != 8:
            return []
        return engine.close_options(cards, self.lobby.table_rules())

