"""Joiner policy of the session layer: how strong a table's shuffle proofs must be (issue 9)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.net.session import CUT_AND_CHOOSE_MIN_ROUNDS, host_game, join_game, weak_proofs
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


async def test_joiner_refuses_48_rounds_by_default() -> None:
    """A real lobby: a host offering k = 48 cut-and-choose rounds; the joiner leaves unseated."""
    rules = make_rules("classic", {})
    ports: list[int] = []
    got = trio.Event()

    async def host() -> None:
        await host_game(identity=Identity.generate(), rng=SeededRng("h"), rules=rules, seats=2, name="t",
                        player_name="Ana", decide=None, proof_rounds=48, bind="127.0.0.1", advertise=False,
                        on_listening=lambda p: (ports.append(p), got.set()))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(host)
        with trio.fail_after(30):
            await got.wait()
            with pytest.raises(tbl.IntentError, match="k = 48"):
                await join_game(identity=Identity.generate(), rng=SeededRng("j"), host="127.0.0.1", port=ports[0],
                                player_name="Bruno", decide=None, bind="127.0.0.1")
        nursery.cancel_scope.cancel()
