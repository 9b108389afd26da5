"""A joiner started before its host tries the lobby again every ``LOBBY_RETRY`` seconds (it
waited a whole second between tries, on the way to the first turn), and says so once a second."""

from __future__ import annotations

import trio

from p2p_chinchon.net import lobby as lob, node as nd


def _fails_then_connects(monkeypatch, exc: Exception, failures: int) -> list[float]:
    """Make the lobby's connect raise ``exc`` ``failures`` times, then connect; returns the
    list of the tries' (virtual) times, which the caller may clear between calls."""
    tries: list[float] = []

    async def connect_lobby(host, port, *args, **kwargs):
        tries.append(trio.current_time())
        if len(tries) <= failures:
            raise exc
        return "link", b"key"

    monkeypatch.setattr(lob, "connect_lobby", connect_lobby)
    return tries


async def test_a_host_not_up_yet_is_tried_again_soon(monkeypatch, autojump_clock):
    tries = _fails_then_connects(monkeypatch, ConnectionRefusedError("not up yet"), 7)
    said: list[str] = []
    start = trio.current_time()
    got = await nd._connect_patiently(30.0, said.append, "127.0.0.1", 4000)
    assert got == ("link", b"key")
    gaps = [b - a for a, b in zip(tries, tries[1:], strict=False)]
    assert len(gaps) == 7 and all(abs(g - nd.LOBBY_RETRY) < 1e-9 for g in gaps)
    assert tries[-1] - start < 2.0  # connected within two seconds of virtual time
    assert said and len(said) == len(set(said))  # each "still trying for N s" once


async def test_a_handshake_reset_is_tried_again_only_while_waiting_for_a_host_to_return(monkeypatch, autojump_clock):
    """A host restarting after a crash may reset a joiner's TLS handshake: a joiner waiting
    for its lobby to open again tries again; one joining afresh takes it as the wrong host."""
    import pytest

    tries = _fails_then_connects(monkeypatch, lob.WrongHost("127.0.0.1:4000 is not the expected table: connection reset"), 2)
    with pytest.raises(lob.WrongHost):
        await nd._connect_patiently(30.0, None, "127.0.0.1", 4000)
    tries.clear()
    assert await nd._connect_patiently(30.0, None, "127.0.0.1", 4000, retry=(lob.WrongHost,)) == ("link", b"key")
    assert len(tries) == 3


async def test_a_port_that_hangs_up_before_a_lobby_is_tried_again_while_waiting(monkeypatch, autojump_clock):
    """At a rematch the host's last game may still hold its port (its mesh listens there and
    hangs up on a lobby's joiner) until the new lobby opens: the joiner, waiting, tries again;
    one that may not wait hears the refusal."""
    import pytest

    tries = _fails_then_connects(monkeypatch, lob.Refused("the host closed the lobby connection"), 3)
    assert await nd._connect_patiently(30.0, None, "127.0.0.1", 4000) == ("link", b"key")
    assert len(tries) == 4
    tries.clear()
    with pytest.raises(lob.Refused):
        await nd._connect_patiently(0.0, None, "127.0.0.1", 4000)
    assert len(tries) == 1
