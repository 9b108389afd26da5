"""The view: what this seat may see (:class:`~p2p_chinchon.view.SeatView`), what it must
decide now, and the public log."""

from __future__ import annotations

from p2p_chinchon import engine, view as v

from .common import SHARE_KINDS, VERIFYING


class ViewPart:
    """The view part of :class:`~p2p_chinchon.table.Table` (a mixin: the state is the table's)."""

    def waiting(self) -> str | None:
        """Why this seat's own next step is held back, or None: ``VERIFYING`` while a step
        that would release a decryption share (or the end-of-hand secret) waits for the
        peers' shuffle proofs."""
        step = self.expected()
        if not self.verifying or step is None or step.seat != self.me:
            return None
        if step.kind in (*SHARE_KINDS, "discard", "secret"):
            return VERIFYING
        return None

    def needs_decision(self) -> str | None:
        """What this seat must decide now: "agree", "draw", "discard", "reenter" or None."""
        step = self.expected()
        if step is None or self.me is None or step.seat != self.me or self.catching_up:
            return None  # (catching up: nothing is decided before the others were heard)
        if step.kind in ("agree", "draw", "discard", "reenter"):
            if step.kind == "agree" and self.agreed:
                return None
            if step.kind == "discard" and self.verifying:
                return None  # waiting(): a discard carries a share
            return step.kind
        return None

    def _name(self, seat: int | None) -> str:
        if seat is None or seat >= len(self.players):
            return f"seat {seat}"
        return self.players[seat].name

    def log_event(self, kind: str, seats: tuple[int | None, ...] = (), **fields: object) -> v.LogEvent:
        """Add one public happening to the log (:func:`p2p_chinchon.view.log_event`): the
        ``seats``' names are filled in ("-" for a seat not at the table); a None seat is
        dropped. ``fields``: the other :class:`~p2p_chinchon.view.LogEvent` fields."""
        known = tuple(s for s in seats if s is not None)
        names = fields.pop("names", None) or tuple(
            self.players[s].name if 0 <= s < len(self.players) else "-" for s in known)
        ev = v.log_event(kind, known, names, **fields)
        self.log.append(ev)
        self.log_total += 1
        return ev

    def view(self) -> v.SeatView:
        """The :class:`SeatView` for this seat (or an observer), rebuilt from the state."""
        e = self.engine
        step = self.expected()
        seats = []
        # before the seating: who sits so far (host: its own list; joiner: the host's unsigned
        # lobby updates), shown as provisional seats, never used for anything else
        provisional = not self.players and self.phase == v.LOBBY and bool(self._pending)
        me = self.me
        if provisional and self.identity is not None:
            mine = [i for i, p in enumerate(self._pending) if p.key == self.identity.public_bytes]
            me = mine[0] if mine else None
        for i, p in enumerate(self.players or (self._pending if provisional else ())):
            seats.append(
                v.SeatInfo(
                    seat=i, name=p.name, fingerprint=p.fingerprint,
                    cards=len(e.hands.get(i, [])) if e and self.hand_started else 0,
                    total=e.totals[i] if e else 0,
                    eliminated=(i in e.eliminated) if e else False,
                    reentries_used=e.reentries_used[i] if e else 0,
                    is_dealer=(e is not None and e.dealer == i),
                    connected=i not in self.left,
                    agreed=i in self.toss_commits,
                    left=i in self.removed,
                )
            )
        hand = ()
        discard_top = None
        close_options: tuple = ()
        to_play = None
        stepname = None
        if e is not None and self.hand_started:
            if self.me is not None:
                hand = tuple(e.faces[s] for s in e.hands.get(self.me, []) if e.faces.get(s) is not None)
            if e.discard_pile:
                discard_top = e.faces.get(e.discard_pile[-1])
            if self.phase in (v.PLAYING, v.RESTOCKING):
                to_play = e.to_play
                if step is not None and step.kind in ("draw", "discard"):
                    stepname = step.kind
                if stepname == "discard" and self.verifying and self.me == e.to_play:
                    stepname = None  # waiting(): a discard carries a share
                if stepname == "discard" and self.me == e.to_play:
                    close_options = self._close_view()[1]
        progress = None
        if self.phase == v.SHUFFLING and self.queue:
            total = getattr(self, "_total_steps", len(self.queue))
            label = VERIFYING if self.verifying else f"{self.queue[0].kind} by {self._name(self.queue[0].seat)}"
            progress = (total - len(self.queue), total, label)
        elif self.verifying:
            progress = (0, 1, VERIFYING)
        return v.SeatView(
            me=me,
            table_name=self.table_name,
            max_seats=self.max_seats,
            provisional=provisional,
            rules=self.rules,
            seats=tuple(seats),
            phase=self.phase,
            hand_no=e.hand_no if e else 0,
            dealer=e.dealer if e else None,
            to_play=to_play,
            step=stepname,
            awaiting=(step.seat if step is not None and self.phase == v.PLAYING and step.kind == "draw_share"
                      and step.seat != self.me else None),
            hand=hand,
            discard_top=discard_top,
            discard_size=len(e.discard_pile) if e and self.hand_started else 0,
            stock_size=len(e.stock) if e and self.hand_started else 0,
            last_from_discard=dict(e.last_from_discard) if e else {},
            close_options=close_options,
            first_round=bool(e and self.hand_started and not self._close_view()[0]),
            progress=progress,
            showdown=self.last_showdown,
            closer=self.last_closer,
            score_history=tuple(self.score_history),
            reentry_offer=bool(step and step.kind == "reenter" and step.seat == self.me),
            winner=self.winner,
            fault=self.fault,
            events=tuple(self.log)[-50:],
            log_total=self.log_total,
        )

    def _close_view(self) -> tuple[bool, tuple]:
        """(whether this seat, to discard now, is not held back by the first-round ban, its
        close options as ``(card, score, chinchon)`` best first). Remembered for the hand and
        faces they were found for: a view is rebuilt after every envelope, and each search
        tries every card of the hand (a fifth of a bot seat's CPU went here)."""
        e = self.engine
        if e.phase != engine.Phase.DISCARD or self.me != e.to_play:
            return True, ()
        slots = tuple(e.hands.get(self.me, []))
        key = (e.hand_no, slots, tuple(e.faces.get(s) for s in slots), e.close_banned())
        if self._close_memo is not None and self._close_memo[0] == key:
            return self._close_memo[1]
        legal = {a.slot for a in e.legal_actions(self.me) if isinstance(a, engine.Close)}
        raw = self._close_options_raw()
        legal_cards = {e.faces.get(s) for s in legal}  # a card just drawn may not be open yet
        opts = sorted((o for o in raw if o.discard in legal_cards), key=lambda o: (o.score, str(o.discard)))
        found = (bool(legal) or not raw, tuple((o.discard, o.score, bool(o.chinchon)) for o in opts))
        self._close_memo = (key, found)
        return found

    def _close_options_raw(self) -> list:
        e = self.engine
        faces = [e.faces.get(s) for s in e.hands.get(self.me, [])]
        if None in faces or len(faces) != 8:
            return []
        return engine.close_options(faces, self.rules)

