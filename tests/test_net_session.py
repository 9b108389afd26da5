"""Joiner policy of the session layer: how strong a table's shuffle proofs must be."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.net.node import Events
from p2p_chinchon.net.session import (
    CUT_AND_CHOOSE_MIN_ROUNDS,
    HostConfig,
    JoinConfig,
    host_game,
    join_game,
    weak_proofs,
)
from p2p_chinchon.rng import SeededRng


@pytest.mark.parametrize(
    ("system", "k", "minimum", "weak"),
    [
        (None, 63, None, True),  # no option: cut-and-choose, 64 rounds by default
        (None, 64, None, False),
        ("cut-and-choose", 40, None, True),
        ("cut-and-choose", 40, 40, False),  # the person lowered the bar
        ("terelius-wikstrom", 1, None, False),  # not measured in rounds
    ],
)
def test_weak_proofs_depends_on_the_proof_system(system: str | None, k: int, minimum: int | None, weak: bool) -> None:
    rules = SimpleNamespace() if system is None else SimpleNamespace(shuffle_proof=system)
    assert (weak_proofs(rules, k, minimum) is not None) == weak
    assert CUT_AND_CHOOSE_MIN_ROUNDS == 64


class Listening(Events):
    """Says the lobby's port when it listens."""

    def __init__(self, ports: list[int], got: trio.Event) -> None:
        self.ports, self.got = ports, got

    def listening(self, port: int) -> None:
        self.ports.append(port)
        self.got.set()


async def test_joiner_refuses_48_rounds_by_default() -> None:
    """A real lobby: a host offering k = 48 cut-and-choose rounds; the joiner leaves unseated."""
    rules = make_rules("classic", {"shuffle_proof": "cut-and-choose"})
    ports: list[int] = []
    got = trio.Event()

    async def host() -> None:
        events = Listening(ports, got)
        await host_game(HostConfig(identity=Identity.generate(), rng=SeededRng("h"), rules=rules, seats=2, name="t",
                                   player_name="Ana", proof_rounds=48, bind="127.0.0.1", advertise=False), events)

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            await got.wait()
            with pytest.raises(tbl.ProtocolViolation, match="k = 48"):
                await join_game(JoinConfig(identity=Identity.generate(), rng=SeededRng("j"), host="127.0.0.1",
                                           port=ports[0], player_name="Bruno", bind="127.0.0.1"))
        nursery.cancel_scope.cancel()


async def test_host_approves_each_joiner_before_seating() -> None:
    """Without --open the host's person is asked (name, fingerprint, address); a joiner who is
    turned down gets a typed refusal and holds no seat; the next one is seated."""
    from p2p_chinchon.identity import fingerprint
    from p2p_chinchon.net import lobby as lob, node as nd

    host_id = Identity.generate()
    table = tbl.Table.create(host_id, SeededRng("h"), name="t", rules=make_rules("classic", {}), max_seats=2,
                             addr="127.0.0.1:1", proof_rounds=4)
    table.lobby.set_host_name("Ana")
    listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
    port = listeners[0].socket.getsockname()[1]
    asked: list[tuple[str, str, str]] = []

    async def approve(req: lob.JoinRequest, ip: str, **_: object) -> bool:
        asked.append((req.name, fingerprint(req.public_key), ip))
        return req.name != "Eve"

    eve, bruno = Identity.generate(), Identity.generate()
    async with trio.open_nursery() as nursery:
        nursery.start_soon(lambda: nd.host_lobby(table, listeners, seats=2, approve=approve))
        with trio.fail_after(30):
            with pytest.raises(lob.Refused, match="did not let you sit"):
                await nd.join_lobby(eve, "127.0.0.1", port, name="Eve", listen_port=4000,
                                    expect_fingerprint=host_id.fingerprint)
            offer, seating = await nd.join_lobby(bruno, "127.0.0.1", port, name="Bruno", listen_port=4001,
                                                 expect_fingerprint=host_id.fingerprint)
    assert offer == table.chain.frames[0] and seating == table.chain.frames[1]
    assert [p.name for p in table.lobby.players] == ["Ana", "Bruno"]
    assert asked == [("Eve", eve.fingerprint, "127.0.0.1"), ("Bruno", bruno.fingerprint, "127.0.0.1")]


async def test_a_seat_that_never_agrees_is_timed_out_soon() -> None:
    """`agree` has a timeout of its own (Timeouts.agree), far shorter than a move's: a seat
    taken by someone who never agrees frees the table instead of holding it for 15 minutes."""
    from p2p_chinchon.net.node import Timeouts

    rules = make_rules("classic", {})
    ports: list[int] = []
    got = trio.Event()
    results: dict[str, object] = {}
    fast = Timeouts(protocol=30.0, decision=900.0, agree=1.0)

    async def host() -> None:
        events = Listening(ports, got)
        results["host"] = await host_game(HostConfig(
            identity=Identity.generate(), rng=SeededRng("h"), rules=rules, seats=2, name="t", player_name="Ana",
            proof_rounds=4, bind="127.0.0.1", advertise=False, timeouts=fast), events)

    async def silent_joiner() -> None:
        results["joiner"] = await join_game(JoinConfig(
            identity=Identity.generate(), rng=SeededRng("j"), host="127.0.0.1", port=ports[0], player_name="Bruno",
            auto_agree=False, bind="127.0.0.1", min_proof_rounds=4, timeouts=fast))

    with trio.fail_after(60):
        async with trio.open_nursery() as nursery:
            nursery.start_soon(host)
            await got.wait()
            nursery.start_soon(silent_joiner)
    fault = results["host"].fault  # type: ignore[attr-defined]
    assert fault is not None and fault.rule == "timeout" and fault.seat == 1, fault
