"""Code words attacked: hostile mailbox peers, hostile transit relays, strangers and cheating
seats against the code-word and relay paths. In-process (fake relays, fake mailbox sessions),
no servers: each test says what the attacker does and what must hold (no crash, a clear
line naming the source, the link retried)."""

from __future__ import annotations

import json
import logging
import re
from functools import partial
from types import SimpleNamespace
from typing import Any, cast

import pytest
import trio

from harness import free_port
from harness.relay import fake_relay, read_line, relayed_pair
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import node as nd, rendezvous as rz
from p2p_chinchon.net.relay import RelayError, meet, pair_secret
from p2p_chinchon.net.session import HostConfig
from p2p_chinchon.table import Table

FP = "MZUH-VLPY-MK6X-O3EP"
SMALL_ORDER = b"\x01" + bytes(31)  # the identity point: OpenSSL takes it as an Ed25519 key
GAME = bytes(range(16))


# --------------------------------------------------------------- mailbox messages


@pytest.mark.parametrize("body", [
    b"[" * 2000,  # nested deeper than Python's recursion limit, within 2048 bytes
    b'{"kind":"joiner","v":1,"addrs":' + b"[" * 1005 + b"]" * 1005 + b"}",
    b"[" * 1100 + b"]" * 900,
])
def test_a_deeply_nested_hello_is_a_code_error_not_a_crash(body: bytes) -> None:
    assert len(body) <= rz.MAX_HELLO
    for decode in (rz.decode_joiner_hello, rz.decode_host_hello):
        with pytest.raises(rz.CodeError):
            decode(body)


@pytest.mark.parametrize("body", [
    {"kind": "joiner", "v": True, "addrs": []},  # bool is not the version int
    {"kind": "joiner", "v": 1.0, "addrs": []},
    {"kind": "joiner", "v": 1, "addrs": ["10.0.0.1:4000"] * 10_000},  # over 2048 bytes anyway
    {"kind": "joiner", "v": 1, "addrs": [["10.0.0.1:4000"]]},
    {"kind": "joiner", "v": 1, "addrs": {"10.0.0.1:4000": 1}},
    {"kind": "joiner", "v": 1, "addrs": "10.0.0.1:4000"},
    {"kind": "joiner", "v": 1, "addrs": [7]},
    {"kind": "joiner", "v": 1, "addrs": ["\ud800:1"]},  # a lone surrogate: no UTF-8 form
    {"kind": "joiner", "v": 1, "addrs": ["h:\u0661\u0662"]},  # Arabic-Indic digits are str.isdigit()
    {"kind": "joiner", "v": 1, "addrs": ["\u001b]0;pwned\u0007:1"]},  # a terminal escape in the host's log
    {"kind": "joiner", "v": 1, "addrs": ["10.0.0.1:99999"]},
    {"kind": "joiner", "v": 1, "addrs": ["x" * 60 + ":1"]},
    {"kind": "joiner", "v": 1},
    {"kind": "host", "v": 1, "addrs": []},
])
def test_a_bad_joiner_hello_is_refused(body: dict) -> None:
    with pytest.raises(rz.CodeError):
        rz.decode_joiner_hello(json.dumps(body).encode())


@pytest.mark.parametrize("fp", [FP + "\n", FP.lower(), FP + "-AAAA", " " + FP, 7, None])
def test_a_host_hello_with_a_bad_fingerprint_is_refused(fp: object) -> None:
    body = {"kind": "host", "v": 1, "fp": fp, "addrs": [], "relay": "r.example:4001"}
    with pytest.raises(rz.CodeError, match="fingerprint"):
        rz.decode_host_hello(json.dumps(body).encode())


@pytest.mark.parametrize("relay", ["\x1b]0;x\x07:4001", "relay.example:\u0664\u0660\u0660\u0661", "r" * 70 + ":1"])
def test_a_host_hello_with_a_bad_relay_is_refused(relay: str) -> None:
    body = {"kind": "host", "v": 1, "fp": FP, "addrs": [], "relay": relay}
    with pytest.raises(rz.CodeError, match="relay"):
        rz.decode_host_hello(json.dumps(body).encode())


def test_a_host_hello_with_version_true_is_refused() -> None:
    body = {"kind": "host", "v": True, "fp": FP, "addrs": [], "relay": "r.example:4001"}
    with pytest.raises(rz.CodeError, match="version 1"):
        rz.decode_host_hello(json.dumps(body).encode())


# --------------------------------------------------------------- the host's code-word loop


class _Codes(list[str]):
    times: list[float]


class _Events(nd.Events):
    def __init__(self) -> None:
        self.notices: list[str] = []
        self.texts: list[str] = []

    def notice(self, text: str, key: str = "", fields: dict | None = None, lasting: bool = False) -> None:
        self.notices.append(key)
        self.texts.append(text)


def _lobby_table() -> Table:
    # a stand-in with only what _hand_out_codes reads: a seat still to fill
    return cast(Table, SimpleNamespace(lobby=SimpleNamespace(pending_players=[object()])))


def _fake_mailbox(monkeypatch: pytest.MonkeyPatch, answers: list) -> _Codes:
    """``mailbox.CodeSession`` replaced: session n's ``receive`` gives ``answers[n]`` (bytes)
    or raises it (an exception); past the list it waits forever. Returns the codes handed out."""
    from p2p_chinchon.net import mailbox as mb

    codes = _Codes()
    times: list[float] = []  # when each was allocated (trio's clock)

    class Session:
        @classmethod
        async def open(cls, url: str) -> Session:
            return cls()

        async def allocate(self) -> str:
            times.append(trio.current_time())
            codes.append(f"{len(codes) + 1}-ab-cd")
            return codes[-1]

        async def send(self, data: bytes) -> None:
            rz.decode_host_hello(data)

        async def receive(self) -> bytes:
            n = len(codes) - 1
            if n >= len(answers):
                await trio.sleep_forever()
            if isinstance(answers[n], BaseException):
                raise answers[n]
            return answers[n]

        async def derive(self, purpose: str) -> bytes:
            return bytes(32)

        async def close(self) -> None:
            pass

    monkeypatch.setattr(mb, "CodeSession", Session)
    codes.times = times
    return codes


def _host_config(mailbox: str = "ws://mailbox.invalid/v1") -> HostConfig:
    # a stand-in with only the fields _hand_out_codes reads
    return cast(HostConfig, SimpleNamespace(relay=f"127.0.0.1:{free_port()}", reach=(), identity=Identity.generate(),
                                            mailbox=mailbox, seats=3))


async def test_hostile_joiner_hellos_do_not_stop_the_host_handing_out_codes(
        monkeypatch: pytest.MonkeyPatch, autojump_clock: object) -> None:
    """Whoever typed the code sends junk (deeply nested JSON, a wrong kind, 10,000
    candidates, not JSON): each costs that code only; the host shows the next one."""
    from p2p_chinchon.net import session
    from p2p_chinchon.net.lobby import StreamListener

    junk = [b"[" * 2000, json.dumps({"kind": "host", "v": 1}).encode(),
            json.dumps({"kind": "joiner", "v": 1, "addrs": ["10.0.0.1:1"] * 10_000}).encode(), b"\xff\xfe"]
    codes = _fake_mailbox(monkeypatch, junk)
    events = _Events()
    table = _lobby_table()
    with trio.move_on_after(600):
        await session._hand_out_codes(_host_config(), table, StreamListener(), events, 40000)
    assert len(codes) == len(junk) + 1  # every junk message burnt its code, and a fresh one waits
    assert events.notices == ["code_word"] * (len(junk) + 1)


async def test_a_refused_joiner_is_followed_by_the_next_code_at_once(monkeypatch: pytest.MonkeyPatch,
                                                                    autojump_clock: object) -> None:
    """The host's person answers n to the friend who used a code word: the next code is shown
    at once, as after a y (not a minute later, with the used code still on show). A refusal
    of someone else (a LAN joiner) does not cut the friend's wait short."""
    from p2p_chinchon.net import session
    from p2p_chinchon.net.lobby import StreamListener

    theirs = ["10.0.0.7:41234", "192.168.1.7:41234"]
    codes = _fake_mailbox(monkeypatch, [rz.encode_joiner_hello(theirs)])
    events = _Events()
    table = _lobby_table()
    refused: list[frozenset[str]] = []

    async def host_answers() -> None:
        await trio.sleep(3)
        refused.append(frozenset({"10.0.0.9:5000"}))  # another joiner, refused meanwhile
        await trio.sleep(2)
        refused.append(frozenset(reversed(theirs)))  # n to the friend (5 s after the code was met)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host_answers)
        with trio.move_on_after(50):
            await session._hand_out_codes(_host_config(), table, StreamListener(), events, 40000, refused)
        nursery.cancel_scope.cancel()
    assert len(codes) == 2, events.notices
    assert 4.9 <= codes.times[1] - codes.times[0] <= 6, codes.times
    assert events.notices == ["code_word", "code_met", "code_word"]


async def test_wrong_codes_in_a_row_slow_the_host_down(monkeypatch: pytest.MonkeyPatch, autojump_clock: object) -> None:
    """A stranger who claims every nameplate with a wrong code (slowloris on the code flow)
    burns codes: the host must not churn them as fast as the mailbox answers, nor fill its
    screen: in 10 minutes, a bounded number of codes and notices."""
    from p2p_chinchon.net import mailbox as mb, session
    from p2p_chinchon.net.lobby import StreamListener

    codes = _fake_mailbox(monkeypatch, [mb.WrongCode("wrong code word")] * 100_000)
    events = _Events()
    table = _lobby_table()
    with trio.move_on_after(600):
        await session._hand_out_codes(_host_config(), table, StreamListener(), events, 40000)
    assert 5 <= len(codes) <= 40, len(codes)
    assert len(events.notices) <= 2 * len(codes)  # a code and a "wrong code" line each
    t = codes.times
    assert t[1] - t[0] <= 1.5  # a friend's one typo costs a second
    assert max(b - a for a, b in zip(t, t[1:], strict=False)) <= 31



async def test_a_mailbox_gone_mid_lobby_leaves_the_table_open(monkeypatch: pytest.MonkeyPatch,
                                                               autojump_clock: object) -> None:
    """The mailbox goes down after codes were handed out (friends from the LAN may be seated):
    the host says so once per try and tries again every CODE_BACKOFF_MAX s instead of closing
    the table; when it answers again a new code follows. Down at the start, it raises (one
    line and exit 1, nobody is seated yet)."""
    from p2p_chinchon.net import mailbox as mb, session
    from p2p_chinchon.net.lobby import StreamListener

    down = mb.MailboxDown("cannot reach the mailbox")
    codes = _fake_mailbox(monkeypatch, [mb.WrongCode("wrong code word"), down])
    opened = 0
    real_open = mb.CodeSession.open

    async def flaky_open(url: str) -> object:
        nonlocal opened
        opened += 1
        if 3 <= opened <= 4:  # down for two tries, then back
            raise down
        return await real_open(url)

    monkeypatch.setattr(mb.CodeSession, "open", flaky_open)
    events = _Events()
    table = _lobby_table()
    with trio.move_on_after(600):
        await session._hand_out_codes(_host_config(), table, StreamListener(), events, 40000)
    assert events.notices == ["code_word", "code_wrong", "code_word", "code_mailbox_down",
                              "code_mailbox_down", "code_mailbox_down", "code_word"], events.notices
    assert len(codes) == 3

    async def down_at_start(url: str) -> object:
        raise down

    monkeypatch.setattr(mb.CodeSession, "open", down_at_start)
    with pytest.raises(BaseException) as raised:  # through the code loop's nursery
        await session._hand_out_codes(_host_config(), table, StreamListener(), _Events(), 40000)
    group = raised.value
    assert group is down or (isinstance(group, BaseExceptionGroup) and group.subgroup(mb.MailboxDown) is not None)


async def test_a_groups_own_mailbox_is_in_the_command_the_friend_is_told(monkeypatch: pytest.MonkeyPatch,
                                                                         autojump_clock: object) -> None:
    """``host --code --mailbox URL``: the line to say names that mailbox (a friend typing only
    ``join --code WORD`` would ask the public one for a code it never saw); the public
    mailbox needs no flag."""
    from p2p_chinchon.net import session
    from p2p_chinchon.net.lobby import StreamListener

    _fake_mailbox(monkeypatch, [])
    table = _lobby_table()
    for mailbox, said in (("ws://mailbox.invalid/v1", r"join --code \d+-ab-cd --mailbox ws://mailbox\.invalid/v1;"),
                          (rz.DEFAULT_MAILBOX, r"join --code \d+-ab-cd;")):
        events = _Events()
        with trio.move_on_after(5):
            await session._hand_out_codes(_host_config(mailbox), table,
                                          StreamListener(), events, 40000)
        assert re.search(said, events.texts[0]), events.texts


# --------------------------------------------------------------- tokens and keys


def test_no_seat_can_compute_another_pairs_token() -> None:
    """Seat c knows every public key and its own secret: the token of a and b is not among
    what it can derive, for any pair order or seat numbers."""
    a, b, c = Identity.generate(), Identity.generate(), Identity.generate()
    target = rz.mesh_token(pair_secret(a, b.public_bytes), GAME, 0, 1)
    mine = {pair_secret(c, k) for k in (a.public_bytes, b.public_bytes)}
    assert all(rz.mesh_token(s, GAME, i, j) != target for s in mine for i in range(3) for j in range(3) if i != j)
    assert pair_secret(b, a.public_bytes) == pair_secret(a, b.public_bytes)


def test_a_small_order_key_has_no_token() -> None:
    with pytest.raises(ValueError, match="low-order|Curve25519"):
        pair_secret(Identity.generate(), SMALL_ORDER)


@pytest.mark.parametrize("me", [0, 1])
async def test_a_seat_with_a_small_order_key_does_not_crash_the_mesh(me: int, caplog: pytest.LogCaptureFixture) -> None:
    """A cheater seated with a small-order identity key (OpenSSL verifies its forged
    signatures): its pair has no relay token. Neither the dialler (seat 0) nor the acceptor
    (seat 1) may crash when the relay is due; the dialler names the reason."""
    from p2p_chinchon.net.mesh import MeshConfig, PeerAddr
    from p2p_chinchon.net.node import relay_plan

    ident = Identity.generate()
    keys = [ident.public_bytes, SMALL_ORDER] if me == 0 else [SMALL_ORDER, ident.public_bytes]
    # a stand-in with only the fields relay_plan reads
    table = cast(Table, SimpleNamespace(lobby=SimpleNamespace(identity=ident, game=GAME, me=me,
                                                          players=[SimpleNamespace(key=k) for k in keys])))
    plan = relay_plan(table, ("127.0.0.1", free_port()))
    plan = type(plan)(plan.host, plan.port, plan.token, after=0.05, wait=1)
    from p2p_chinchon.net.mesh import Mesh

    other = 1 - me
    listener = (await trio.open_tcp_listeners(0, host="127.0.0.1"))[0] if me == 1 else None
    mesh = Mesh(me, GAME, ident.private_key.sign, {other: PeerAddr("127.0.0.1", free_port(), SMALL_ORDER)},
                listener=listener, config=MeshConfig(backoff_min=0.02, backoff_max=0.1), relay=plan)
    caplog.set_level(logging.INFO)
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.run)
        await trio.sleep(1.5)
        if me == 0:
            trouble = dict(mesh.dial_trouble()[1])
            assert "no relay token" in trouble[f"transit relay 127.0.0.1:{plan.port}"], trouble
        await mesh.aclose()
        nursery.cancel_scope.cancel()
    assert any("no relay token" in r.getMessage() for r in caplog.records)


# --------------------------------------------------------------- hostile relays


async def _serve(handler, nursery: trio.Nursery) -> int:
    [listener] = await nursery.start(partial(trio.serve_tcp, handler, 0, host="127.0.0.1"))
    return listener.socket.getsockname()[1]


@pytest.mark.parametrize("answer, why", [
    (b"x" * 10_000, "too long"),  # a line without a newline, forever
    (b"\x16\x03\x01\x00\x05hello\n", "not ok"),  # TLS bytes instead of the line
    (b"OK\n", "not ok"),
    (b"impatient\n", "impatient"),
    (b"", "closed the connection"),
])
async def test_a_relay_that_answers_junk_is_one_clear_error(answer: bytes, why: str) -> None:
    async def relay(stream: trio.SocketStream) -> None:
        await read_line(stream)
        for i in range(0, len(answer), 7):
            await stream.send_all(answer[i:i + 7])
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        port = await _serve(relay, nursery)
        with trio.fail_after(10), pytest.raises(RelayError, match=why) as err:
            await meet("127.0.0.1", port, "ab" * 32, rz.relay_side(0), wait=5)
        assert f"127.0.0.1:{port}" in str(err.value) or why == "too long"
        nursery.cancel_scope.cancel()


async def test_a_relay_that_never_answers_times_out() -> None:
    async def relay(stream: trio.SocketStream) -> None:
        await read_line(stream)
        await trio.sleep_forever()

    async with trio.open_nursery() as nursery:
        port = await _serve(relay, nursery)
        with trio.fail_after(10), pytest.raises(trio.TooSlowError):
            await meet("127.0.0.1", port, "ab" * 32, rz.relay_side(0), wait=0.3)
        nursery.cancel_scope.cancel()


async def test_a_relay_that_pairs_us_with_a_stranger_fails_the_pin_and_the_link_is_retried(
        caplog: pytest.LogCaptureFixture) -> None:
    """The relay answers ``ok`` to each seat's first visit and pipes it to a stranger (the
    dialler meets a TLS server of another key, the acceptor a TLS client of another key);
    later visits it pairs honestly. Both refuse the stranger with a line naming the relay,
    neither crashes, and the link comes up through the relay afterwards."""
    from p2p_chinchon.net.mesh import RelayPlan
    from p2p_chinchon.net.tls import accept_tls, dial_tls

    ids, stranger = [Identity.generate(), Identity.generate()], Identity.generate()
    pairs: dict[bytes, tuple] = {}
    fooled: list[bytes] = []

    async def relay(stream: trio.SocketStream) -> None:
        line = await read_line(stream)
        side = line.split()[-1]
        if side in fooled:
            await fake_relay(pairs, stream, line)
            return
        fooled.append(side)
        await stream.send_all(b"ok\n")
        try:
            with trio.fail_after(5):
                if side == rz.relay_side(0).encode():  # the dialler: a TLS server that is not seat 1
                    await accept_tls(stream, stranger)
                else:  # the acceptor: a TLS client that is not seat 0
                    await dial_tls(stream)
        except Exception:  # noqa: BLE001 - the stranger's side may fail any way
            pass
        await trio.aclose_forcefully(stream)

    async def _honest(line: bytes, stream: trio.SocketStream) -> None:
        class Replay(trio.abc.Stream):  # the line already read, then the socket
            def __init__(self) -> None:
                self.first = line

            async def receive_some(self, max_bytes: int | None = None) -> bytes:
                if self.first:
                    data, self.first = self.first, b""
                    return data
                return await stream.receive_some(max_bytes)

            async def send_all(self, data: bytes | bytearray | memoryview) -> None:
                await stream.send_all(data)

            async def wait_send_all_might_not_block(self) -> None:
                pass

            async def aclose(self) -> None:
                await stream.aclose()

        await fake_relay(pairs, Replay())

    caplog.set_level(logging.INFO)
    async with trio.open_nursery() as nursery:
        port = await _serve(relay, nursery)
        plan = RelayPlan("127.0.0.1", port, lambda peer: "5e" * 32, after=0.2, wait=5)
        m0, m1 = await relayed_pair(nursery, plan, ids, GAME)
        await m0.aclose()
        await m1.aclose()
        nursery.cancel_scope.cancel()
    assert len(fooled) >= 2
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert any(m.startswith(f"seat 0: refused seat 1 at transit relay 127.0.0.1:{port}") for m in lines), lines
    assert any(m.startswith(f"seat 1: refused connection from the transit relay 127.0.0.1:{port}") for m in lines), lines


async def test_a_relay_that_swallows_the_acceptors_wait_does_not_hold_it_forever() -> None:
    """The relay takes the acceptor's first visit and never answers it (a connection it, or a
    home router, dropped without a word): the acceptor must come again on a fresh connection,
    and the dialler's visits then meet it."""
    from p2p_chinchon.net.mesh import RelayPlan

    ids = [Identity.generate(), Identity.generate()]
    swallowed: list[bytes] = []
    pairs: dict[bytes, tuple] = {}

    async def relay(stream: trio.SocketStream) -> None:
        line = await read_line(stream)
        if line.endswith(rz.relay_side(1).encode() + b"\n") and not swallowed:
            swallowed.append(line)
            await trio.sleep_forever()
        await fake_relay(pairs, stream, line)

    async with trio.open_nursery() as nursery:
        port = await _serve(relay, nursery)
        plan = RelayPlan("127.0.0.1", port, lambda peer: "5e" * 32, after=0.2, wait=1, accept_wait=1)
        m0, m1 = await relayed_pair(nursery, plan, ids, GAME)
        await m0.aclose()
        await m1.aclose()
        nursery.cancel_scope.cancel()
    assert swallowed


@pytest.mark.parametrize("junk", [b"", b"HTTP/1.1 400 Bad Request\r\n\r\n", b"\x16\x03\x03\x00\x02\x02\x28"])
async def test_a_host_candidate_that_is_someone_elses_service_falls_back_to_the_relay(junk: bytes) -> None:
    """The host's hello names a candidate where something else answers (another machine on
    the joiner's LAN at the same address): the joiner goes on to the relay (here a closed
    port, so RelayDown says it went there), never fails on the stranger's bytes."""
    from p2p_chinchon.net.relay import RelayDown
    from p2p_chinchon.net.session import _code_connect

    async def stranger(stream: trio.SocketStream) -> None:
        await stream.send_all(junk)
        await stream.aclose()

    async with trio.open_nursery() as nursery:
        port = await _serve(stranger, nursery)
        relay = free_port()
        with trio.fail_after(30), pytest.raises(RelayDown, match=f"127.0.0.1:{relay}"):
            await _code_connect((f"127.0.0.1:{port}",), ("127.0.0.1", relay), "ab" * 32, Identity.generate(),
                                name="Bea", listen_addr="0.0.0.0:1", candidates=(), expect_fingerprint=FP)
        nursery.cancel_scope.cancel()


@pytest.mark.parametrize("junk", [b"garbage that is not TLS at all\n" * 10, b""])
async def test_a_relay_that_says_ok_then_garbage_is_a_failed_attempt(junk: bytes) -> None:
    """The relay answers ``ok`` and then sends bytes from nobody (or hangs up): the dialling
    seat notes a failure at the relay and keeps trying; its mesh does not crash."""
    from p2p_chinchon.net.mesh import Mesh, MeshConfig, PeerAddr, RelayPlan

    visits = []

    async def relay(stream: trio.SocketStream) -> None:
        visits.append(await read_line(stream))
        await stream.send_all(b"ok\n" + junk)
        await stream.aclose()

    ids = [Identity.generate(), Identity.generate()]
    async with trio.open_nursery() as nursery:
        port = await _serve(relay, nursery)
        plan = RelayPlan("127.0.0.1", port, lambda peer: "5e" * 32, after=0.05, wait=1)
        mesh = Mesh(0, GAME, ids[0].private_key.sign, {1: PeerAddr("127.0.0.1", free_port(), ids[1].public_bytes)},
                    config=MeshConfig(backoff_min=0.02, backoff_max=0.1, handshake_timeout=2), relay=plan)
        await nursery.start(mesh.run)
        with trio.fail_after(20):
            while len(visits) < 3:
                await trio.sleep(0.05)
        trouble = dict(mesh.dial_trouble()[1])
        assert f"transit relay 127.0.0.1:{port}" in trouble, trouble
        await mesh.aclose()
        nursery.cancel_scope.cancel()


async def test_the_lobby_names_the_relay_for_junk_that_came_through_it(caplog: pytest.LogCaptureFixture) -> None:
    """A stranger the relay pairs with the host's lobby sends junk instead of TLS: refused in
    one line naming the relay (not "?"), and the lobby goes on."""
    from p2p_chinchon.net.lobby import StreamListener, serve_lobby
    from p2p_chinchon.net.relay import RelayStream

    async def on_join(request: object, link: object) -> None:
        raise AssertionError("nobody may sit down")

    listener = StreamListener()
    caplog.set_level(logging.INFO)
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(serve_lobby, listener, on_join, identity=Identity.generate(), request_timeout=5))
        for _ in range(2):
            ours, theirs = trio.socket.socketpair()
            await listener.put(RelayStream(trio.SocketStream(ours), b"", "relay.example:4001"))
            stranger = trio.SocketStream(theirs)
            await stranger.send_all(b"GET / HTTP/1.0\r\n\r\n" * 20)
            with trio.fail_after(10):
                while await stranger.receive_some(1000):
                    pass
            await stranger.aclose()
        nursery.cancel_scope.cancel()
    lines = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(lines) == 2 and all(m.startswith("lobby: refused the transit relay relay.example:4001: ")
                                   for m in lines), lines


@pytest.mark.parametrize("addr", ["\x1b[2J\x1b[31mAna cheats:1", "evil\x07:1", "a\u200bb:1", "h:\u0661\u0662",
                                  "a\u2028b:1", "[\x1b]:1"])
def test_a_joiners_candidate_with_control_characters_is_refused(addr: str) -> None:
    """A joiner through the relay puts its first candidate in the seating as its address,
    and every seat's screen shows the places it cannot reach: a candidate that would write
    terminal escapes there (or hide text) is refused in the join request."""
    from p2p_chinchon.net import lobby as lob

    with pytest.raises(ValueError):
        lob.parse_addr(addr)
    with pytest.raises(ValueError):
        lob.check_candidates([addr])
    assert lob.parse_addr("[fe80::1%eth0]:4000") == ("fe80::1%eth0", 4000)
    assert lob.parse_addr("relay.example:4001") == ("relay.example", 4001)


def test_a_seating_address_that_is_not_host_port_is_a_clear_error() -> None:
    """The host signs a seating whose ``addr`` for a seat does not parse (only the wire's
    str of 64 bytes is checked): its candidates are dialled instead; with none, one clear
    lobby error naming the seat, not a ValueError out of run_seat."""
    from p2p_chinchon.net import lobby as lob
    from p2p_chinchon.net.seating import peers_of

    keys = [bytes([i]) * 32 for i in range(3)]

    def table(addr: str, addrs: tuple = ()) -> Table:
        players = [SimpleNamespace(name="Ana", key=keys[0], addr="10.0.0.1:4000", addrs=()),
                   SimpleNamespace(name="Bruno", key=keys[1], addr=addr, addrs=addrs),
                   SimpleNamespace(name="Bea", key=keys[2], addr="10.0.0.3:4000", addrs=())]
        return cast(Table, SimpleNamespace(lobby=SimpleNamespace(players=players, me=2)))  # a stand-in: what peers_of reads

    peers = peers_of(table("no port here", ("10.0.0.2:4000", "\x1b[2J:1", "10.0.0.9:4000")))
    assert (peers[1].host, peers[1].port, peers[1].alternates) == ("10.0.0.2", 4000, (("10.0.0.9", 4000),))
    with pytest.raises(lob.BadAnswer, match=r"seat 1 \(Bruno\) no address"):
        peers_of(table("\x1b]0;x\x07:1"))
    assert peers_of(table("10.0.0.2:4000"))[1].host == "10.0.0.2"


@pytest.mark.parametrize("place", ["x..y:4000", ".a:4000"])
async def test_a_candidate_no_resolver_can_encode_costs_one_failed_place(place: str) -> None:
    """A cheating joiner's candidate that the system's name lookup cannot even encode ('x..y':
    an empty IDNA label, UnicodeError, not OSError) crashed the mesh of every seat that dialled
    it (the host included). The join request (and the code exchange) now refuse it; and a
    mesh given one anyway (a seating signed by a hostile host) notes one failed place."""
    from p2p_chinchon.net import lobby as lob
    from p2p_chinchon.net.mesh import Mesh, MeshConfig, PeerAddr

    with pytest.raises(ValueError, match="neither an IP address nor a host name"):
        lob.check_candidates([place])
    with pytest.raises(rz.CodeError):
        rz.decode_joiner_hello(json.dumps({"kind": "joiner", "v": 1, "addrs": [place]}).encode())
    ids = [Identity.generate(), Identity.generate()]
    host, _, port = place.rpartition(":")
    alt = (host, int(port))
    mesh = Mesh(0, GAME, ids[0].private_key.sign, {1: PeerAddr("127.0.0.1", free_port(), ids[1].public_bytes, (alt,))},
                config=MeshConfig(backoff_min=0.02, backoff_max=0.1))
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.run)
        with trio.fail_after(10):
            while place not in dict(mesh.dial_trouble().get(1, [])):
                await trio.sleep(0.05)
        await mesh.aclose()
        nursery.cancel_scope.cancel()


# --------------------------------------------------------------- a real mailbox that stops


@pytest.mark.slow  # a real mailbox server process
async def test_a_mailbox_that_stops_while_a_code_is_on_show_is_said_at_once(tmp_path: Any) -> None:
    """A real magic-wormhole mailbox (``twist wormhole-mailbox``) stops while the host's code
    waits for a friend: the wormhole only reconnects quietly, so the host must see the mailbox
    gone itself and say so (docs/friends.md promises a line at once), within a few checks, not
    after a minute or never."""
    import subprocess
    import sys

    pytest.importorskip("wormhole_mailbox_server")
    from p2p_chinchon.net import mailbox as mb, session
    from p2p_chinchon.net.lobby import StreamListener

    port = free_port()
    log = tmp_path / "mailbox.log"
    with open(log, "wb") as out:
        server = subprocess.Popen([sys.executable, "-m", "twisted", "wormhole-mailbox", "--port", f"tcp:{port}",
                                   "--channel-db", str(tmp_path / "db.sqlite")], stdout=out, stderr=subprocess.STDOUT,
                                  cwd=tmp_path)
    try:
        with trio.fail_after(60):
            while b"starting on" not in log.read_bytes():
                await trio.sleep(0.1)
        events = _Events()
        config = _host_config(f"ws://127.0.0.1:{port}/v1")
        table = _lobby_table()
        async with trio.open_nursery() as nursery:
            nursery.cancel_scope.deadline = trio.current_time() + 4 * mb.WATCH_EVERY + 10

            class Stopping(_Events):
                def notice(self, text: str, key: str = "", fields: dict | None = None, lasting: bool = False) -> None:
                    events.notice(text, key, fields, lasting)
                    if key == "code_word":
                        server.terminate()  # the mailbox goes away once the code is on show
                    elif key == "code_mailbox_down":
                        nursery.cancel_scope.cancel()  # said: the test is over

            nursery.start_soon(session._hand_out_codes, config, table, StreamListener(), Stopping(), 40000)
        assert events.notices == ["code_word", "code_mailbox_down"], events.texts
    finally:
        server.kill()
        server.wait()
