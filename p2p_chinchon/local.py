"""Whole games on one machine: a host and joiners on loopback, each a separate peer with its
own identity key, table, mesh links and transcript, running the full protocol.

Used by ``p2p-chinchon play --in-process`` and by the integration tests. Nothing here
shortcuts the protocol: the peers only share the loopback interface (and, in one process, the
interpreter).
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.autoplay import bot_decider
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import node as nd
from p2p_chinchon.net.session import host_game, join_game
from p2p_chinchon.rng import SeededRng

BOT_NAMES = ["Ana", "Bruno", "Carla", "Diego", "Elena", "Fermín", "Gloria", "Hugo"]


@dataclass
class SeatSpec:
    """How one local seat plays: ``decide`` (None = the simple bot), ``on_update`` for a UI or
    console, ``identity`` (None = a fresh in-memory key), ``name``."""

    name: str
    decide: Any = None
    on_update: Callable[..., Any] | None = None
    identity: Identity | None = None
    node_ready: Callable[..., Any] | None = None
    table_cls: type = tbl.Table  # tests swap in a cheating table for a joiner
    on_reject: Callable[[str], Any] | None = None  # the UI hears why an intent was refused


def seat_rng(seed: int | str | None, label: object) -> Any:
    """``secrets`` in real play; a deterministic stream per seat when a seed is given (demos and
    tests: a seeded game is reproducible and therefore NOT secret)."""
    if seed is None:
        return secrets
    return SeededRng(f"p2p-chinchon/seed/{seed}/{label}")


def make_bot(rules: Any, rng: Any, level: str = "easy") -> Any:
    """A bot of ``level`` (easy, normal, hard): :func:`p2p_chinchon.bots.make_bot`."""
    from p2p_chinchon.bots import make_bot as make

    return make(rules, rng, level)


async def play_local(
    rules: Any,
    specs: Sequence[SeatSpec],
    *,
    seed: int | None = None,
    proof_rounds: int = tbl.DEFAULT_PROOF_ROUNDS,
    transcript_dir: Path | None = None,
    table_name: str = "local table",
    timeouts: nd.Timeouts | None = None,
) -> list[nd.NodeResult]:
    """Seat ``len(specs)`` peers on 127.0.0.1 and play one game to the end (or to a fault).

    Returns one :class:`~p2p_chinchon.net.node.NodeResult` per seat, in seat order.
    Transcripts go to ``transcript_dir/seat<N>.chn`` when a folder is given.
    """
    n = len(specs)
    rngs = [seat_rng(seed, i) for i in range(n)]
    ids = [s.identity or Identity.generate(rngs[i] if seed is not None else None) for i, s in enumerate(specs)]
    results: list[nd.NodeResult | None] = [None] * n
    host_table: list[tbl.Table] = []
    listening = trio.Event()
    lobby_port = 0

    def path(i: int) -> Path | None:
        return transcript_dir / f"seat{i}.chn" if transcript_dir else None

    def decider(i: int) -> Any:
        if specs[i].decide is not None:
            return specs[i].decide
        return bot_decider(make_bot(rules, rngs[i]))

    def on_listening(port: int) -> None:
        nonlocal lobby_port
        lobby_port = port
        listening.set()

    async def run_host() -> None:
        results[0] = await host_game(
            identity=ids[0], rng=rngs[0], rules=rules, seats=n, name=table_name,
            player_name=specs[0].name, decide=decider(0), on_update=specs[0].on_update,
            transcript_path=path(0), timeouts=timeouts, proof_rounds=proof_rounds,
            bind="127.0.0.1", advertise=False, on_listening=on_listening,
            node_ready=specs[0].node_ready, table_ready=host_table.append, on_reject=specs[0].on_reject,
        )

    async def run_joiner(i: int) -> None:
        results[i] = await join_game(
            identity=ids[i], rng=rngs[i], host="127.0.0.1", port=lobby_port,
            player_name=specs[i].name, decide=decider(i), on_update=specs[i].on_update,
            transcript_path=path(i), timeouts=timeouts, auto_agree=specs[i].decide is None,
            bind="127.0.0.1", node_ready=specs[i].node_ready, table_cls=specs[i].table_cls,
            on_reject=specs[i].on_reject,
            min_proof_rounds=min(proof_rounds, tbl.MIN_PROOF_ROUNDS),
        )

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_host)
        await listening.wait()
        for i in range(1, n):
            nursery.start_soon(run_joiner, i)
            # seat the joiners one by one so that seat numbers match the specs
            while len(host_table[0].pending_players) < i + 1 and not host_table[0].players:
                await trio.sleep(0.005)
    return [r for r in results if r is not None]
