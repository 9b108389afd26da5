"""The node's clocks as a sans-I/O machine: for the step the table expects, who this seat waits
for, why, and how long is left.

:class:`Clocks` holds when the current step began, since when the table waits only for a
return (``stall_limit``), and when the last hand was scored and its showdown put away; every
input is explicit: ``now`` (seconds on any monotonic clock), the table (read only) and a
:class:`Seen` snapshot of who was heard and who is away. It returns a :class:`~.status.Wait`;
the node acts on a wait that ran out. No trio, no sockets: the node feeds it trio's clock once
a tick, tests feed it numbers (tests/test_clocks.py).

The rules (docs/reliability.md "Clocks"): one clock per seat. This seat's own decision runs
the table's ``turn_time`` from when the turn reached it (after the last showdown is put away).
A connected seat's limit counts from the later of the step's start and its return, so a seat
back inside ``rejoin_wait`` gets the whole limit again; another seat's decision shows its own
turn clock, and this node's limit adds the protocol's grace. An absent seat's clock is its
``rejoin_wait`` from when it went away; once that ran out, only the table's ``stall_limit``
runs (counted from when the table began to wait for a return only), while the majority's votes
to remove it are gathered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .presence import Seen as Seen  # (re-exported: the clocks' input)
from .status import DECISIONS, Wait

if TYPE_CHECKING:
    from p2p_chinchon import table as tbl


def rule(rules: Any, name: str, default: int) -> float:
    """The table option ``name`` in seconds (``default`` without rules)."""
    return float(getattr(rules, name, default)) if rules is not None else float(default)


@dataclass
class Timeouts:
    """Seconds a node waits for the expected speaker before blaming it.

    ``protocol``: an automatic step (keys, shuffles, shares) of a connected seat, and the grace
    after a connected seat's turn clock ran out (its own node then plays for it). ``decision``:
    overrides that whole wait for a decision (tests); None = the table's ``turn_time`` plus
    ``protocol``, and no limit when ``turn_time`` is 0 while the seat stays connected.
    ``rejoin``: overrides the table's ``rejoin_wait`` for an absent seat. ``agree``: a
    connected seat accepting the rules (a no-show frees the table soon).
    """

    protocol: float = 90.0
    decision: float | None = None
    rejoin: float | None = None
    agree: float = 120.0


class Clocks:
    """The clocks of one seat at one table (module docstring). ``table``: read only;
    ``timeouts``: the node's limits.

    State: ``step_since`` (when the expected step began here, or when this node caught up),
    ``stall_since`` (since when the table waits only for a return; None while it does not),
    ``scored_at`` (when this node saw the last hand scored; None before) and ``seen_at`` (when
    this seat's person put that hand's showdown away)."""

    def __init__(self, table: tbl.Table, timeouts: Timeouts) -> None:
        self.table, self.timeouts = table, timeouts
        self.step_key: Any = None
        self.step_since = 0.0
        self.stall_since: float | None = None
        self.scored: tuple[int, float | None] = (0, None)  # (hands scored, when the last was seen scored)
        self.seen_at: float | None = None

    # ------------------------------------------------------------------ inputs

    def tick(self, now: float, step: tbl.Step | None) -> None:
        """Once a tick, before :meth:`deadline`: a new expected step (or a longer chain) starts
        its clock now and ends the stall; a newly scored hand starts its showdown's hold."""
        key = (len(self.table.chain.frames), step)
        if key != self.step_key:
            self.step_key, self.step_since = key, now
            self.stall_since = None
        scored = len(self.table.turns.score_history)
        if scored != self.scored[0]:
            self.scored = (scored, now)
            self.seen_at = None

    def restart(self, now: float) -> None:
        """Every clock of the current step starts ``now`` (this node caught up after being
        away): no limit, and no turn of ours, counts the time it was away."""
        self.step_key, self.step_since = None, now

    def showdown_seen(self, now: float) -> None:
        """This seat's person put the last showdown away: our turn clock may start."""
        if self.scored[1] is not None and self.seen_at is None:
            self.seen_at = now

    def not_stalled(self) -> None:
        """The table no longer waits only for a return: the ``stall_limit`` starts again
        from its next need."""
        self.stall_since = None

    # ------------------------------------------------------------------ outputs

    def rejoin(self) -> float:
        """Seconds an absent seat has to come back (``rejoin_wait``)."""
        to = self.timeouts
        return to.rejoin if to.rejoin is not None else rule(self.table.lobby.rules, "rejoin_wait", 120)

    def stall_limit(self) -> float:
        """Seconds the table waits for a return only before a node stops (``stall_limit``)."""
        return rule(self.table.lobby.rules, "stall_limit", 900)

    def stall_left(self, now: float) -> float:
        """Seconds left of the table's ``stall_limit``, counted from when the table began to
        wait for a return only (set here on first need; :meth:`tick` and :meth:`not_stalled`
        clear it)."""
        if self.stall_since is None:
            self.stall_since = now
        return self.stall_since + self.stall_limit() - now

    def deadline(self, step: tbl.Step, now: float, seen: Seen) -> Wait:
        """The current wait for ``step``: for whom, for what, and how long is left (module
        docstring)."""
        t, to = self.table, self.timeouts
        name = t.lobby.players[step.seat].name if step.seat < len(t.lobby.players) else f"seat {step.seat}"
        turn = rule(t.lobby.rules, "turn_time", 60)
        rejoin = self.rejoin()
        decision = step.kind in DECISIONS
        if step.kind == "agree" and turn > 0:
            turn = max(turn, rejoin)  # reading the rules of a new table takes longer than a move
        removal = self.removal_wait(step, now, rejoin, seen)
        if removal is not None:
            return removal
        # a decision's clock starts when the turn reaches the player: when the step begins, or
        # when the showdown a person's screen holds is put away (its showdown_time, or our own
        # person's key: showdown_seen); it then starts at its full value, every turn, and shows
        # that value, not more, while the showdown is still up
        since = self.step_since
        if decision and self.scored[1] is not None:
            hold_end = self.scored[1] + rule(t.lobby.rules, "showdown_time", 30)
            if step.seat == t.lobby.me and self.seen_at is not None:
                hold_end = min(hold_end, self.seen_at)
            since = max(since, hold_end)
        if step.seat == t.lobby.me:
            left = min(turn, since + turn - now) if decision and turn > 0 else None
            return Wait(step.seat, name, step.kind, left, mine=True)
        away = seen.away_since.get(step.seat)
        if away is not None or step.seat not in seen.heard:
            start = away if away is not None else self.step_since
            if start + rejoin > now or t.flow.engine is None:  # (before the game: rejoin_wait is the limit)
                return Wait(step.seat, name, step.kind, start + rejoin - now, absent=True,
                            connecting=step.seat not in seen.heard)
            if t.removal.can_remove(step.seat):
                # the seats out of reach are a majority: they may be the ones that go on
                out = sum(1 for s in seen.others if s in seen.away_since)
                note = "minority" if 2 * out > len(seen.others) + 1 else "votes"
                return Wait(step.seat, name, step.kind, self.stall_left(now), absent=True, note=note,
                            have=len(t.removal.votes_for(step.seat)), need=t.removal.votes_needed())
            return Wait(step.seat, name, step.kind, self.stall_left(now), absent=True,
                        note="end" if step.kind == "game_end" else "blocked")
        since = max(since, seen.returned_at.get(step.seat, since))  # a fresh limit from its return
        limit: float | None
        if step.kind == "agree":
            limit = to.agree
        elif decision:
            limit = to.decision if to.decision is not None else (turn + to.protocol if turn > 0 else None)
        else:
            limit = to.protocol
        # the seat's own clock plays for it after ``turn``; our limit adds the protocol's grace
        own = min(turn, since + turn - now) if decision and turn > 0 and to.decision is None else None
        return Wait(step.seat, name, step.kind, None if limit is None else since + limit - now,
                    shown=own if own is not None and own > 0 else None)

    def removal_wait(self, step: tbl.Step, now: float, rejoin: float, seen: Seen) -> Wait | None:
        """The wait while a seat gone for good is being removed (docs/protocol.md "Removal"),
        or None. This seat co-signs when its own clock for the seat ran out (``mine``: the
        limit is that clock); while it still hears the seat, and while a connected seat's
        signature or the start of the removal is awaited, only the ``stall_limit`` runs
        (nobody is blamed for not agreeing that a seat is gone)."""
        t = self.table
        if step.kind == "remove":
            x = t.removal.removing_seat
            gone = t.lobby.players[x].name if x is not None else "?"
            if step.seat == t.lobby.me:
                away = seen.away_since.get(x) if x is not None else None
                if away is None and x in seen.heard:
                    return Wait(step.seat, t.lobby.players[step.seat].name, "remove", self.stall_left(now),
                                mine=True, removing=gone, note="hears")
                start = away if away is not None else self.step_since
                return Wait(step.seat, t.lobby.players[step.seat].name, "remove", start + rejoin - now, mine=True,
                            removing=gone)
            if step.seat in seen.present:
                return Wait(step.seat, t.lobby.players[step.seat].name, "remove", self.stall_left(now), removing=gone)
            return None  # the signer is away too: waited for as any absent seat
        first = t.removal.removal_step()
        if first is None or first.seat == t.lobby.me:
            return None
        return Wait(first.seat, t.lobby.players[first.seat].name, "remove", self.stall_left(now),
                    removing=t.lobby.players[step.seat].name)
