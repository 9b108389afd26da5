"""Presence, waits and the turn clock of a node, in one process on loopback."""

from __future__ import annotations

import pytest

from harness import rules_of, step_of
from p2p_chinchon.audit import audit_file
from p2p_chinchon.engine import make_rules
from p2p_chinchon.local import SeatSpec, play_local
from p2p_chinchon.net.node import Timeouts, clock
from p2p_chinchon.net.presence import SeatPresence
from p2p_chinchon.net.status import NodeStatus, Wait
from p2p_chinchon.view import Agree

K = 3


def test_status_text_names_who_is_awaited_and_for_how_long():
    away = NodeStatus((SeatPresence(2, "Carla", False, 5.0),), Wait(2, "Carla", "draw", 115.2, absent=True))
    assert away.text() == "Carla disconnected: waiting for them (1:56)"
    back = NodeStatus((SeatPresence(2, "Carla", True, back=True),), Wait(2, "Carla", "draw", 59.0))
    assert back.text() == "waiting for Carla to draw (0:59); Carla is back"
    mine = NodeStatus((), Wait(0, "Ana", "discard", 7.5, mine=True))
    assert mine.text() == "your turn to discard or close (0:08)"
    step = NodeStatus((SeatPresence(1, "Bruno", False, 9.0),), Wait(2, "Carla", "deal_shares", 80.0))
    assert step.text() == "waiting for Carla: deal shares (1:20); Bruno disconnected"
    assert NodeStatus().text() == ""
    assert clock(0.2) == "0:01" and clock(-3) == "0:00" and clock(600) == "10:00"
    # the key ignores the clocks: a line-mode printer prints each new wait once
    assert NodeStatus((), Wait(2, "C", "draw", 5.0)).key() == NodeStatus((), Wait(2, "C", "draw", 4.0)).key()


def test_a_console_says_a_return_once(capsys):
    """A printout (``--no-ui``) names a seat's return on the first line after it, not on every
    new wait while the return is recent (a rejoin printed "Bruno is back" 186 times)."""
    from p2p_chinchon.commands._common import SeatGlue

    glue = SeatGlue(None, bot=False, printer=lambda view: None, live=False)
    events = glue.events()
    for what in ("draw", "discard", "draw"):
        events.status(NodeStatus((SeatPresence(1, "Bruno", True, back=True),), Wait(2, "Carla", what, 50.0)))
    events.status(NodeStatus((SeatPresence(1, "Bruno", True),), Wait(2, "Carla", "discard", 50.0)))
    events.status(NodeStatus((SeatPresence(1, "Bruno", True, back=True),), Wait(2, "Carla", "draw", 50.0)))
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["[waiting for Carla to draw (0:50); Bruno is back]",
                     "[waiting for Carla to discard or close (0:50)]",
                     "[waiting for Carla to draw (0:50)]",
                     "[waiting for Carla to discard or close (0:50)]",
                     "[waiting for Carla to draw (0:50); Bruno is back]"], lines


def test_status_text_speaks_the_screens_language():
    """The status line is the screen's: Spanish and French say who is awaited and how long in
    their words (the English text stays for logs and printouts); the turn clock's notice too."""
    from p2p_chinchon.commands._common import SeatGlue
    from p2p_chinchon.i18n import Translator

    es, fr = Translator("es"), Translator("fr")
    away = NodeStatus((SeatPresence(2, "Carla", False, 5.0),), Wait(2, "Carla", "draw", 115.2, absent=True))
    assert away.text(es) == "Carla se desconectó: le esperamos (1:56)"
    assert away.text(fr) == "Carla est déconnecté : on l'attend (1:56)"
    back = NodeStatus((SeatPresence(2, "Carla", True, back=True),), Wait(2, "Carla", "draw", 59.0))
    assert back.text(es) == "esperando a que Carla robe (0:59); Carla ha vuelto"
    mine = NodeStatus((), Wait(0, "Ana", "discard", 7.5, mine=True))
    assert mine.text(fr) == "à vous de défausser ou de fermer (0:08)"
    step = NodeStatus((), Wait(2, "Carla", "deal_shares", 80.0))
    assert step.text(es) == "esperando a Carla: deal shares (1:20)"

    class Screen:  # the bridge of a full-screen UI
        said: list[str] = []
        kept: list[str] = []

        def set_status(self, text: str) -> None:
            self.said.append(text)

        def notify(self, text: str, key: str = "", fields: dict | None = None) -> None:
            self.kept.append(text)

    async def run() -> tuple[list[str], list[str]]:
        glue = SeatGlue(Screen(), bot=False, lang="es")
        events = glue.events()
        events.status(away)
        events.notice("no table at 127.0.0.1:5 yet: still trying for 3 s")
        # a move made for the person must stay readable: the next status would replace it
        events.notice("time is up: the bot plays for you (draw)", "st_bot_draw", lasting=True)
        events.status(away)
        return Screen.said, Screen.kept

    import trio

    assert trio.run(run) == (["Carla se desconectó: le esperamos (1:56)",
                              "no table at 127.0.0.1:5 yet: still trying for 3 s",
                              "Carla se desconectó: le esperamos (1:56)"],
                             ["se acabó el tiempo: el bot juega por ti (robar)"])
    from p2p_chinchon.i18n import Translator
    from p2p_chinchon.ui.screen import TableScreen

    screen = TableScreen(Translator("en"))
    screen.noticed("time is up: the bot plays for you (draw)")
    screen.set_status("waiting for Carla to draw (0:59)")
    assert "the bot plays for you" in screen.message


def test_status_text_while_a_seat_gone_for_good_is_removed():
    """Never a silent wait: a removal in progress says who is gone and whose signature (or
    which clock) it waits for."""
    theirs = NodeStatus((), Wait(1, "Bruno", "remove", 80.0, removing="Carla"))
    assert theirs.text() == "Carla is gone: removing them from the game (waiting for Bruno's signature) (1:20)"
    mine = NodeStatus((), Wait(0, "Ana", "remove", 4.2, mine=True, removing="Carla"))
    assert mine.text() == "Carla is gone: removing them from the game (waiting for this seat's own clock for them) (0:05)"
    assert theirs.key() != NodeStatus((), Wait(1, "Bruno", "remove", 80.0)).key()


async def test_turn_clock_plays_the_bots_move_for_a_silent_person(tmp_path):
    """Seat 1 is a "person" who never answers: when its turn clock (turn_time) runs out its own
    node plays the bot's move, says so, and the game finishes; nobody is blamed."""
    # showdown_time 0: the clock of a first move after a showdown starts at once (see below);
    # any hand may close from the second round: each of Bruno's moves waits out his 1 s clock,
    # so a hand of clean closes only took 31 s of his clocks (now 4 s)
    rules = make_rules("classic", {"limit": 5, "reentries": 0, "turn_time": 1, "showdown_time": 0,
                                   "close_max_points": 1000, "close_max_unmatched": 7})
    notices: list[str] = []
    statuses: list[NodeStatus] = []
    person = lambda view, need: Agree() if need == "agree" else None  # noqa: E731 - then silent
    specs = [SeatSpec("Ana"), SeatSpec("Bruno", decide=person, on_notice=notices.append,
                                       on_status=statuses.append), SeatSpec("Carla")]
    results = await play_local(rules, specs, seed=7, proof_rounds=K, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=30.0))
    assert all(r.fault is None and r.winner is not None for r in results), [r.fault for r in results]
    assert any(n.startswith("time is up: the bot plays for you") for n in notices)
    assert any(s.wait is not None and s.wait.mine and s.wait.left is not None for s in statuses)
    for i in range(3):
        assert audit_file(tmp_path / f"seat{i}.chn").verdict == "ok"


async def test_an_internal_error_becomes_a_signed_leave(tmp_path):
    """A bug inside one node: it leaves saying why; the two others remove it ("left") and
    finish the game without it; nobody is blamed for cheating."""
    from p2p_chinchon import table as tbl

    class Buggy(tbl.Table):
        def job_done(self, job_id, result):
            if self.flow.engine is not None:
                raise RuntimeError("boom")
            return super().job_done(job_id, result)

    rules = make_rules("classic", {"limit": 20})
    specs = [SeatSpec("Ana"), SeatSpec("Bruno", table_cls=Buggy), SeatSpec("Carla")]
    # a leave that races another seat's envelope is dropped: Bruno is then removed as absent
    results = await play_local(rules, specs, seed=9, proof_rounds=K, transcript_dir=tmp_path,
                               timeouts=Timeouts(rejoin=3))
    bruno = next(r for r in results if r.seat is not None and r.names[r.seat] == "Bruno")
    assert bruno.error == "internal error: boom"
    for r in results:
        if r is not bruno:
            assert r.fault is None and r.winner is not None and r.winner != bruno.seat, r.fault
            report = audit_file(tmp_path / f"seat{r.seat}.chn")
            assert report.verdict == "ok", report.summary()
            assert [m["seat"] for m in report.marks if m["event"] == "left"] == [bruno.seat]


async def test_proof_jobs_keep_their_decks_after_a_restock(tmp_path):
    """A shuffle proof checked late (a rejoin re-checks this hand's proofs after its replay)
    must see the decks of its own shuffle, even after a restock extended the hand's deck."""
    from p2p_chinchon import table as tbl

    tables = []

    class Keep(tbl.Table):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            tables.append(self)

    # only clean closes: hands run long and the stock is re-shuffled
    rules = make_rules("classic", {"limit": 10, "close_max_points": 0, "close_max_unmatched": 0})
    specs = [SeatSpec("Ana"), SeatSpec("Bruno", table_cls=Keep)]
    # one proof round: what is checked is which decks a late check sees, not the proof's
    # soundness (3 rounds took twice as long: a restocked game shuffles often)
    await play_local(rules, specs, seed=1, proof_rounds=1, transcript_dir=tmp_path)
    args = list(tables[0].hand.shuffle_args.values())
    assert any(a[6] > 0 for a in args), "this seed's game has a restock"
    for a in args:
        tbl._verify_shuffle(*a)  # raises DeckError if its decks were changed after the fact


def test_a_stalled_seat_asks_its_peers_for_what_follows_its_head():
    """An envelope that reached some peers only (its sender died sending it, or its link to us
    broke): a stalled node asks every connected peer for what follows its head (``S``): at once
    when the awaited seat's link is down, after SHOWN_AFTER seconds of stall otherwise (also with
    nothing buffered ahead: a CI run's table hung when the seat it waited on was killed after
    its discard reached the host only), again only after SHOWN_AFTER; never while the table
    waits for this seat's own step."""
    import trio

    from harness import Net
    from p2p_chinchon.net.node import SYNC, Node
    from p2p_chinchon.net.verdicts import SHOWN_AFTER

    class FakeMesh:
        def __init__(self):
            self.sent = []

        def send_nowait(self, seat, payload):
            self.sent.append((seat, payload))
            return True

    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    t = net.tables[0]
    n = len(t.chain.frames)
    awaited = step_of(t)
    assert awaited.seat != t.lobby.me
    ask = sorted((s, SYNC + n.to_bytes(4, "big")) for s in (1, 2))

    def node_for() -> Node:
        node = Node(t)
        node._mesh = FakeMesh()  # type: ignore[assignment]  # a stand-in: records what is sent
        node.presence.up = {1, 2}
        return node

    async def tick(node, stalled: float, *, buffered: bool = False, step=awaited, later: float = 0.0) -> list:
        t.chain.buffer = {n + 1: {1: b"x"}} if buffered else {}
        now = trio.current_time() + later
        node.clock.step_since = now - stalled
        node._mesh.sent.clear()
        await node._fill_gap(now, step)
        return sorted(node._mesh.sent)

    async def main():
        node = node_for()
        assert await tick(node, SHOWN_AFTER / 4) == []  # a step moving along: nothing to ask
        assert await tick(node, SHOWN_AFTER + 1) == ask  # stalled, nothing buffered: ask
        assert await tick(node, SHOWN_AFTER + 1) == []  # not again at once
        assert await tick(node, SHOWN_AFTER + 1, later=SHOWN_AFTER + 0.1) == ask  # again later
        assert await tick(node, SHOWN_AFTER + 1, buffered=True, later=SHOWN_AFTER + 0.1) == ask  # news
        assert t.lobby.me is not None
        mine = type(awaited)(awaited.kind, t.lobby.me)
        assert await tick(node_for(), 60.0, step=mine) == []  # we are awaited: nobody is ahead
        assert await tick(node_for(), 60.0, step=mine, buffered=True) == ask  # unless buffered
        node = node_for()
        node.presence.up.discard(awaited.seat)  # the awaited seat's link is down: ask at once
        assert await tick(node, 0.0) == [(s, SYNC + n.to_bytes(4, "big")) for s in (1, 2) if s != awaited.seat]

    trio.run(main)


async def test_an_envelope_lost_on_one_link_reaches_the_seat_through_another(tmp_path, monkeypatch):
    """Carla's discard reaches Bruno only (her link to Ana, the next to play, broke as it was
    sent), with nothing after it for Ana to buffer: Ana asks the others for what follows her
    head, gets the discard from Bruno, and the game ends normally, every transcript the same.
    Before, Ana waited for a discard Carla believed delivered until the protocol timeout
    blamed Carla; with Carla killed there instead (a CI run), the table hung: Bruno was
    waited for, and he waited for Carla's removal."""
    from p2p_chinchon import wire
    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.local import SeatSpec, play_local
    from p2p_chinchon.net.mesh import Mesh
    from p2p_chinchon.net.node import ENVELOPE, Timeouts

    lost: list[int] = []
    broadcast = Mesh.broadcast

    async def lossy(self, payload):
        if self.seat == 2 and not lost and payload[:1] == ENVELOPE:
            env = wire.decode_envelope(payload[1:])
            if env.kind == "discard":
                lost.append(env.seq)
                return frozenset(s for s in (1,) if self.send_nowait(s, payload))
        return await broadcast(self, payload)

    monkeypatch.setattr(Mesh, "broadcast", lossy)
    rules = make_rules("classic", {"limit": 10})
    specs = [SeatSpec("Ana"), SeatSpec("Bruno"), SeatSpec("Carla")]
    results = await play_local(rules, specs, seed=5, proof_rounds=3, transcript_dir=tmp_path,
                               timeouts=Timeouts(protocol=30.0))
    assert lost, "Carla discarded"
    assert all(r.fault is None for r in results), [r.fault for r in results]
    data = [(tmp_path / f"seat{i}.chn").read_bytes() for i in range(3)]
    assert data[0] == data[1] == data[2]


def test_a_decision_clock_starts_when_the_showdown_is_put_away():
    """The turn clock of a person's first move after a hand was scored starts once the
    showdown the screen holds (``showdown_time``) is over: run under the held showdown, it
    would cost a person reading the scores half the move clock, or the whole of it and the
    bot would move for them. The others' clock for that seat counts from the same moment."""
    from harness import Net
    from p2p_chinchon.net.node import Node

    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    step = step_of(net.tables[0])
    mine, theirs = Node(net.tables[step.seat]), Node(net.tables[(step.seat + 1) % 3])
    rules = rules_of(net.tables[0])
    turn, shown = rules.turn_time, rules.showdown_time
    assert turn > 0 and shown > 0
    now = 1000.0
    for node in (mine, theirs):
        node.clock.step_since = now
    theirs.presence.heard = {step.seat: now}  # connected: not an absence
    assert mine._deadline(step, now).left == turn  # no hand scored yet: the clock as it was
    for node in (mine, theirs):
        node.clock.scored = (1, now - 5)  # a hand was scored 5 s ago: its showdown is on screen
    # the clock waits at its full value while the showdown is up (never more),
    # then runs from the moment the showdown goes
    assert mine._deadline(step, now).left == turn
    assert mine._deadline(step, now + shown - 5 + 10).left == turn - 10
    assert theirs._deadline(step, now).left == shown - 5 + turn + theirs.timeouts.protocol
    assert theirs._deadline(step, now).shown == turn
    for node in (mine, theirs):
        node.clock.scored = (1, now - shown - 10)  # long put away: the clock runs from the step
    assert mine._deadline(step, now).left == turn


def test_the_others_see_the_movers_own_clock_not_their_grace():
    """Another seat's move shows the time until that seat's own turn clock plays for it (what
    happens next), not this node's later limit (turn clock plus the protocol's grace): a
    screen said 1:33 while the mover's own screen said 0:03."""
    from harness import Net
    from p2p_chinchon.net.node import Node

    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    step = step_of(net.tables[0])
    theirs = Node(net.tables[(step.seat + 1) % 3])
    turn = rules_of(net.tables[0]).turn_time
    now = 1000.0
    theirs.clock.step_since, theirs.presence.heard = now - turn + 3, {step.seat: now}
    w = theirs._deadline(step, now)
    assert w.shown == 3 and w.left == 3 + theirs.timeouts.protocol
    assert NodeStatus((), w).text().endswith("(0:03)")
    theirs.clock.step_since = now - turn - 10  # its clock ran out: the grace is what is left
    w = theirs._deadline(step, now)
    assert w.shown is None and w.left is not None and NodeStatus((), w).text().endswith(f"({clock(w.left)})")


def test_a_bot_console_prints_stalls_and_absences_not_every_move(capsys):
    """``--no-ui``: the seat's log already prints every move; its status lines ("waiting for
    Bruno to draw", "your turn to draw") were 1,351 lines of one game. Absences and stalled
    protocol steps are still news."""
    from p2p_chinchon.commands._common import SeatGlue

    glue = SeatGlue(None, bot=True, printer=print, live=False)
    events = glue.events()
    here = (SeatPresence(1, "Bruno", True), SeatPresence(2, "Carla", True))
    events.status(NodeStatus(here, Wait(1, "Bruno", "draw", 150.0)))
    events.status(NodeStatus(here, Wait(0, "Ana", "discard", 60.0, mine=True)))
    assert capsys.readouterr().err == ""
    away = (SeatPresence(1, "Bruno", True), SeatPresence(2, "Carla", False, away=4.0))
    events.status(NodeStatus(away, Wait(2, "Carla", "draw", 116.0, absent=True)))
    events.status(NodeStatus(here, Wait(2, "Carla", "deal_shares", 80.0)))
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "Carla" in err[0] and "deal shares" in err[1]


@pytest.mark.parametrize("kind", ["draw_share", "shuffle", "key_share"])
@pytest.mark.parametrize("back", [91.0, 100.0, 119.0])
def test_a_seat_back_inside_rejoin_wait_gets_a_fresh_protocol_limit(kind, back):
    """One clock per absent seat: a seat that went away when it came to owe ``kind``
    and is heard again ``back`` seconds later (past the 90 s protocol limit, inside the 120 s
    ``rejoin_wait``) gets the whole protocol limit from its return. Before, it got what was
    left of the step's own limit: nothing, and a ``timeout`` within 0.2 s of "is back"."""
    from harness import Net
    from p2p_chinchon import table as tbl
    from p2p_chinchon.net.node import Node

    net = Net(3, seed=2)
    assert net.run(net.expects("draw"))
    me = net.tables[0]
    seat = 1
    node = Node(me, timeouts=Timeouts(protocol=90.0, rejoin=120.0))
    now = 5000.0
    node.clock.step_since = now - back
    node.presence.heard = {seat: now}
    node.presence.returned_at = {seat: now - 0.2}
    w = node._deadline(tbl.Step(kind, seat), now)
    assert not w.absent and w.left == pytest.approx(90.0 - 0.2)
    node.presence.returned_at = {}  # never away: the step's own clock, which ran out
    left = node._deadline(tbl.Step(kind, seat), now).left
    assert left is not None and left < 0


def test_a_seat_that_reaches_only_a_minority_says_the_others_may_go_on_without_it():
    """Five seats cut into three and two, past ``rejoin_wait``: on the two's side the seats out
    of reach are a majority of the table, so its screen says that if they are together they
    remove it and play on (not "needs 3 votes, 2 so far", as if they could come), and when its
    ``stall_limit`` runs out it stops saying so. Where those out of reach are not a majority,
    the votes are counted as before."""

    from harness import Net
    from p2p_chinchon.net.node import Node
    from p2p_chinchon.net.status import NodeStatus
    from p2p_chinchon.net.verdicts import halt_reason

    net = Net(5, seed=3)
    assert net.run(lambda n: n.expects("draw")(n) and step_of(n.tables[0]).seat in (0, 1, 2))

    def wait_at(me: int, reach: set[int]):
        t = net.tables[me]
        node = Node(t)
        now = 10_000.0
        node.presence.up = set(reach)
        node.presence.heard = {s: now if s in reach else 0.0 for s in range(5) if s != me}
        node.presence.away_since = {s: 1.0 for s in range(5) if s != me and s not in reach}
        node.clock.step_since = now - 5000
        return node, node._deadline(step_of(t), now)

    awaited = step_of(net.tables[0]).seat
    node, w = wait_at(3, {4})
    assert w is not None and w.note == "minority" and w.seat == awaited, w
    text = NodeStatus((), w).text()
    assert "out of reach are a majority of the table: if they are together, they remove you" in text, text
    assert "were a majority of the table" in halt_reason(w, float(node.table.lobby.rules.stall_limit))
    x = min({0, 1, 2} - {awaited})  # three {3, 4, x}, out of reach the awaited seat and one more
    _, w = wait_at(3, {4, x})
    assert w is not None and w.note == "votes" and w.seat == awaited, w
    assert "players' votes" in NodeStatus((), w).text()


# ---------------------------------------------------------------- the Presence machine, with numbers
# (p2p_chinchon/net/presence.py: no node, no trio; ``now`` is any monotonic clock's seconds)

T0 = 1000.0
OTHERS = [1, 2, 3]  # seat 0 is ours


def _linked(*seats: int, at: float = T0):
    """A Presence whose links to ``seats`` came up at ``at`` (each heard then)."""
    from p2p_chinchon.net.presence import Presence

    p = Presence()
    for s in seats:
        p.link_up(s, at)
    assert p.update(at, OTHERS, (), 10) == []
    return p


def test_a_silent_seat_is_away_since_its_last_sign_of_life_a_cut_one_since_the_cut():
    from p2p_chinchon.net.presence import SILENT_AFTER

    p = _linked(1, 2)
    assert p.present(1, T0 + SILENT_AFTER - 0.1) and not p.present(1, T0 + SILENT_AFTER)
    p.hear(2, T0 + 10)
    p.update(T0 + 10, OTHERS, (), 10)
    # link up but silent: away since it was last heard plus SILENT_AFTER, not since we noticed
    assert p.away_since == {1: T0 + SILENT_AFTER}
    assert 3 not in p.away_since, "a seat never heard is connecting, not away"
    p.link_down(2)
    p.update(T0 + 11, OTHERS, (), 10)
    assert p.away_since[2] == T0 + 11, "a link that went down: away since the cut"
    p.update(T0 + 20, OTHERS, (), 10)
    assert p.away_since == {1: T0 + SILENT_AFTER, 2: T0 + 11}, "an absence keeps its start"
    assert p.past(T0 + 11 + 120, 120.0) == [1, 2] and p.past(T0 + 11 + 119, 120.0) == [1]


def test_a_seat_heard_again_is_back_with_its_return_noted():
    from p2p_chinchon.net.presence import BACK_SHOWN

    p = _linked(1, 2)
    p.link_down(1)
    p.update(T0 + 1, OTHERS, (), 10)
    assert 1 in p.away_since
    p.link_up(1, T0 + 30)
    assert p.update(T0 + 30, OTHERS, (), 10) == [1]
    assert 1 not in p.away_since and p.back_at[1] == p.returned_at[1] == T0 + 30
    assert p.update(T0 + 31, OTHERS, (), 10) == [], "back once, not every tick"
    names = ["Ana", "Bruno", "Carla", "Dani"]
    p.hear(2, T0 + 30)
    shown = {s.seat: s for s in p.shown(T0 + 30 + BACK_SHOWN - 0.5, OTHERS, names, relayed={2})}
    assert set(shown) == {1, 2}, "seat 3 was never heard: not shown"
    assert shown[1].connected and shown[1].back and not shown[1].relayed
    assert shown[2].relayed and not shown[2].back
    assert not p.shown(T0 + 30 + BACK_SHOWN, OTHERS, names)[0].back
    p.link_down(1)
    p.update(T0 + 40, OTHERS, (), 10)
    (gone,) = (s for s in p.shown(T0 + 45, OTHERS, names) if s.seat == 1)
    assert not gone.connected and gone.away == 5.0 and not gone.back and 1 not in p.back_at


def test_a_seat_present_through_another_is_not_away_until_its_word_fails():
    from p2p_chinchon.net.presence import SILENT_AFTER

    p = _linked(1, 2)
    p.link_down(1)  # Bruno's link to us is down; Carla says she hears him
    p.heartbeat(2, T0 + 1, frozenset({0, 1}))
    p.update(T0 + 1, OTHERS, (), 10)
    assert p.through(1, T0 + 1, (), 10) == 2 and 1 not in p.away_since
    assert p.through(1, T0 + 1, {2}, 10) is None, "a seat that left vouches for nobody"
    assert p.through(1, T0 + 1 + SILENT_AFTER, (), 10) is None, "her word is old"
    assert p.fresh_hears(T0 + 1) == [(2, frozenset({0, 1}))] and p.fresh_hears(T0 + 1 + SILENT_AFTER) == []
    p.spent(1, 10)  # awaited past its limit at this chain length: away, whatever she says
    p.update(T0 + 2, OTHERS, (), 10)
    assert p.away_since[1] == T0 + 2
    assert p.through(1, T0 + 2, (), 11) == 2, "at a longer chain her word counts again"
    p.link_down(2)  # Carla herself gone: she vouches for nobody
    assert p.through(1, T0 + 2, (), 11) is None


def test_a_listening_node_counts_no_absence_and_plays_on_with_the_silent_seats_away_from_then():
    p = _linked(1, 2)
    p.link_down(1)
    p.update(T0 + 1, OTHERS, (), 10)
    p.listen(T0 + 100, "listening")
    assert p.listening == T0 + 100 and p.listen_note == "listening"
    assert p.away_since == {} and p.back_at == {}, "every seat is unknown, not away"
    p.update(T0 + 110, OTHERS, (), 10)
    assert p.away_since == {}, "no absence counted while listening"
    p.hear(2, T0 + 115)
    assert p.update(T0 + 115, OTHERS, (), 10) == []
    p.play_on(T0 + 117, OTHERS)
    assert p.listening is None
    assert p.away_since == {1: T0 + 117, 3: T0 + 117}, "rejoin_wait starts now for the seats not present"


def test_the_clocks_snapshot_reads_the_machine():
    p = _linked(1, 2)
    p.link_down(2)
    p.update(T0 + 1, OTHERS, (), 10)
    seen = p.seen(T0 + 1, [1, 2, 3], OTHERS)
    assert seen.present == frozenset({1}) and set(seen.heard) == {1, 2}
    assert seen.away_since == {2: T0 + 1} and seen.others == OTHERS
