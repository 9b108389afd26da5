"""The code word's sans-I/O pieces (``net/rendezvous.py``), the relay client against a fake relay
(``net/relay.py``), and the command line's one-line failures of ``--code`` (no servers needed:
a mailbox or relay that is down is a closed loopback port)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from functools import partial

import pytest
import trio

from harness import free_port
from harness.relay import fake_relay, relayed_pair
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import rendezvous as rz
from p2p_chinchon.net.relay import RelayDown, RelayError, meet, pair_secret

FP = "MZUH-VLPY-MK6X-O3EP"


def test_code_words_are_checked_and_normalised() -> None:
    assert rz.check_code("  7-Crossover-Clockwork ") == "7-crossover-clockwork"
    assert rz.check_code("12-a-b".replace("a", "ab").replace("-b", "-cd")) == "12-ab-cd"
    for bad in ("", "crossover-clockwork", "0-ab-cd", "7", "7-", "7-ab cd", "7-ab;rm", "12345-ab-cd"):
        with pytest.raises(rz.CodeError, match="not a code word"):
            rz.check_code(bad)


def test_host_and_joiner_hellos_round_trip() -> None:
    data = rz.encode_host_hello(FP, ["10.0.0.5:40123", "[fe80::1]:40123"], "relay.example:4001")
    hello = rz.decode_host_hello(data)
    assert hello == rz.HostHello(FP, ("10.0.0.5:40123", "[fe80::1]:40123"), "relay.example:4001")
    assert json.loads(data)["kind"] == "host"
    assert rz.decode_joiner_hello(rz.encode_joiner_hello(["192.168.1.7:41234"])) == ("192.168.1.7:41234",)
    assert rz.decode_joiner_hello(rz.encode_joiner_hello([])) == ()


@pytest.mark.parametrize("body, why", [
    (b"\xff", "not JSON"),
    (b"[]", "not a p2p-chinchon host"),
    (json.dumps({"kind": "joiner", "v": 1, "addrs": []}).encode(), "not a p2p-chinchon host"),
    (json.dumps({"kind": "host", "v": 2, "fp": FP, "addrs": [], "relay": "r:1"}).encode(), "version 1"),
    (json.dumps({"kind": "host", "v": 1, "fp": "nope", "addrs": [], "relay": "r:1"}).encode(), "fingerprint"),
    (json.dumps({"kind": "host", "v": 1, "fp": FP, "addrs": ["h:1"] * 9, "relay": "r:1"}).encode(), "at most 8"),
    (json.dumps({"kind": "host", "v": 1, "fp": FP, "addrs": ["no port"], "relay": "r:1"}).encode(), "bad address"),
    (json.dumps({"kind": "host", "v": 1, "fp": FP, "addrs": ["h"], "relay": "r:1"}).encode(), "without a port"),
    (json.dumps({"kind": "host", "v": 1, "fp": FP, "addrs": [], "relay": "r"}).encode(), "HOST:PORT"),
    (json.dumps({"kind": "host", "v": 1, "fp": FP, "addrs": []}).encode(), "no transit relay"),
    (b"x" * 3000, "at most 2048 bytes"),
])
def test_a_bad_host_hello_is_a_clear_error(body: bytes, why: str) -> None:
    with pytest.raises(rz.CodeError, match=why):
        rz.decode_host_hello(body)


def test_relay_addresses() -> None:
    assert rz.parse_relay("tcp:transit.magic-wormhole.io:4001") == ("transit.magic-wormhole.io", 4001)
    assert rz.parse_relay("10.0.0.1:4001") == ("10.0.0.1", 4001)
    assert rz.parse_relay(rz.DEFAULT_RELAY)[1] == 4001
    for bad in ("relay.example", "relay.example:0", "a b:1"):
        with pytest.raises(rz.CodeError):
            rz.parse_relay(bad)


def test_tokens_are_shared_by_the_pair_and_by_nobody_else() -> None:
    a, b, c = Identity.generate(), Identity.generate(), Identity.generate()
    ab = pair_secret(a, b.public_bytes)
    assert ab == pair_secret(b, a.public_bytes) and len(ab) == 32
    assert pair_secret(a, c.public_bytes) != ab  # another pair, another secret
    game = bytes(range(16))
    token = rz.mesh_token(ab, game, 0, 2)
    assert re.fullmatch(r"[0-9a-f]{64}", token)
    assert rz.mesh_token(ab, game, 2, 0) == token  # both ends derive the same
    assert rz.mesh_token(ab, bytes(16), 0, 2) != token  # another game
    assert rz.mesh_token(ab, game, 0, 1) != token  # other seats
    for args in ((ab[:31], game, 0, 1), (ab, game[:15], 0, 1), (ab, game, 1, 1)):
        with pytest.raises(ValueError):
            rz.mesh_token(*args)
    assert rz.lobby_token(bytes(32)) == "00" * 32
    with pytest.raises(ValueError):
        rz.lobby_token(bytes(31))


def test_relay_handshake_line_and_reply() -> None:
    line = rz.relay_request("ab" * 32, rz.relay_side(3))
    # the relay's own pattern (wormhole_transit_relay.transit_server)
    assert re.fullmatch(rb"please relay (\w{64}) for side (\w{16})\n", line)
    assert rz.relay_side(0) != rz.relay_side(1) != rz.relay_side(0, lobby_host=True)
    with pytest.raises(ValueError):
        rz.relay_request("AB" * 32, rz.relay_side(0))
    reply = rz.RelayReply()
    assert not reply.feed(b"o") and reply.feed(b"k\n\x16\x03\x01")
    assert reply.ok and reply.rest == b"\x16\x03\x01"
    for answer in (b"impatient\n", b"bad handshake\n"):
        refused = rz.RelayReply()
        assert refused.feed(answer) and not refused.ok
    with pytest.raises(rz.CodeError, match="not ok"):
        rz.RelayReply().feed(b"HTTP/1.1 400 Bad Request\r\n")
    with pytest.raises(rz.CodeError, match="too long"):
        rz.RelayReply().feed(b"x" * 100)


async def test_meet_through_a_fake_relay_and_a_relay_that_is_down() -> None:
    token, seen = "cd" * 32, []

    async def fake_relay(stream: trio.SocketStream) -> None:
        data = b""
        while not data.endswith(b"\n"):
            data += await stream.receive_some(100)
        seen.append(data)
        await stream.send_all(b"ok\nfirst bytes")
        seen.append(await stream.receive_some(100))

    async with trio.open_nursery() as nursery:
        listeners = await nursery.start(partial(trio.serve_tcp, fake_relay, 0, host="127.0.0.1"))
        port = listeners[0].socket.getsockname()[1]
        stream = await meet("127.0.0.1", port, token, rz.relay_side(1), wait=10)
        assert stream.relay == f"127.0.0.1:{port}" and not hasattr(stream, "socket")
        assert await stream.receive_some(5) == b"first" and await stream.receive_some() == b" bytes"
        await stream.send_all(b"hello")
        with trio.fail_after(10):
            while len(seen) < 2:
                await trio.sleep(0.01)
        await stream.aclose()
        nursery.cancel_scope.cancel()
    assert seen == [rz.relay_request(token, rz.relay_side(1)), b"hello"]
    port = free_port()
    with pytest.raises(RelayDown, match=f"cannot reach the transit relay at 127.0.0.1:{port}"):
        await meet("127.0.0.1", port, token, rz.relay_side(1))
    assert issubclass(RelayDown, RelayError)


def _cli(env: dict, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "p2p_chinchon", *args], capture_output=True, text=True,
                          timeout=60, stdin=subprocess.DEVNULL, env=env)


def test_code_word_failures_are_one_line_and_a_clean_exit(tmp_path) -> None:
    """A malformed code word or relay (exit 2), a mailbox that is down (joiner) and a relay that
    is down (host): one line on stderr each, no traceback."""
    import os

    env = dict(os.environ, XDG_CONFIG_HOME=str(tmp_path / "c"), XDG_DATA_HOME=str(tmp_path / "d"))
    bad = _cli(env, "join", "--bot", "--code", "crossover")
    assert (bad.returncode, bad.stderr.strip().splitlines()) == (
        2, ["p2p-chinchon join: --code: 'crossover' is not a code word: it looks like 7-crossover-clockwork "
            "(a number and words)"])
    bad = _cli(env, "host", "--bot", "--code", "--relay", "nowhere")
    assert bad.returncode == 2 and bad.stderr.strip().startswith("p2p-chinchon host: --relay 'nowhere': give "), bad.stderr
    down = free_port()
    mailbox = _cli(env, "join", "--bot", "--code", "7-crossover-clockwork", "--mailbox", f"ws://127.0.0.1:{down}/v1")
    assert (mailbox.returncode, mailbox.stderr.strip().splitlines()) == (
        1, [f"p2p-chinchon join: cannot reach the mailbox at ws://127.0.0.1:{down}/v1 (Connection refused)"])
    relay = _cli(env, "host", "--bot", "--code", "--no-mdns", "--relay", f"127.0.0.1:{down}",
                 "--mailbox", f"ws://127.0.0.1:{down}/v1")
    lines = relay.stderr.strip().splitlines()
    assert relay.returncode == 1 and lines[-1] == (
        f"p2p-chinchon host: cannot reach the transit relay at 127.0.0.1:{down} (Connection refused)"), relay.stderr
    assert "Traceback" not in relay.stderr


async def test_a_mesh_link_that_cannot_be_dialled_meets_at_the_relay() -> None:
    """Seat 0 dials seat 1 at a closed port: after ``RelayPlan.after`` both meet at the relay,
    TLS and the handshake run inside unchanged, frames pass, and both name the link relayed."""
    from p2p_chinchon.net.mesh import Frame, RelayPlan

    ids, game = [Identity.generate(), Identity.generate()], bytes(range(16))
    pairs: dict[bytes, tuple] = {}
    async with trio.open_nursery() as nursery:
        [relay] = await nursery.start(partial(trio.serve_tcp, partial(fake_relay, pairs), 0, host="127.0.0.1"))
        plan = RelayPlan("127.0.0.1", relay.socket.getsockname()[1], lambda peer: "5e" * 32, after=0.2)
        m0, m1 = await relayed_pair(nursery, plan, ids, game)
        with trio.fail_after(60):
            assert await m0.send(1, b"through the relay")
            assert await m1.inbound.receive() == Frame(0, b"through the relay")
        await m0.aclose()
        await m1.aclose()
        nursery.cancel_scope.cancel()


def test_a_mailbox_name_that_does_not_resolve_is_said_in_words() -> None:
    """Twisted's DNS failure reads as the bare host name in brackets: say what it means."""
    from twisted.internet.error import DNSLookupError
    from twisted.python.failure import Failure
    from wormhole import errors

    from p2p_chinchon.net.mailbox import MailboxDown, _translate

    try:
        raise DNSLookupError("nonexistent.invalid")
    except DNSLookupError:
        failure = Failure()
    said = _translate(errors.ServerConnectionError("ws://nonexistent.invalid:4000/v1", failure),
                      "ws://nonexistent.invalid:4000/v1")
    assert isinstance(said, MailboxDown)
    assert str(said) == ("cannot reach the mailbox at ws://nonexistent.invalid:4000/v1 (the name "
                         "nonexistent.invalid does not resolve: no internet here, or a mistyped --mailbox)")
