"""Removal: playing on without a seat that is gone for good (docs/protocol.md "Removal").

A seat that stays away past the table option ``rejoin_wait``, or that signed ``leave`` while
still in the game (kept out of the chain: it would race the expected speaker), is removed by
every other seat still at the table, each signing its own ``remove`` of it once the table
waits for it. A removal for "absent" needs a **strict majority** of the seats in the game: its
first ``remove`` carries the signed ``away`` votes (never chained) of more than half of them,
each bound to the chain position where the table waits for the seat, so that under any
partition at most one side can remove anyone, and two colluders cannot push out the present
seats. The chain decides when a ``remove`` is valid (docs/protocol.md "Removal"); the driver
only says when its own view agrees (:meth:`Table.absent <p2p_chinchon.table.Table.absent>`). When every signature is in,
the seat is out like an eliminated seat (standings: "left"); a hand in progress that needs its
key share is void, and the game goes on with the others, or ends when one is left. A node on
another branch learns that it was removed only from a run of ``remove`` envelopes that holds
every required signature. Knows nothing of sockets or clocks."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

from p2p_chinchon import engine, view as v, wire
from p2p_chinchon.schedule import TERMINAL_KINDS

from .common import Commit, GameEvent, Outbox, ProtocolViolation, Send, Step, Stopped, _Dropped
from .state import Flow, Part

if TYPE_CHECKING:
    from .chain import Chain
    from .hand import Hand
    from .lobby import Lobby
    from .turns import Turns
    from .view import EventLog

MAX_VOTES_AHEAD = 64  # positions ahead of our chain whose votes we keep (a node behind us)
MAX_VOTES_EACH = 16  # votes ahead of our head kept per voter (at the head: one per seat voted on)
MAX_BRANCH_EACH = 32  # removes of another branch kept per signer


class Removing(TypedDict):
    """One removal being signed: its ``seat`` and ``reason``, the seats that ``signed`` it so
    far, and ``base``: the seats in the game when the outermost removal began."""

    seat: int
    reason: str
    signed: set[int]
    base: int


class Removal(Part):
    """The removal part of :class:`~p2p_chinchon.table.Table`. Owns ``removed`` (seat -> "absent"
    | "left": out of the game for good), ``removing`` (the removals being signed, innermost
    last, each with the count of seats in the game when the outermost began), ``gone`` (the
    seats this node's driver declared away past ``rejoin_wait``, or that left), ``leaves``
    (seat -> its signed leave, kept out of the chain), ``votes`` (the signed ``away`` votes
    heard, by (seq, prev, seat) -> voter -> frame; never chained) and ``branch`` (removes of
    another branch, by hash). Reads the chain, the hand and the game's end; changes the flow
    when a removal is applied."""

    def __init__(self, flow: Flow, lobby: Lobby, out: Outbox, events: EventLog, chain: Chain,
                 hand: Hand, turns: Turns) -> None:
        super().__init__(flow, lobby, out, events)
        self.chain = chain
        self.hand = hand
        self.turns = turns
        self.removed: dict[int, str] = {}
        self.removing: list[Removing] = []
        self.gone: set[int] = set()
        self.leaves: dict[int, bytes] = {}
        self.votes: dict[tuple[int, bytes, int], dict[int, bytes]] = {}
        self.branch: dict[bytes, wire.Envelope] = {}

    # -------------------------------------------------------------- the driver's view

    def vote_absent(self, seat: int) -> None:
        """The driver's ``rejoin_wait`` for ``seat`` ran out and the chain lets the table
        remove it (:meth:`can_remove`): this seat counts it gone and votes (a signed ``away``,
        sent to every peer, never chained); see :meth:`~p2p_chinchon.table.Table.absent`."""
        self.gone.add(seat)
        self.vote(seat)

    def mark_gone(self, seat: int) -> None:
        """``seat`` has been away from this node past ``rejoin_wait`` (whatever the table waits
        for): it is not counted on to start a removal (:meth:`removal_step`), and this seat
        co-signs its removal. Signs nothing."""
        if 0 <= seat < len(self.lobby.players) and seat != self.lobby.me:
            self.gone.add(seat)

    def present(self, seat: int) -> None:
        """``seat`` is heard again: this seat no longer agrees to remove it (a vote or a
        removal already signed stays signed; a seat that signed ``leave`` stays gone)."""
        if seat not in self.leaves:
            self.gone.discard(seat)

    def my_votes(self) -> list[bytes]:
        """Our own ``away`` votes at the chain's head (sent again to a peer whose link came up)."""
        n = len(self.chain.envelopes)
        return [f for (seq, prev, _x), by in self.votes.items() if seq == n and prev == self.chain.head
                for s, f in by.items() if s == self.lobby.me]

    def can_remove(self, seat: int) -> bool:
        """True when the chain allows removing ``seat`` now: the game has begun and is not
        over for this table, the seat is still in it, the table waits for it (or is removing
        it already), and its signers are a strict majority of the seats in the game (so
        that a majority of votes can exist)."""
        if self.flow.engine is None or self.flow.fault or self.flow.finished or self.lobby.me is None:
            return False
        if not 0 <= seat < len(self.lobby.players) or seat in self.removed or seat == self.lobby.me:
            return False
        step = self.flow.expected()
        waits = step is not None and step.seat == seat
        if not (waits or self.removing_seat == seat):
            return False
        return 2 * len(self.signers(seat)) > self.base() and self.end_problem(seat) is None

    def end_problem(self, seat: int) -> str | None:
        """Why the game's end forbids removing ``seat`` now, or None (docs/protocol.md
        "Removal", the game's end). Once ``game_end`` envelopes are chained, the seats that
        signed them, with the seats being removed (``seat`` too), must be no majority of the
        seats in the game: else the removed seats' own record could hold a majority's
        ``game_end`` (the signers' in our common past, theirs after it) and end the game a
        second time, on another branch."""
        ended = self.turns.game_end_sigs
        out = ended | {r["seat"] for r in self.removing} | {seat}
        if not ended or 2 * len(out) <= self.base():
            return None
        names = ", ".join(self.lobby.name(s) for s in sorted(ended))
        return (f"{names} signed the game's end: with seat {seat} they would be a majority of the "
                f"{self.base()} seats in the game, so its end is signed, not its seats removed")

    @property
    def removing_seat(self) -> int | None:
        """The seat whose removal is being signed (the innermost), or None."""
        return self.removing[-1]["seat"] if self.removing else None

    def removal_step(self) -> Step | None:
        """While the expected speaker is gone on this node's clock: who should sign the first
        ``remove`` of it (the first of its signers, in seat order, that this node does not
        count as gone), else None."""
        step = self.flow.expected()
        if step is None or step.seat not in self.gone or not self.can_remove(step.seat):
            return None
        here = [s for s in self.signers(step.seat) if s not in self.gone]
        return Step("remove", here[0]) if here else None

    def votes_for(self, seat: int) -> list[int]:
        """The seats whose ``away`` vote for ``seat`` at the chain's head this node holds."""
        by = self.votes.get((len(self.chain.envelopes), self.chain.head, seat), {})
        return sorted(by)

    def votes_needed(self) -> int:
        """How many ``away`` votes remove a seat now: a strict majority of the seats in the game."""
        return self.base() // 2 + 1

    # -------------------------------------------------------------- votes

    def vote(self, seat: int) -> None:
        """Sign and send our ``away`` vote for ``seat`` at the head (once: Ed25519 signatures
        are deterministic, so the same vote is the same frame)."""
        key = (len(self.chain.envelopes), self.chain.head, seat)
        if self.lobby.me in self.votes.get(key, {}) or self.lobby.identity is None:
            return
        env = wire.make_envelope(self.lobby.signing_key().private_key, game=self.lobby.game, seq=len(self.chain.envelopes), seat=self.lobby.seat(),
                                 prev=self.chain.head, kind="away", body={"seat": seat, "hand": self.hand.hand_no})
        frame = env.encode()
        self.votes.setdefault(key, {})[self.lobby.seat()] = frame
        self.out.add(Send(frame))

    def note_vote(self, env: wire.Envelope, frame: bytes) -> None:
        """A peer's ``away`` vote: kept when validly signed, for this game, by a seat of the
        seating about another, at our head (then for the hand being played) or ahead of it (a
        vote behind our head is moot), and sent on once to every peer (a seat linked to some of
        us only still hears it). Each voter keeps at most :data:`MAX_VOTES_EACH` votes ahead of
        our head, so one seat's flood crowds out nobody else's."""
        n = len(self.chain.envelopes)
        if not self.lobby.players or env.game != self.lobby.game or not n <= env.seq <= n + MAX_VOTES_AHEAD:
            return
        if env.seat >= len(self.lobby.players):
            raise _Dropped(None, "bad_vote", f"a vote of seat {env.seat}, not a seat of the seating")
        try:  # before anything names its signer: an unsigned vote names nobody
            self.chain.check_sig(env)
        except ProtocolViolation as exc:
            raise _Dropped(None, exc.rule, exc.reason) from None
        x = env.body["seat"]
        if x >= len(self.lobby.players) or x == env.seat:
            raise _Dropped(env.seat, "bad_vote", f"seat {env.seat} votes on seat {x}")
        if env.seq == n and (env.prev != self.chain.head or env.body["hand"] != self.hand.hand_no):
            return  # a vote of another branch, or of another hand, at our head: it never counts here
        key = (env.seq, env.prev, x)
        if env.seat in self.votes.get(key, {}):
            return
        for old in [k for k in self.votes if k[0] < n]:
            del self.votes[old]
        ahead = sum(1 for k, by in self.votes.items() if k[0] > n and env.seat in by)
        if env.seq > n and ahead >= MAX_VOTES_EACH:
            raise _Dropped(env.seat, "flood", f"seat {env.seat} sent more than {MAX_VOTES_EACH} away votes "
                           "ahead of our chain")
        self.votes.setdefault(key, {})[env.seat] = frame
        self.out.add(Send(frame))

    def base(self) -> int:
        """The seats in the game when the removal in progress (the outermost) began, or now."""
        if self.removing:
            return self.removing[0]["base"]
        return len(self.lobby.players) - len(self.flow.left)

    def certificate(self, x: int) -> list[bytes] | None:
        """The proof of our first ``remove`` of ``x`` at the head, when we hold a strict
        majority's votes (ours among them): the held votes that pass every check of
        :meth:`valid_vote` (a cheat's vote of another hand must not spoil it), and for a
        signer that left, its ``leave``; sorted by seat, no more than a majority. Else None."""
        n, head, hand = len(self.chain.envelopes), self.chain.head, self.hand.hand_no
        by = self.votes.get((n, head, x), {})
        signers = self.signers(x)
        good: dict[int, bytes] = {}
        for s in signers:
            if s in by and self.valid_vote(by[s], x, n, head, hand, set(signers)) is not None:
                good[s] = by[s]
            elif s in self.leaves:
                good[s] = self.leaves[s]  # a seat that left counts as voting (its own signed word)
        need = self.votes_needed()
        if self.lobby.me not in by or self.lobby.me not in good or len(good) < need:
            return None
        chosen = [self.lobby.me] + [s for s in sorted(good) if s != self.lobby.me][:need - 1]
        return [good[s] for s in sorted(chosen)]

    def valid_vote(self, frame: bytes, x: int, seq: int, prev: bytes, hand: int, signers: set[int]) -> wire.Envelope | None:
        """The decoded envelope when ``frame`` is a vote that seat ``x`` was away at (``seq``,
        ``prev``, ``hand``) by a signer of its removal, else None: a validly signed ``away`` of
        this game, or a signer's own signed ``leave`` of this game (it counts as its vote)."""
        try:
            a = wire.decode_envelope(frame)
            if a.seat not in signers or a.game != self.lobby.game:
                return None
            if a.kind != "leave" and not (a.kind == "away" and a.seq == seq and a.prev == prev
                                          and a.body["seat"] == x and a.body["hand"] == hand):
                return None
            wire.verify_envelope(a, self.lobby.players[a.seat].key)
        except wire.WireError:
            return None
        return a

    def certificate_problem(self, env: wire.Envelope, x: int) -> str | None:
        """Why the ``proof`` of ``env``, a first ``remove`` of ``x`` for "absent", is not a
        majority's votes, or None: every frame a validly signed ``away`` of this game, at the
        remove's own seq and prev, on seat ``x`` and the remove's hand, or the signed ``leave``
        of this game of a seat that left, each by a distinct signer of ``x``'s removal; the
        remove's signer's own ``away`` among them; more than half the seats in the game
        (:meth:`base`)."""
        signers = set(self.signers(x))
        voters: set[int] = set()
        own = False
        for i, f in enumerate(env.body["proof"]):
            a = self.valid_vote(f, x, env.seq, env.prev, env.body["hand"], signers)
            if a is None or a.seat in voters:
                return f"vote {i} of its proof is not a distinct signer's signed vote that seat {x} was away here"
            voters.add(a.seat)
            own = own or (a.seat == env.seat and a.kind == "away")
        if not own:
            return "its signer's own vote is not in its proof"
        need = self.votes_needed()
        if len(voters) < need:
            return (f"it carries {len(voters)} vote(s) that seat {x} was away, and a removal needs a majority "
                    f"of the {self.base()} seats in the game ({need})")
        return None

    # -------------------------------------------------------------- the chain's rules

    def signers(self, seat: int) -> list[int]:
        """Who signs the removal of ``seat``, in seat order: every other seat still at the
        table (eliminated seats too) that is not itself being removed."""
        out_now = {r["seat"] for r in self.removing}
        return [s for s in range(len(self.lobby.players)) if s != seat and s not in self.flow.left and s not in out_now]

    def plays_on_without(self, seat: int) -> bool:
        """A game is on that can go on without ``seat`` (a ``leave`` of it starts its removal
        instead of stopping the table): two other seats or more (a ``left`` removal needs no
        majority's votes: the seat's own ``leave`` is its consent)."""
        return (self.flow.engine is not None and not self.flow.finished and seat != self.lobby.me
                and seat not in self.removed and len(self.signers(seat)) >= 2)

    def leave_acted_on(self, seat: int, frame: bytes) -> bool:
        """``frame``, a ``leave`` of ``seat``, was acted on already (the seat is removed, or
        this very leave is held): the same leave again, from a resync answer."""
        return seat in self.removed or self.leaves.get(seat) == frame

    def note_leave(self, env: wire.Envelope, frame: bytes) -> None:
        """A validly signed ``leave`` of a seat the game can go on without: it is not chained
        (its place would race the expected speaker's envelope); the seat is gone by its own
        word, and its removal, for "left" with this frame as proof, starts as soon as the
        table waits for it."""
        if env.seat in self.leaves:
            return
        self.leaves[env.seat] = frame
        self.gone.add(env.seat)
        self.events.event("left", (env.seat,), detail=env.body["reason"])

    def start_removal(self, seat: int, reason: str, signed: tuple[int, ...] = ()) -> None:
        """A removal of ``seat`` begins: the other signers' ``remove`` steps go first."""
        base = self.base()
        self.removing.append({"seat": seat, "reason": reason, "signed": set(signed), "base": base})
        self.flow.expect_first("remove", (s for s in self.signers(seat) if s not in signed))

    def on_remove(self, env: wire.Envelope) -> Commit:
        b = env.body
        x, reason = b["seat"], b["reason"]

        def bad(why: str) -> ProtocolViolation:
            return ProtocolViolation(env.seat, "bad_removal", why, env.seq)

        if self.flow.engine is None or self.flow.finished:
            raise bad("no game is being played")
        if b["hand"] != self.hand.hand_no:
            raise bad(f"hand {b['hand']}, the table is at hand {self.hand.hand_no}")
        if x >= len(self.lobby.players) or x in self.removed or x == env.seat:
            raise bad(f"seat {x} cannot be removed by seat {env.seat}")
        step = self.flow.expected()
        cur = self.removing[-1] if self.removing else None
        # a co-signature of the removal in progress, or the first remove of a new one
        top = cur if cur is not None and cur["seat"] == x and step == Step("remove", env.seat) else None
        first = top is None
        if top is not None and (reason != top["reason"] or b["proof"]):
            raise bad(f"the removal of seat {x} is for '{top['reason']}' (its proof is in the first remove)")
        if first:
            if step is None or step.seat != x:
                raise bad(f"the table does not wait for seat {x}")
            if env.seat not in self.signers(x):
                raise bad(f"seat {env.seat} does not sign the removal of seat {x}")
            ended = self.end_problem(x)
            if ended is not None:
                raise bad(ended)
            self.check_removal_proof(env, x)

        def commit() -> None:
            if top is None:
                self.start_removal(x, reason, (env.seat,))
            else:
                self.flow.done("remove")
                top["signed"].add(env.seat)
            self.finish_removals()

        return commit

    def check_removal_proof(self, env: wire.Envelope, x: int) -> None:
        """The first ``remove``'s ``proof``: for "absent", a majority's ``away`` votes
        (:meth:`certificate_problem`); for "left", seat ``x``'s own ``leave`` envelope of
        this game, validly signed by its key, alone."""
        reason, proof = env.body["reason"], env.body["proof"]
        if reason == "absent":
            why = self.certificate_problem(env, x)
            if why is not None:
                raise ProtocolViolation(env.seat, "bad_removal", f"seat {env.seat} tried to remove seat {x} "
                                        f"without a majority's signed votes that it was away: {why}", env.seq)
            return
        try:
            leave = wire.decode_envelope(proof[0]) if len(proof) == 1 else None
            if leave is not None:
                wire.verify_envelope(leave, self.lobby.players[x].key)
            ok = leave is not None and leave.kind == "leave" and leave.seat == x and leave.game == self.lobby.game
        except wire.WireError:
            ok = False
        if not ok:
            raise ProtocolViolation(env.seat, "bad_removal", f"a removal for 'left' proves it with seat {x}'s "
                                    "own signed leave", env.seq)

    def auto_remove(self) -> dict[str, Any] | None:
        top = self.removing[-1]
        if top["reason"] != "left" and top["seat"] not in self.gone:
            return None  # our own view does not agree (yet): the driver decides (absent)
        return {"seat": top["seat"], "hand": self.hand.hand_no, "reason": top["reason"], "proof": []}

    def removal_start_body(self, step: Step) -> dict[str, Any] | None:
        """Our ``remove`` that starts removing the expected speaker, when we are to start it
        (:meth:`removal_step`), our own clock says it is gone, and we hold its proof (its
        ``leave``, or a majority's votes); else None."""
        first = self.removal_step()
        if first is None or first.seat != self.lobby.me:
            return None
        leave = self.leaves.get(step.seat)
        if leave is not None:
            return {"seat": step.seat, "hand": self.hand.hand_no, "reason": "left", "proof": [leave]}
        votes = self.certificate(step.seat)
        if votes is None:
            return None
        return {"seat": step.seat, "hand": self.hand.hand_no, "reason": "absent", "proof": votes}

    # -------------------------------------------------------------- another branch

    def note_branch(self, env: wire.Envelope) -> bool:
        """``env``, a validly signed ``remove`` that does not fit our chain (another branch):
        kept, and True when the run of removes it belongs to, hanging off our chain, holds
        every signature that removes this seat (then it stops: "you were removed"). A node
        hears that it was removed only when it holds every required signature."""
        if env.kind != "remove" or self.lobby.me is None or self.flow.fault or self.flow.finished:
            return False
        mine = [h for h, e in self.branch.items() if e.seat == env.seat]
        if len(mine) >= MAX_BRANCH_EACH:  # make room: drop this signer's removes that hang off nothing
            for h in mine:
                e = self.branch[h]
                off_chain = not (e.seq < len(self.chain.envelopes) and e.prev == self.chain.envelopes[e.seq].prev)
                if off_chain and e.prev not in self.branch:
                    del self.branch[h]
        if sum(1 for e in self.branch.values() if e.seat == env.seat) < MAX_BRANCH_EACH:
            self.branch[env.hash()] = env
        for root in list(self.branch.values()):
            run = self.branch_run(root)
            if run and self.run_removes_me(run):
                x = next(e.body for e in run if e.body["seat"] == self.lobby.me)
                self.removed[self.lobby.me] = x["reason"]
                self.events.event("removed", (self.lobby.me,), detail=x["reason"])
                self.removed_me(x["hand"])
                return True
        return False

    def branch_run(self, root: wire.Envelope) -> list[wire.Envelope]:
        """The removes chained from ``root`` when ``root`` parts from our chain (another
        envelope at its position, after the same ``prev``), else []."""
        if root.seq >= len(self.chain.envelopes) or root.prev != self.chain.envelopes[root.seq].prev or \
                root.hash() == self.chain.envelopes[root.seq].hash():
            return []
        run = [root]
        by_prev: dict[bytes, list[wire.Envelope]] = {}
        for e in self.branch.values():
            by_prev.setdefault(e.prev, []).append(e)
        while len(run) <= len(self.branch):  # the first that follows (a fork of it is the signer's)
            nxt = by_prev.get(run[-1].hash())
            if not nxt:
                break
            run.append(min(nxt, key=lambda e: e.seat))
        return run

    def run_removes_me(self, run: list[wire.Envelope]) -> bool:
        """Does this run of removes remove this seat with every signature its removal needs:
        each seat it removes signed off by every seat of the game it does not remove, and those
        a strict majority of the seats in the game?"""
        in_game = [s for s in range(len(self.lobby.players)) if s not in self.flow.left]
        out = {e.body["seat"] for e in run if e.body["seat"] < len(self.lobby.players)}
        keep = [s for s in in_game if s not in out]
        if self.lobby.me not in out or 2 * len(keep) <= len(in_game):
            return False
        signed: dict[int, set[int]] = {}
        for e in run:
            if e.seat in out:
                return False
            signed.setdefault(e.body["seat"], set()).add(e.seat)
        return all(signed.get(x, set()) >= set(keep) for x in out)

    # -------------------------------------------------------------- the effect

    def finish_removals(self) -> None:
        """Apply every removal (innermost first) whose signatures are all in."""
        applied = False
        while self.removing:
            top = self.removing[-1]
            if not all(s in top["signed"] for s in self.signers(top["seat"])):
                break
            self.removing.pop()
            self.apply_removal(top["seat"], top["reason"])
            applied = True
            if self.flow.fault:
                return
        if applied and not self.removing:
            self.resume_after_removal()

    def apply_removal(self, seat: int, reason: str) -> None:
        hc = self.hand.hc
        open_hand = hc is not None and len(self.turns.score_history) <= self.hand.hand_no
        void = hc is not None and open_hand and seat in hc.seats
        if void:  # nothing of the hand can open without the seat's key share: no more steps
            self.flow.drop(lambda st: st.kind == "remove" and st.seat != seat)
            self.turns.cancel_draw()
        elif hc is not None and seat in hc.seats:
            # the hand is scored; its end-of-hand audit needs the seat's secret: no secret
            # of anyone goes out for it (docs/protocol.md "Removal")
            self.flow.drop(lambda st: st.seat != seat and st.kind not in ("secret", "hand_digest"))
        else:
            self.flow.drop(lambda st: st.seat != seat)
        self.removed[seat] = reason
        self.flow.left.add(seat)
        self.gone.discard(seat)
        hand = self.hand.hand_no
        self.events.event("removed", (seat,), detail=reason)
        for ev in self.flow.game().withdraw(seat, void_hand=void):
            self.out.add(GameEvent(ev))
            if isinstance(ev, engine.HandVoid):
                self.turns.void_by_removal()
                self.events.event("voided", (seat,), numbers=(hand + 1,))
            elif isinstance(ev, engine.GameOver):
                self.events.event("game_over", (ev.winner,))
        if seat == self.lobby.me:
            self.removed_me(hand)

    def resume_after_removal(self) -> None:
        """Every removal is applied: carry on where the table was (the next hand, the next
        re-entry answer, the game's end)."""
        if self.flow.fault or self.flow.finished or self.flow.queue:
            return
        if self.flow.phase == v.OVER:
            self.out.add(self.flow.finish())
        elif self.hand.hc is None or len(self.turns.score_history) > self.hand.hand_no:
            self.turns.after_hand()

    def removed_me(self, hand: int) -> None:
        """The other seats removed this one: it stops (not a fault: nothing is signed)."""
        why = self.removed.get(self.lobby.seat(), "absent")
        fault = v.Fault(self.lobby.me, "removed", f"you were removed from the game ({why} since hand {hand + 1})",
                        detail=why, hand=hand + 1)
        self.flow.stop(fault)
        self.out.add(Stopped(fault))

    def misplaced_remove(self, env: wire.Envelope, mine: wire.Envelope) -> ProtocolViolation | None:
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

    def removal_conflict(self, env: wire.Envelope, mine: wire.Envelope) -> bool:
        """A validly signed envelope of another seat at a position where our chain holds
        another, one of the two a ``remove``: True when it is handled here. A late frame of a
        seat already removed is dropped. With the same ``prev``: a ``remove`` without a
        majority's votes is its signer's violation (it tried to remove a present seat: the
        record refutes it); one with them is another branch, kept (it tells this seat that it
        was removed once it holds every signature) and asked for, blaming nobody; the removed
        seat's own envelope, met after its removal began here, is dropped. False: judge it as
        any other conflict (another history: resync)."""
        if mine.kind == "remove" and mine.body["seat"] == env.seat and env.prev == mine.prev:
            # the sender's own removal began here: its envelope (a co-sign of another removal
            # included) came too late for this place; nobody is to blame
            raise _Dropped(env.seat, "removing", f"seq {env.seq}: seat {env.seat}'s envelope came after its "
                           "removal began here")
        rem = env if env.kind == "remove" else mine
        if env.kind != "remove" and env.seat != mine.body["seat"]:
            return False
        x = rem.body["seat"]
        if x >= len(self.lobby.players):
            raise ProtocolViolation(env.seat, "bad_removal", f"seq {env.seq}: there is no seat {x}", env.seq)
        if x in self.removed:
            raise _Dropped(env.seat, "removed", f"seq {env.seq}: seat {x} was removed from the game here")
        if env.prev != mine.prev:
            return False  # another history: asked for below (resync), then met at its place
        if env.kind != "remove":
            raise _Dropped(env.seat, "removing", f"seq {env.seq}: seat {x}'s envelope came after its removal "
                           "began here")
        misplaced = self.misplaced_remove(env, mine)
        if misplaced is not None:  # a lone seat must not make an honest seat quit, or stop
            raise misplaced        # the table blaming nobody
        refuted = self.refuted_remove(env, mine)
        if refuted is not None:
            raise refuted
        if self.note_branch(env):
            return True
        raise _Dropped(env.seat, "branch", f"seq {env.seq}: seat {env.seat} removes {self.lobby.name(x)} on another "
                       "branch, with a majority's votes: waiting to see it complete", resync=env.seq)

    def refuted_remove(self, env: wire.Envelope, mine: wire.Envelope) -> ProtocolViolation | None:
        """``env``, a validly signed first ``remove`` of X where our chain holds, with the same
        ``prev``, another envelope (X's own, or another seat's ``remove``): its proof must
        stand on its own (a majority's votes, or X's ``leave``); else the violation naming
        its signer, who tried to remove X while X was present. None when it stands."""
        x = env.body["seat"]
        try:
            self.check_removal_proof(env, x)
        except ProtocolViolation as exc:
            if mine.seat == x:
                exc.reason = (f"seat {env.seat} tried to remove {self.lobby.name(x)} while {self.lobby.name(x)} was present "
                              f"(its own envelope holds seq {env.seq}): {exc.reason}")[:256]
            return exc
        return None
