"""The lobby shows the table as it fills (docs/protocol.md "Lobby updates").

The host pushes ``{"lobby": [{name, key}, ...]}`` to every seated joiner whenever a seat is
taken or freed; the joiner's table shows those seats (provisional, display only) until the
signed seating replaces them. Over loopback TLS with the real ``host_lobby``/``join_lobby``.
"""

from __future__ import annotations

from functools import partial

import msgpack
import pytest
import trio

from harness.lobby import Frames, host_table
from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.i18n import Translator
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import lobby as lob, node as nd
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.ui.screen import TableScreen, must_agree


async def open_lobby(nursery: trio.Nursery, table: tbl.Table, seats: int) -> int:
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    nursery.start_soon(lambda: nd.host_lobby(table, listeners, seats=seats))
    return port


async def test_the_first_joiner_sees_the_second_arrive_and_leave() -> None:
    """Four seats: Beto sits and sees Ana and himself; Carla sits (Beto sees her) and leaves
    (Beto sees her seat free again); Dora and Eli fill the table; then the signed seating."""
    host_id = Identity.generate()
    beto, carla, dora, eli = (Identity.generate() for _ in range(4))
    table = host_table(4, host_id)
    seen: list[list[str]] = []
    arrived = trio.Event()

    def on_lobby(players: tuple[tuple[str, bytes], ...]) -> None:
        seen.append([name for name, _ in players])
        if [key for _, key in players] == [host_id.public_bytes, beto.public_bytes]:
            arrived.set()

    async def update_count(n: int) -> None:
        while len(seen) < n:
            await trio.sleep(0.01)

    async def join(ident: Identity, name: str, port: int, **kw: object) -> tuple[bytes, bytes]:
        return await nd.join_lobby(ident, "127.0.0.1", port, name=name, listen_port=4000,
                                   expect_fingerprint=host_id.fingerprint, **kw)  # type: ignore[arg-type]

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            port = await open_lobby(nursery, table, 4)
            result: list[tuple[bytes, bytes]] = []

            async def beto_joins() -> None:
                result.append(await join(beto, "Beto", port, on_lobby=on_lobby))

            nursery.start_soon(beto_joins)
            await arrived.wait()
            async with trio.open_nursery() as carla_scope:  # Carla sits, then leaves
                carla_scope.start_soon(join, carla, "Carla", port)
                await update_count(2)
                carla_scope.cancel_scope.cancel()
            await update_count(3)
            dora_task = trio.Event()

            async def dora_joins() -> None:
                await join(dora, "Dora", port)
                dora_task.set()

            nursery.start_soon(dora_joins)
            await update_count(4)
            await join(eli, "Eli", port)
            await dora_task.wait()
    assert seen == [["Ana", "Beto"], ["Ana", "Beto", "Carla"], ["Ana", "Beto"], ["Ana", "Beto", "Dora"],
                    ["Ana", "Beto", "Dora", "Eli"]]
    assert result[0] == (table.chain.frames[0], table.chain.frames[1])
    assert [p.name for p in table.lobby.players] == ["Ana", "Beto", "Dora", "Eli"]


async def test_a_two_seat_table_sends_no_lobby_update() -> None:
    """The joiner's own arrival fills the table: the seating follows at once, so the lobby
    conversation stays join request, offer, sit, seat, seating (the ``lobby-join`` vector)."""
    host_id, beto = Identity.generate(), Identity.generate()
    table = host_table(2, host_id)
    seen: list[object] = []
    with trio.fail_after(30):
        async with trio.open_nursery() as nursery:
            port = await open_lobby(nursery, table, 2)
            offer, seating = await nd.join_lobby(beto, "127.0.0.1", port, name="Beto", listen_port=4000,
                                                 expect_fingerprint=host_id.fingerprint, on_lobby=seen.append)
    assert seen == [] and seating == table.chain.frames[1]


def test_joiner_view_shows_the_lobby_list_until_the_seating() -> None:
    """The joiner's table shows the host's list as provisional seats (names, whole
    fingerprints, free seats, "waiting for 2 more"), asks nobody to agree, and the signed
    seating replaces it."""
    host_id, beto = Identity.generate(), Identity.generate()
    host = host_table(4, host_id)
    host.lobby.seat_host("Beto", beto.public_bytes, "127.0.0.1:2")
    joiner = tbl.Table.joining(beto, SeededRng("j"), host.chain.frames[0], min_proof_rounds=1)
    assert joiner.view().seats == () and not joiner.view().provisional
    joiner.lobby.set_lobby_players([(p.name, p.key) for p in host.lobby.pending_players])
    for t, me in ((host, 0), (joiner, 1)):
        view = t.view()
        assert view.provisional and view.max_seats == 4 and view.me == me
        assert [(s.name, s.fingerprint) for s in view.seats] == [("Ana", host_id.fingerprint),
                                                                 ("Beto", beto.fingerprint)]
        assert not must_agree(view)
        screen = TableScreen(Translator("en"))
        screen.set_view(view)
        text = screen.render_text(80, 24)
        assert "waiting for 2 more" in text and text.count("(free seat)") == 2
        assert host_id.fingerprint in text and beto.fingerprint in text
        assert "press a" not in text.lower()
        screen.key("a")  # nothing to agree to before the seating
        assert screen.message == "There is nothing to agree to now." and screen.pending is None
    host.start()
    joiner.receive(host.chain.frames[1], 0)
    view = joiner.view()
    assert not view.provisional and view.me == 1 and must_agree(view)


@pytest.mark.parametrize("players", [
    [("Ana", b"\x01" * 32), ("Beto", b"\x02" * 32), ("Carla", b"\x03" * 32), ("Dora", b"\x04" * 32),
     ("Eli", b"\x05" * 32)],  # more players than seats
    [("Mallory", b"\x09" * 32)],  # the host is not first
])
def test_a_bad_lobby_list_is_refused_by_the_table(players: list[tuple[str, bytes]]) -> None:
    host_id = Identity.generate()
    joiner = tbl.Table.joining(Identity.generate(), SeededRng("j"), host_table(4, host_id).chain.frames[0],
                               min_proof_rounds=1)
    with pytest.raises(tbl.IntentError):
        joiner.lobby.set_lobby_players(players)


async def test_read_answer_takes_any_number_of_lobby_updates_first() -> None:
    got: list[object] = []
    frames = [msgpack.packb({"lobby": [{"name": "Ana", "key": b"\x01" * 32}]}),
              msgpack.packb({"lobby": [{"name": "Ana", "key": b"\x01" * 32}, {"name": "Beto", "key": b"\x02" * 32}]}),
              msgpack.packb({"seating": b"F1"})]
    value = await lob.read_answer(Frames(*frames), "seating", bytes, closed="x", on_lobby=got.append)  # type: ignore[arg-type]
    assert value == b"F1"
    assert got == [(("Ana", b"\x01" * 32),), (("Ana", b"\x01" * 32), ("Beto", b"\x02" * 32))]


@pytest.mark.parametrize("update", [
    [], "Ana", [{"name": "Ana"}], [{"name": "Ana", "key": b"short"}], [{"name": "", "key": b"\x01" * 32}],
    [{"name": "A\x1b[2J", "key": b"\x01" * 32}], [{"name": "Ana", "key": b"\x01" * 32, "addr": "x"}],
    [{"name": f"p{i}", "key": bytes([i]) * 32} for i in range(9)],
])
async def test_a_malformed_lobby_update_is_a_bad_answer(update: object) -> None:
    frames = [msgpack.packb({"lobby": update}), msgpack.packb({"seating": b"F1"})]
    with pytest.raises(lob.BadAnswer):
        await lob.read_answer(Frames(*frames), "seating", bytes, closed="x")  # type: ignore[arg-type]


async def test_line_mode_prints_the_seats_as_the_table_fills() -> None:
    """--lines: each change of the provisional seats prints them once, with what is missing."""
    import dataclasses
    import io

    from harness.ui_fakes import seats as fake_seats
    from p2p_chinchon import view as V
    from p2p_chinchon.ui.lines import run_line_mode_async

    two = V.SeatView(me=1, table_name="kitchen", rules=make_rules("classic", {}), seats=fake_seats((0, 0)),
                     phase=V.LOBBY, max_seats=3, provisional=True)
    three = dataclasses.replace(two, seats=fake_seats((0, 0, 0)))

    async def node(bridge) -> None:
        for view in (two, two, three):
            bridge.update(view)
            await trio.sleep(0.05)

    out = io.StringIO()
    with trio.fail_after(10):
        await run_line_mode_async(node, stdin=io.StringIO(""), stdout=out, lang="en", charset="unicode")
    text = out.getvalue()
    assert text.count("Seats 2 of 3 taken · waiting for 1 more.") == 1
    assert text.count("(free seat)") == 1 and "Every seat is taken" in text
    assert all(s.fingerprint in text for s in three.seats)


def test_the_host_key_cannot_take_a_second_seat() -> None:
    """A joiner with the host's own identity key (the same config folder on one computer)
    is refused by name, never handed seat 0, the host's, which would hang the lobby at 1/2."""
    host_id = Identity.generate()
    table = host_table(2, host_id)
    with pytest.raises(tbl.IntentError, match="host's own identity key"):
        table.lobby.seat_host("Beto", host_id.public_bytes, "127.0.0.1:2")
    assert len(table.lobby.pending_players) == 1


async def test_the_joiner_says_whom_it_waits_for_and_a_twin_of_the_host_is_refused() -> None:
    """Over loopback TLS: while the host's person is asked, the joiner has said so (never a
    silent wait); a joiner holding the host's key gets the host's refusal, not a seat, and the
    host's person is not asked about it."""
    host_id, beto = Identity.generate(), Identity.generate()
    table = host_table(3, host_id)
    asked, answer = trio.Event(), trio.Event()
    said: list[str] = []
    who: list[str] = []

    async def approve(request: lob.JoinRequest, ip: str, **_: object) -> bool:
        who.append(request.name)
        asked.set()
        await answer.wait()
        return True

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(lambda: nd.host_lobby(table, listeners, seats=3, approve=approve))
            with pytest.raises(lob.LobbyError, match="host's own identity key"):
                await nd.join_lobby(host_id, "127.0.0.1", port, name="Twin", listen_port=4001,
                                    expect_fingerprint=host_id.fingerprint)
            # the real joiner waits, and says for whom, until the host answers; it then holds
            # its seat until a third player comes (cancelled below)
            nursery.start_soon(lambda: nd.join_lobby(
                beto, "127.0.0.1", port, name="Beto", listen_port=4002,
                expect_fingerprint=host_id.fingerprint, on_waiting=lambda text, *_: said.append(text)))
            await asked.wait()
            assert said and "waiting for the host to let you sit down" in said[-1]
            assert beto.fingerprint in said[-1]  # the joiner sees what the host checks
            assert [p.name for p in table.lobby.pending_players] == ["Ana"] and who == ["Beto"]
            answer.set()
            while len(table.lobby.pending_players) < 2 or len(said) < 2:
                await trio.sleep(0.01)
            assert [p.name for p in table.lobby.pending_players] == ["Ana", "Beto"]
            # seated: the status does not say it waits for the host
            assert said[-1].startswith("seated") and beto.fingerprint in said[-1]
            nursery.cancel_scope.cancel()


async def test_each_seating_is_counted_at_its_own_moment() -> None:
    """Three joiners at once: the host's log said "Diego sat down (4/4)" and then "Carla sat
    down (4/4)" (the count read after an await, when the next had sat too); each is now
    counted when it sits: 2, 3 and 4 of 4."""
    host_id = Identity.generate()
    table = host_table(4, host_id)
    counts: list[int] = []

    def on_seated(t: tbl.Table, seat: int | None, name: str) -> None:
        counts.append(len(t.lobby.pending_players))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
            port = listeners[0].socket.getsockname()[1]
            nursery.start_soon(lambda: nd.host_lobby(table, listeners, seats=4, on_seated=on_seated))
            async with trio.open_nursery() as joiners:
                for i, name in enumerate(("Bruno", "Carla", "Diego")):
                    joiners.start_soon(partial(nd.join_lobby, Identity.generate(), "127.0.0.1", port, name=name,
                                               listen_port=4100 + i, expect_fingerprint=host_id.fingerprint))
            nursery.cancel_scope.cancel()
    assert sorted(counts) == [2, 3, 4]
