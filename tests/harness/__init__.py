"""The in-process harness of the table tests: tables wired together with no sockets.

:class:`Net` delivers each table's ``Send`` frames to the others, runs ``Job``s inline and lets
the simple bot decide; ``classes`` swaps a seat's ``Table`` class for a modified client
(:func:`stall`: one that holds back its automatic messages of some kinds). :class:`Gone` adds
seats that are gone for good (nothing reaches or leaves them); :class:`Split` cuts the seats into
sides, as a network partition does. Seeds name every key and every random stream, so a test's
game is the same on every run. Proof rounds are tiny (k=1..2) for speed; no check depends on k.
"""

from __future__ import annotations

import copy
import functools
import socket
from collections import deque
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Self

from p2p_chinchon import deck, table as tbl, wire
from p2p_chinchon.autoplay import bot_decider
from p2p_chinchon.bots.simple import SimpleBot
from p2p_chinchon.engine import Game, Rules, make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.table.common import Output

CHEATER = 1  # the seat a red-team test makes cheat, unless it says otherwise


class Stall(tbl.Table):
    """A modified client: never sends its automatic messages of the kinds in ``hold``."""

    hold: frozenset[str] = frozenset()

    def _auto_body(self, step: tbl.Step) -> dict[str, Any] | None:
        if step.kind in self.hold:
            return None
        return super()._auto_body(step)


class BotSeat:
    """A seat's bot as an object, not a closure: a deep copy of a :class:`Net` copies the bot
    and its random stream (a deep copy shares functions, so a closure's bot would be shared)."""

    def __init__(self, bot: SimpleBot) -> None:
        self.bot = bot
        self._decide = bot_decider(bot)

    def __call__(self, view: Any, need: Any) -> Any:
        return self._decide(view, need)

    def __deepcopy__(self, memo: dict[int, Any]) -> BotSeat:
        return BotSeat(copy.deepcopy(self.bot, memo))


@functools.cache
def stall(*kinds: str) -> type[Stall]:
    """The same class for the same kinds (a key of :func:`harness.seeded.seeded_net`)."""
    return type("Stall_" + "_".join(kinds), (Stall,), {"hold": frozenset(kinds)})


class Net:
    """``n`` tables wired together in-process; ``classes`` swaps a seat's Table class."""

    def __init__(self, n: int = 3, *, k: int = 2, seed: int = 1, rules: Rules | None = None,
                 classes: dict[int, type[tbl.Table]] | None = None, defer: bool = False) -> None:
        self.rules: Rules = rules or make_rules("classic", {"limit": 30})
        self.n = n
        self.ids: list[Identity] = [Identity.generate(SeededRng(f"attack-id/{seed}/{i}")) for i in range(n)]
        rngs = [SeededRng(f"attack-rng/{seed}/{i}") for i in range(n)]
        # a test may put any decider (view, need) -> intent | None in a seat
        self.bots: list[Callable[[Any, Any], Any]] = [BotSeat(SimpleBot(self.rules, SeededRng(f"attack-bot/{seed}/{i}"))) for i in range(n)]
        self.q: deque[tuple[int, int, bytes]] = deque()
        classes = classes or {}
        host = classes.get(0, tbl.Table).create(
            self.ids[0], rngs[0], name="t", rules=self.rules, max_seats=n, addr="127.0.0.1:9000",
            proof_rounds=k, auto_agree=True, defer_proofs=defer)
        for i in range(1, n):
            host.lobby.seat_host(f"P{i}", self.ids[i].public_bytes, f"127.0.0.1:{9000 + i}")
        self.tables: list[tbl.Table] = [host] + [
            classes.get(i, tbl.Table).joining(self.ids[i], rngs[i], host.chain.frames[0], auto_agree=True, min_proof_rounds=1,
                                              defer_proofs=defer)
            for i in range(1, n)
        ]
        self.handle(0, host.start())

    def handle(self, i: int, outs: Sequence[Output]) -> None:
        for o in outs:
            if isinstance(o, tbl.Send):
                self.q.extend((i, j, o.frame) for j in range(self.n) if j != i)
            elif isinstance(o, tbl.Job):
                self.handle(i, self.tables[i].job_done(o.id, tbl.run_job(o)))

    def advance(self) -> bool:
        """Deliver the next frame in flight, else let the first seat with a decision make it;
        False when nothing moves."""
        if self.q:
            src, dst, frame = self.q.popleft()
            self.handle(dst, self.tables[dst].receive(frame, src))
            return True
        for i, t in enumerate(self.tables):
            need = t.needs_decision()
            if need is not None and not (t.flow.fault or t.flow.finished):
                intent = self.bots[i](t.view(), need)
                if intent is not None:
                    self.handle(i, t.intent(intent))
                    return True
        return False

    def run(self, until: Callable[[Self], bool] | None = None, max_steps: int = 200_000) -> bool:
        """Deliver and decide until ``until(net)`` holds with nothing in flight (True), or no
        progress is possible (False)."""
        for _ in range(max_steps):
            if not self.q and until is not None and until(self):
                return True
            if not self.advance():
                return until is None
        raise AssertionError("no end")  # pragma: no cover

    def expects(self, kind: str, seat: int | None = None) -> Callable[[Net], bool]:
        def cond(net: Net) -> bool:
            s = net.tables[0].expected()
            return s is not None and s.kind == kind and (seat is None or s.seat == seat)
        return cond

    def craft(self, seat: int, kind: str, body: Any, *, seq: int | None = None, prev: bytes | None = None) -> bytes:
        ref = self.tables[0]  # every table holds the same chain when nothing is in flight
        return wire.make_envelope(
            self.ids[seat].private_key, game=ref.lobby.game, seq=len(ref.chain.envelopes) if seq is None else seq,
            seat=seat, prev=ref.chain.head if prev is None else prev, kind=kind, body=body).encode()

    def inject(self, seat: int, frame: bytes, to: Iterable[int] | None = None) -> None:
        for j in (to if to is not None else range(self.n)):
            if j != seat:
                self.handle(j, self.tables[j].receive(frame, seat))

    def honest(self, cheater: int = CHEATER) -> list[tbl.Table]:
        return [t for i, t in enumerate(self.tables) if i != cheater]


class Gone(Net):
    """A :class:`Net` where the seats in ``dead`` are gone: nothing reaches them or leaves
    them, and nobody decides for them."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.dead: set[int] = set()
        super().__init__(*args, **kwargs)

    def handle(self, i: int, outs: Sequence[Output]) -> None:
        if i in self.dead:
            return
        for o in outs:
            if isinstance(o, tbl.Send):
                self.q.extend((i, j, o.frame) for j in range(self.n) if j != i and j not in self.dead)
            elif isinstance(o, tbl.Job):
                self.handle(i, self.tables[i].job_done(o.id, tbl.run_job(o)))

    def run(self, until: Callable[[Self], bool] | None = None, max_steps: int = 200_000) -> bool:
        bots = self.bots
        self.bots = [(lambda view, need: None) if i in self.dead else b for i, b in enumerate(bots)]
        try:
            return super().run(until, max_steps)
        finally:
            self.bots = bots

    def kill(self, seat: int) -> None:
        self.dead.add(seat)
        self.q = type(self.q)(m for m in self.q if m[1] != seat)  # what it sent is on its way

    def alive(self) -> list[tbl.Table]:
        return [t for i, t in enumerate(self.tables) if i not in self.dead]

    def declare_absent(self, seat: int, by: Iterable[int] | None = None) -> None:
        for i in by if by is not None else range(self.n):
            if i not in self.dead and i != seat:
                self.handle(i, self.tables[i].absent(seat))


class Split(Gone):
    """A :class:`Gone` whose seats are cut into sides (``sides[seat]``): nothing crosses from
    one side to another, as in a network partition or with colluders that ignore the others
    (on the wire the two look the same). Every seat's driver declares absent every seat of
    another side that its table waits for, as soon as it waits for it (the most eager honest
    driver: its ``rejoin_wait`` ran out)."""

    def __init__(self, n: int, seed: int) -> None:
        self.sides = [0] * n
        super().__init__(n, seed=seed, rules=make_rules("classic", {"limit": 8, "reentries": 0}))

    def handle(self, i: int, outs: Sequence[Output]) -> None:
        for o in outs:
            if isinstance(o, tbl.Send):
                self.q.extend((i, j, o.frame) for j in range(self.n) if j != i and self.sides[j] == self.sides[i])
            elif isinstance(o, tbl.Job):
                self.handle(i, self.tables[i].job_done(o.id, tbl.run_job(o)))

    def cut(self, sides: list[int]) -> None:
        self.sides = list(sides)
        for i, t in enumerate(self.tables):  # each driver's clock for the seats across the cut ran out
            for x in range(self.n):
                if sides[x] != sides[i]:
                    t.removal.mark_gone(x)
        self.q = type(self.q)(m for m in self.q if self.sides[m[0]] == self.sides[m[1]])

    def drive(self) -> None:
        """Play, and declare absent whoever of another side is awaited, until nothing moves."""
        seen: set[tuple[int, int, int]] = set()
        for _ in range(500):
            self.run()
            acted = False
            for i, t in enumerate(self.tables):
                step = t.expected()
                if t.flow.fault or t.flow.finished or step is None:
                    continue
                x = t.removal.removing_seat if step.kind == "remove" and step.seat == t.lobby.me else step.seat
                if x is not None and self.sides[x] != self.sides[i] and (i, len(t.chain.frames), x) not in seen:
                    seen.add((i, len(t.chain.frames), x))
                    self.handle(i, t.absent(x))
                    acted = True
            if not acted and not self.q:
                return
        raise AssertionError("no end")  # pragma: no cover

    def heal(self) -> None:
        """The cut is over: every seat hears the others again and each gets what the others
        hold (the mesh's ``S`` exchange)."""
        self.cut([0] * self.n)
        for t in self.tables:
            for x in range(self.n):
                if x != t.lobby.me:
                    t.removal.present(x)
        for i, t in enumerate(self.tables):
            for j in range(self.n):
                if j != i:
                    self.q.extend((i, j, f) for f in t.chain.frames)
        self.drive()


def free_port() -> int:
    """A TCP port free on loopback now (the OS picks it; a test's seat binds it next)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def shuffle_body(net: Net, seat: int, deck_out: Any, proof: Any, **over: Any) -> dict[str, Any]:
    """A ``shuffle`` envelope's body from ``seat``'s table: ``deck_out`` and ``proof``, fields
    of ``over`` replacing the computed ones."""
    t = net.tables[seat]
    body = {"hand": t.hand.hand_no, "round": crypto_of(t).round, "deck": deck.encode_deck(deck_out), "proof": proof}
    body.update(over)
    return body


def step_of(t: tbl.Table) -> tbl.Step:
    """The step ``t`` awaits, where a test knows one is awaited."""
    step = t.expected()
    assert step is not None, "no step awaited"
    return step


def game_of(t: tbl.Table) -> Game:
    """The rules engine's game of ``t``, once it has one."""
    assert t.flow.engine is not None, "no game yet"
    return t.flow.engine


def rules_of(t: tbl.Table) -> Rules:
    """The rules ``t`` plays by, once it knows them."""
    assert t.lobby.rules is not None, "no rules yet"
    return t.lobby.rules


def crypto_of(t: tbl.Table) -> tbl.HandCrypto:
    """The current hand's keys and deck state of ``t``, once a hand began."""
    assert t.hand.hc is not None, "no hand yet"
    return t.hand.hc
