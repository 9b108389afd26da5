"""Removal: playing on without a seat that is gone for good (issue 11 part 3).

A seat that stays away past the table option ``rejoin_wait``, or that signed ``leave`` while
still in the game (kept out of the chain: it would race the expected speaker), is removed by
every other seat still at the table, each signing its own ``remove`` of it once the table
waits for it: no single seat can remove another. The chain decides when a ``remove`` is
valid (docs/protocol.md "Removal"); the driver only says when its own view agrees
(:meth:`RemovalPart.absent`). When every signature is in, the seat is out like an eliminated
seat (standings: "left"); a hand in progress that needs its key share is void, and the game
goes on with the others, or ends when one is left. Knows nothing of sockets or clocks."""

from __future__ import annotations

from collections import deque
from typing import Any

from p2p_chinchon import view as v, wire

from .common import TERMINAL_KINDS, Finished, GameEvent, ProtocolViolation, Step, Stopped, _Dropped

class RemovalPart:
    """The removal part of :class:`~p2p_chinchon.table.Table` (a mixin: the state is the
    table's: ``removed`` seat -> reason, ``removing`` the removals in progress, innermost last,
    ``gone`` the seats this node's driver declared away past ``rejoin_wait``)."""

    # -------------------------------------------------------------- the driver's view

    def absent(self, seat: int) -> list:
        """The driver's ``rejoin_wait`` for ``seat`` ran out on its own clock (the seat is
        disconnected from this node). When the chain lets the table play on without it, this
        seat signs its ``remove`` as soon as it is its turn to (at once when it starts the
        removal); otherwise the table stops as before: a ``fault`` ``absent`` naming the seat
        the table waits for. Returns the outputs, like :meth:`receive`."""
        self._out = []
        if self.fault or self.finished:
            return []
        if not self.can_remove(seat):
            return self.timeout("absent", True)
        self.gone.add(seat)
        self._guarded(lambda: None, ())
        return self._take()

    def refuse_removal(self) -> list:
        """It is this seat's turn to sign a removal, but its driver still hears the seat (it
        never stayed away past ``rejoin_wait`` here): the seats disagree on who is gone, which
        proves nothing against anyone. The table stops with a ``fault`` ``absent`` that blames
        nobody (issue 11 part 5). Returns the outputs."""
        self._out = []
        step = self.expected()
        x = self.removing_seat
        if self.fault or self.finished or x is None or step != Step("remove", self.me):
            return []
        self._stop_with_fault(ProtocolViolation(
            None, "absent", f"the others remove {self._name(x)}, who is still connected to {self._name(self.me)}: "
            "the seats disagree on who is gone"), ())
        return self._take()

    def present(self, seat: int) -> None:
        """``seat`` is heard again: this seat no longer agrees to remove it (a removal already
        signed stays signed; a seat that signed ``leave`` stays gone)."""
        if seat not in self.leaves:
            self.gone.discard(seat)

    def can_remove(self, seat: int) -> bool:
        """True when the chain allows removing ``seat`` now: the game has begun and is not
        over for this table, the seat is still in it, the table waits for it (or is removing
        it already), and at least two other seats are left to sign."""
        if self.engine is None or self.fault or self.finished or self.me is None:
            return False
        if not 0 <= seat < len(self.players) or seat in self.removed or seat == self.me:
            return False
        step = self.expected()
        waits = step is not None and step.seat == seat
        if not (waits or self.removing_seat == seat):
            return False
        return len(self._signers(seat)) >= 2

    @property
    def removing_seat(self) -> int | None:
        """The seat whose removal is being signed (the innermost), or None."""
        return self.removing[-1]["seat"] if self.removing else None

    def removal_step(self) -> Step | None:
        """While the expected speaker is gone on this node's clock: who must sign the first
        ``remove`` of it (the first other seat still at the table, in seat order), else None."""
        step = self.expected()
        if step is None or step.seat not in self.gone or not self.can_remove(step.seat):
            return None
        return Step("remove", self._signers(step.seat)[0])

    # -------------------------------------------------------------- the chain's rules

    def _signers(self, seat: int) -> list[int]:
        """Who signs the removal of ``seat``, in seat order: every other seat still at the
        table (eliminated seats too) that is not itself being removed."""
        out_now = {r["seat"] for r in self.removing}
        return [s for s in range(len(self.players)) if s != seat and s not in self.left and s not in out_now]

    def _plays_on_without(self, seat: int) -> bool:
        """A game is on that can go on without ``seat`` (a ``leave`` of it starts its removal
        instead of stopping the table)."""
        return (self.engine is not None and not self.finished and seat != self.me
                and seat not in self.removed and len(self._signers(seat)) >= 2)

    def _note_leave(self, env: Any, frame: bytes) -> None:
        """A validly signed ``leave`` of a seat the game can go on without: it is not chained
        (its place would race the expected speaker's envelope); the seat is gone by its own
        word, and its removal, for "left" with this frame as proof, starts as soon as the
        table waits for it."""
        if env.seat in self.leaves:
            return
        self.leaves[env.seat] = frame
        self.gone.add(env.seat)
        self.log_event("left", (env.seat,), detail=env.body["reason"])

    def _start_removal(self, seat: int, reason: str, signed: tuple[int, ...] = ()) -> None:
        """A removal of ``seat`` begins: the other signers' ``remove`` steps go first."""
        self.removing.append({"seat": seat, "reason": reason, "signed": set(signed)})
        steps = [Step("remove", s) for s in self._signers(seat) if s not in signed]
        self.queue.extendleft(reversed(steps))

    def _on_remove(self, env: Any) -> Any:
        b = env.body
        x, reason = b["seat"], b["reason"]

        def bad(why: str) -> ProtocolViolation:
            return ProtocolViolation(env.seat, "bad_removal", why, env.seq)

        if self.engine is None or self.finished:
            raise bad("no game is being played")
        if b["hand"] != self.hand_no:
            raise bad(f"hand {b['hand']}, the table is at hand {self.hand_no}")
        if x >= len(self.players) or x in self.removed or x == env.seat:
            raise bad(f"seat {x} cannot be removed by seat {env.seat}")
        step = self.expected()
        top = self.removing[-1] if self.removing else None
        first = not (top is not None and top["seat"] == x and step == Step("remove", env.seat))
        if not first and (reason != top["reason"] or b["proof"]):
            raise bad(f"the removal of seat {x} is for '{top['reason']}' (its proof is in the first remove)")
        signers = self._signers(x)
        if first:
            self._check_removal_proof(env, x)
            if step is None or step.seat != x:
                raise bad(f"the table does not wait for seat {x}")
            if len(signers) < 2:
                raise bad("a seat is removed by two other seats or more")
            if env.seat != signers[0]:
                raise bad(f"seat {signers[0]} starts the removal of seat {x}")

        def commit() -> None:
            if first:
                self._start_removal(x, reason, (env.seat,))
            else:
                self.queue.popleft()
                top["signed"].add(env.seat)
            self._finish_removals()

        return commit

    def _check_removal_proof(self, env: Any, x: int) -> None:
        """The first ``remove``'s ``proof``: empty for "absent"; for "left", seat ``x``'s own
        ``leave`` envelope of this game, validly signed by its key."""
        reason, proof = env.body["reason"], env.body["proof"]
        if reason == "absent":
            if proof:
                raise ProtocolViolation(env.seat, "bad_removal", "a removal for 'absent' carries no proof", env.seq)
            return
        try:
            leave = wire.decode_envelope(proof)
            wire.verify_envelope(leave, self.players[x].key)
            ok = leave.kind == "leave" and leave.seat == x and leave.game == self.game
        except wire.WireError:
            ok = False
        if not ok:
            raise ProtocolViolation(env.seat, "bad_removal", f"a removal for 'left' proves it with seat {x}'s "
                                    "own signed leave", env.seq)

    def _auto_remove(self) -> dict | None:
        top = self.removing[-1]
        if top["reason"] != "left" and top["seat"] not in self.gone:
            return None  # our own view does not agree (yet): the driver decides (absent)
        return {"seat": top["seat"], "hand": self.hand_no, "reason": top["reason"], "proof": b""}

    def _removal_start_body(self, step: Step) -> dict | None:
        """Our ``remove`` that starts removing the expected speaker, when we are to start it
        and our own clock says it is gone; else None."""
        first = self.removal_step()
        if first is None or first.seat != self.me:
            return None
        leave = self.leaves.get(step.seat)
        return {"seat": step.seat, "hand": self.hand_no, "reason": "left" if leave else "absent",
                "proof": leave or b""}

    # -------------------------------------------------------------- the effect

    def _finish_removals(self) -> None:
        """Apply every removal (innermost first) whose signatures are all in."""
        applied = False
        while self.removing:
            top = self.removing[-1]
            if not all(s in top["signed"] for s in self._signers(top["seat"])):
                break
            self.removing.pop()
            self._apply_removal(top["seat"], top["reason"])
            applied = True
            if self.fault:
                return
        if applied and not self.removing:
            self._resume_after_removal()

    def _apply_removal(self, seat: int, reason: str) -> None:
        hc = self.hc
        open_hand = hc is not None and len(self.score_history) <= self._hand_played
        void = open_hand and seat in hc.seats
        if void:  # nothing of the hand can open without the seat's key share: no more steps
            self.queue = deque(st for st in self.queue if st.kind == "remove" and st.seat != seat)
            self._pending_draw_slot = None
        elif hc is not None and seat in hc.seats:
            # the hand is scored; its end-of-hand audit needs the seat's secret: no secret
            # of anyone goes out for it (docs/protocol.md "Removal")
            self.queue = deque(st for st in self.queue
                               if st.seat != seat and st.kind not in ("secret", "hand_digest"))
        else:
            self.queue = deque(st for st in self.queue if st.seat != seat)
        self.removed[seat] = reason
        self.left.add(seat)
        self.gone.discard(seat)
        hand = self._hand_played
        self.log_event("removed", (seat,), detail=reason)
        for ev in self.engine.withdraw(seat, void_hand=void):
            self._out.append(GameEvent(ev))
            name = type(ev).__name__
            if name == "HandVoid":
                self.score_history.append(tuple(0 for _ in self.players))
                self.log_event("voided", (seat,), numbers=(hand + 1,))
            elif name == "GameOver":
                self.log_event("game_over", (ev.winner,))
        if seat == self.me:
            self._removed_me(hand)

    def _resume_after_removal(self) -> None:
        """Every removal is applied: carry on where the table was (the next hand, the next
        re-entry answer, the game's end)."""
        if self.fault or self.finished or self.queue:
            return
        if self.phase == v.OVER:
            self.finished = True
            self._out.append(Finished(self.winner))
        elif self.hc is None or len(self.score_history) > self._hand_played:
            self._after_hand()

    def _removed_me(self, hand: int) -> None:
        """The other seats removed this one: it stops (not a fault: nothing is signed)."""
        why = self.removed.get(self.me, "absent")
        self.fault = v.Fault(self.me, "removed", f"you were removed from the game ({why} since hand {hand + 1})",
                             detail=why, hand=hand + 1)
        self.phase = v.STOPPED
        self._out.append(Stopped(self.fault))

    def _misplaced_remove(self, env: Any, mine: Any) -> ProtocolViolation | None:
        """``env``, a validly signed ``remove`` of X, against ``mine``, our chain's envelope at
        its position: with the same ``prev``, ours being an expected step of a seat that is
        not X (not a ``remove``, ``fault`` or ``leave``) proves the table did not wait for X
        there (rule 2): the violation naming the remove's signer. Else None."""
        if env.kind != "remove" or env.prev != mine.prev or mine.seat == env.body["seat"]:
            return None
        x = env.body["seat"]
        if mine.kind == "remove" or mine.kind in TERMINAL_KINDS:
            return None
        return ProtocolViolation(env.seat, "bad_removal", f"seq {env.seq}: the table waits for "
                                 f"seat {mine.seat} here, not for seat {x}", env.seq)

    def _removal_conflict(self, env: Any, mine: Any) -> bool:
        """A validly signed envelope of another seat at a position where our chain holds
        another: True when it is handled here, because one of the two removes a seat and the
        other is that seat's own or a ``remove`` (nobody cheated). A late frame of a seat
        already removed is dropped; a removal of this seat means it was removed; otherwise,
        with the same ``prev``, the seats disagree on whether the seat is gone (a partition):
        the table stops blaming nobody. False: judge it as any other conflict."""
        if env.kind == mine.kind == "remove":
            return False  # one chain names one first signer: the other spoke out of turn
        rem = env if env.kind == "remove" else mine
        if env.kind != "remove" and env.seat != mine.body["seat"]:
            return False
        x = rem.body["seat"]
        if x in self.removed:
            raise _Dropped(env.seat, "removed", f"seq {env.seq}: seat {x} was removed from the game here")
        if env.prev != mine.prev:
            return False  # another history: asked for below (resync), then met at its place
        misplaced = self._misplaced_remove(env, mine)
        if misplaced is not None:  # a lone seat must not make an honest seat quit, or stop
            raise misplaced        # the table blaming nobody
        if env.kind == "remove" and x == self.me:
            self._removed_me(self._hand_played)
            return True
        raise ProtocolViolation(None, "absent", f"seat {rem.seat} removes {self._name(x)} at seq {env.seq}, "
                                f"where this seat holds another envelope: the seats disagree on who is gone")
