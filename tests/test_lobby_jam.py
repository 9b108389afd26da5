"""A lobby nobody can jam. The real host_lobby/join_lobby over TLS on loopback, with
several loopback source addresses (127.0.0.5 stands for one LAN neighbour; the lobby limits
loopback like any address here, ``limit_loopback``).

1. Ghost seats: a joiner that answers ``sit`` and resets its connection is unseated at once
   (also when the host's person says yes after it left); ghosts do not count against the
   per-address limit.
2. Prompts: at most 2 per free seat wait, the rest are refused with a reason; a prompt whose
   joiner left is withdrawn; "refuse everyone from this address"; a prompt expires.
3. zeroconf raising ``EventLoopBlocked`` while the advertisement is withdrawn costs one logged
   line, and the table starts.
4. With approval, the person decides: three joiners from one address sit.
"""

from __future__ import annotations

import logging
import os
import socket
import struct
from functools import partial
from typing import Any

import pytest
import trio

from harness.lobby import host_table
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import lobby as lob, node as nd
from p2p_chinchon.net.framing import encode_frame

GHOST = "127.0.0.5"


class Notes:
    """The host's one-line notices (host_lobby's ``notice``), and a way to wait for one."""

    def __init__(self) -> None:
        self.said: list[tuple[str, str]] = []
        self._changed = trio.Event()

    def __call__(self, text: str, key: str, fields: dict[str, Any]) -> None:
        self.said.append((key, text))
        self._changed.set()
        self._changed = trio.Event()

    def count(self, key: str) -> int:
        return sum(1 for k, _ in self.said if k == key)

    async def wait(self, key: str, n: int = 1) -> None:
        while self.count(key) < n:
            await self._changed.wait()


async def open_host(nursery: trio.Nursery, seats: int, **kw: Any) -> tuple[Any, int, Identity]:
    host_id = Identity.generate()
    table = host_table(seats, host_id)
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    nursery.start_soon(partial(nd.host_lobby, table, listeners, seats=seats, limit_loopback=True, **kw))
    return table, port, host_id


async def sit(port: int, source: str, name: str = "Ghost") -> lob.Link:
    """A joiner that accepts the offer and answers ``sit``; returns its open link."""
    link, _ = await lob.connect_lobby("127.0.0.1", port, Identity.generate(), name=name,
                                      listen_addr="127.0.0.1:4000", local_address=source)
    await lob.read_answer(link, "offer", bytes, closed="refused")
    await link.send(b"sit")
    return link


async def ghost(port: int, source: str = GHOST) -> None:
    """Answer ``sit`` and reset the TCP connection in one step: the "sit" record and the RST
    leave together, so the host reads "sit" from a connection already reset and its
    ``{"seat"}`` fails (the path that must not keep the seat for ever)."""
    link, _ = await lob.connect_lobby("127.0.0.1", port, Identity.generate(), name="Ghost",
                                      listen_addr="127.0.0.1:4000", local_address=source)
    await lob.read_answer(link, "offer", bytes, closed="refused")
    tls = link.stream
    assert isinstance(tls, trio.SSLStream)
    tls._ssl_object.write(encode_frame(b"sit"))  # no await: nothing runs between write and reset
    sock = tls.transport_stream.socket
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    os.write(sock.fileno(), tls._outgoing.read())
    sock.close()


async def join(port: int, host_id: Identity, name: str, source: str, **kw: Any) -> tuple[bytes, bytes]:
    return await nd.join_lobby(Identity.generate(), "127.0.0.1", port, name=name, listen_port=4000,
                               expect_fingerprint=host_id.fingerprint, local_address=source, **kw)


async def test_resetting_ghosts_leave_no_seat_at_an_open_table() -> None:
    """Three ghosts from one address against an open 4-seat table: each is unseated and the
    host told; then two real joiners from that same address (the ghosts hold no slot of its
    limit of 2) and one from another sit, and the seating is signed with them."""
    notes = Notes()
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            table, port, host_id = await open_host(nursery, 4, notice=notes)
            for _ in range(3):
                await ghost(port)
            await notes.wait("lobby_left_early", 3)
            assert [p.name for p in table.lobby.pending_players] == ["Ana"]
            seatings: list[bytes] = []
            async with trio.open_nursery() as joiners:
                for name, source in (("Bruno", GHOST), ("Carla", GHOST), ("Diego", "127.0.0.6")):
                    async def one(name: str = name, source: str = source) -> None:
                        seatings.append((await join(port, host_id, name, source))[1])
                    joiners.start_soon(one)
    assert sorted(p.name for p in table.lobby.players) == ["Ana", "Bruno", "Carla", "Diego"]
    assert seatings == [table.chain.frames[1]] * 3
    assert ("lobby_left_early", "Ghost left before sitting down") in notes.said


async def test_a_ghost_approved_after_it_left_frees_its_seat() -> None:
    """The host's person says yes just as the joiner's link closes (the answer cannot be
    withdrawn any more): the ghost is unseated at once, the host is told, and a real joiner
    fills the table."""
    notes = Notes()
    asked: list[str] = []
    gone = trio.Event()

    async def approve(request: lob.JoinRequest, ip: str, **_: Any) -> bool:
        asked.append(request.name)
        if request.name == "Ghost":
            with trio.CancelScope(shield=True):  # the "yes" already typed
                await gone.wait()
        return True

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            table, port, host_id = await open_host(nursery, 2, approve=approve, notice=notes)
            await ghost(port)
            while asked != ["Ghost"]:
                await trio.sleep(0.01)
            gone.set()
            await notes.wait("lobby_left_early")
            assert [p.name for p in table.lobby.pending_players] == ["Ana"]
            offer, seating = await join(port, host_id, "Bruno", "127.0.0.6")
    assert [p.name for p in table.lobby.players] == ["Ana", "Bruno"] and seating == table.chain.frames[1]
    assert notes.said[0] == ("lobby_left_early", "Ghost left before sitting down")


async def test_a_flood_of_prompts_cannot_bury_the_real_joiner() -> None:
    """50 addresses x 2 requests, all named "Alice", at a 4-seat table (3 free seats): 6
    wait, the other 94 are refused with a reason at once. The person refuses the first
    address with one key (its second request goes too); when the flood leaves, its prompts
    are withdrawn (the one on screen included), and the real Alice is the next one asked."""
    asked: list[tuple[str, str, int]] = []
    withdrawn: list[str] = []
    answer: trio.MemorySendChannel[bool | str]
    answer, answers = trio.open_memory_channel[bool | str](1)

    async def approve(request: lob.JoinRequest, ip: str, *, came: int, queued: int) -> bool | str:
        asked.append((request.name, ip, queued))
        try:
            return await answers.receive()
        except trio.Cancelled:
            withdrawn.append(ip)
            raise

    refusals: list[tuple[str, str]] = []

    async def flooder(source: str) -> None:
        async with await sit(port, source, name="Alice") as link:  # closed when the flood leaves
            try:
                await lob.read_answer(link, "seat", int, closed="closed")
            except lob.Refused as exc:
                refusals.append((source, str(exc)))

    sources = [f"127.0.1.{i + 1}" for i in range(50) for _ in range(2)]
    with trio.fail_after(20):
        async with trio.open_nursery() as nursery:
            table, port, host_id = await open_host(nursery, 4, approve=approve)
            async with trio.open_nursery() as flood:
                for source in sources:
                    flood.start_soon(flooder, source)
                while len(refusals) < 94:
                    await trio.sleep(0.01)
                busy = "too many people are waiting for the host's answer: try again later"
                assert [why for _, why in refusals] == [busy] * 94
                first_ip = asked[0][1]
                assert asked == [("Alice", first_ip, 0)]  # asked at once: nobody waited yet
                waiting = list(sources)
                for source, _ in refusals:
                    waiting.remove(source)
                same = waiting.count(first_ip)  # 1 or 2: it, and maybe its address's other
                await answer.send(lob.REFUSE_ADDRESS)
                while len(refusals) < 94 + same:
                    await trio.sleep(0.01)
                assert refusals[94:] == [(first_ip, "the host refuses joiners from your address")] * same
                while len(asked) < 2:  # the next flood prompt is on screen
                    await trio.sleep(0.01)
                flood.cancel_scope.cancel()  # the flood leaves
            while len(withdrawn) < 1:
                await trio.sleep(0.01)
            # the second question said how many more waited: 6, less the refused, less itself
            assert len(asked) == 2 and asked[1][2] == 6 - same - 1 and withdrawn == [asked[1][1]]
            nursery.start_soon(join, port, host_id, "Alice", "127.0.0.9")
            while len(asked) < 3:
                await trio.sleep(0.01)
            assert asked[2] == ("Alice", "127.0.0.9", 0)  # the next one asked, nobody behind
            await answer.send(True)
            while len(table.lobby.pending_players) < 2:  # she sits (and waits for two more)
                await trio.sleep(0.01)
            assert [p.name for p in table.lobby.pending_players] == ["Ana", "Alice"]
            nursery.cancel_scope.cancel()


async def test_an_unanswered_prompt_expires_and_the_joiner_is_told() -> None:
    """Nobody answers: after the joiner's patience (here 0.2 s) the question is withdrawn,
    the joiner hears why, the host is told, and the seat stays free."""
    notes = Notes()
    withdrawn = trio.Event()

    async def approve(request: lob.JoinRequest, ip: str, **_: Any) -> bool:
        try:
            await trio.sleep_forever()
        finally:
            withdrawn.set()

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            table, port, host_id = await open_host(nursery, 2, approve=approve, notice=notes, approval_wait=0.2)
            with pytest.raises(lob.Refused, match="did not answer within 0.2 s"):
                await join(port, host_id, "Bruno", "127.0.0.6", approval_wait=0.2)
            assert withdrawn.is_set() and notes.count("lobby_prompt_expired") == 1
            assert [p.name for p in table.lobby.pending_players] == ["Ana"]
            nursery.cancel_scope.cancel()


async def test_three_approved_joiners_from_one_address_sit() -> None:
    """A household behind one router: with approval the per-address limit does not refuse
    the third; the question says how many already sit from that address."""
    came: list[int] = []

    async def approve(request: lob.JoinRequest, ip: str, **kw: Any) -> bool:
        came.append(kw["came"])
        return True

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            table, port, host_id = await open_host(nursery, 4, approve=approve)
            async with trio.open_nursery() as joiners:
                for name in ("Bruno", "Carla", "Diego"):
                    joiners.start_soon(join, port, host_id, name, GHOST)
    assert sorted(p.name for p in table.lobby.players) == ["Ana", "Bruno", "Carla", "Diego"]
    assert sorted(came) == [0, 1, 2]


async def test_zeroconf_blocked_on_close_costs_one_line(monkeypatch: pytest.MonkeyPatch,
                                                        caplog: pytest.LogCaptureFixture) -> None:
    """zeroconf raises EventLoopBlocked from unregister_all_services while the table's ad is
    withdrawn (the table just filled): one warning, zeroconf still closed, and the host goes
    on to the table (the seating reached the joiner; the node starts)."""
    from zeroconf import EventLoopBlocked

    from p2p_chinchon.engine import make_rules
    from p2p_chinchon.net import discovery
    from p2p_chinchon.net.session import HostConfig, host_game
    from p2p_chinchon.rng import SeededRng

    class BlockedZeroconf:
        """Registers nothing; its goodbyes block, as a busy zeroconf loop's do."""

        closed = False

        def register_service(self, info: Any, **_: Any) -> None:
            pass

        def update_service(self, info: Any) -> None:
            pass

        def unregister_all_services(self) -> None:
            raise EventLoopBlocked

        def close(self) -> None:
            self.unregister_all_services()
            self.closed = True

    made: list[BlockedZeroconf] = []

    def new_zeroconf(interfaces: Any) -> Any:
        if made:
            raise OSError("no mDNS for the seat in this test")
        made.append(BlockedZeroconf())
        return made[0]

    monkeypatch.setattr(discovery, "_new_zeroconf", new_zeroconf)
    monkeypatch.setattr(discovery, "local_addresses", lambda: ["127.0.0.1"])
    caplog.set_level(logging.WARNING)
    host_id, bruno = Identity.generate(), Identity.generate()
    node_started = trio.Event()

    class Events(nd.Events):
        def node_ready(self, node: Any) -> None:
            node_started.set()

    sock = socket.create_server(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = HostConfig(identity=host_id, rng=SeededRng("h"), player_name="Ana", bind="127.0.0.1",
                        rules=make_rules("classic", {}), seats=2, name="Mesa", proof_rounds=4,
                        advertise=True, sockets=[sock])
    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host_game, config, Events())
            offer, seating = await nd.join_lobby(bruno, "127.0.0.1", port, name="Bruno", listen_port=4000,
                                                 expect_fingerprint=host_id.fingerprint, wait=10)
            await node_started.wait()
            nursery.cancel_scope.cancel()
    assert made and made[0].closed
    lines = [r.getMessage() for r in caplog.records if "goodbye" in r.getMessage()]
    assert len(lines) == 1 and "no goodbye sent" in lines[0], lines


async def test_block_on_a_joiner_through_the_relay_refuses_that_joiner_only() -> None:
    """Every code-word joiner reaches the host's lobby from the transit relay: ``b`` on one of
    them refuses it alone, and the next one through the relay is still asked."""
    asked: list[str] = []

    async def ask(request: lob.JoinRequest, ip: str, *, came: int, queued: int) -> bool | str:
        asked.append(request.name)
        return lob.REFUSE_ADDRESS if request.name == "Mallory" else True

    prompts = lob.PromptQueue(ask, cap=lambda: 4)

    def request(name: str) -> lob.JoinRequest:
        return lob.JoinRequest(name=name, public_key=bytes(32), listen_addr="127.0.0.1:1", signature=bytes(64))

    assert await prompts.decide(request("Mallory"), lob.RELAYED) == ("no", "the host did not let you sit down")
    assert await prompts.decide(request("Bruno"), lob.RELAYED) == ("yes", None)
    assert asked == ["Mallory", "Bruno"] and not prompts.refused_ips
    # from a real address, the same key refuses that address from then on
    assert (await prompts.decide(request("Mallory"), "10.0.0.7"))[0] == "address"
    assert (await prompts.decide(request("Carla"), "10.0.0.7"))[0] == "address" and asked[-1] == "Mallory"


def test_requests_that_come_back_at_once_are_throttled() -> None:
    """Approval requests that come back at once are throttled like a wrong code word: after a
    question that expired or was withdrawn (its joiner left), that address is refused at once
    ("try again in N s") for ASK_EVERY s without asking the host's person; after the person's
    "no", that key from that address. Another joiner from the address of a refused one, other
    addresses, and the relay's (by key only) are asked as usual. Explicit times (MockClock)."""
    import trio.testing

    asked: list[str] = []

    async def ask(request: lob.JoinRequest, ip: str, *, came: int, queued: int) -> bool | str:
        asked.append(request.name)
        if request.name == "Eve":
            await trio.sleep_forever()  # nobody answers: it expires, or its joiner leaves
        return request.name != "Mallory"

    def request(name: str) -> lob.JoinRequest:
        return lob.JoinRequest(name=name, public_key=name.encode().ljust(32, b"."), listen_addr="127.0.0.1:1",
                               signature=bytes(64))

    async def main() -> None:
        prompts = lob.PromptQueue(ask, cap=lambda: 4, wait=30.0)
        assert (await prompts.decide(request("Mallory"), "10.0.0.7"))[0] == "no"
        why, text = await prompts.decide(request("Mallory"), "10.0.0.7")
        assert why == "again" and text is not None and "try again in 60 s" in text
        assert (await prompts.decide(request("Bruno"), "10.0.0.7"))[0] == "yes", "another key, same address"
        assert (await prompts.decide(request("Mallory"), lob.RELAYED))[0] == "no", "another address: asked"
        assert (await prompts.decide(request("Mallory"), lob.RELAYED))[0] == "again", "by key at the relay"
        await trio.sleep(lob.ASK_EVERY)
        assert (await prompts.decide(request("Mallory"), "10.0.0.7"))[0] == "no", "a minute later: asked"
        with trio.move_on_after(1.0):  # Eve leaves while the person is asked
            await prompts.decide(request("Eve"), "10.0.0.9")
        assert (await prompts.decide(request("Carla"), "10.0.0.9"))[0] == "again", "the whole address"
        assert (await prompts.decide(request("Carla"), lob.RELAYED))[0] == "yes"
        assert (await prompts.decide(request("Eve"), "10.0.0.10"))[0] == "expired"
        await trio.sleep(lob.ASK_EVERY - 1)
        assert (await prompts.decide(request("Dora"), "10.0.0.10"))[0] == "again"
        await trio.sleep(1.0)
        assert (await prompts.decide(request("Dora"), "10.0.0.10"))[0] == "yes"

    trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    assert asked == ["Mallory", "Bruno", "Mallory", "Mallory", "Eve", "Carla", "Eve", "Dora"]
