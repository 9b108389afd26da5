"""Whole games on one machine: a host and joiners on loopback, each a separate peer with its
own identity key, table, mesh links and transcript, running the full protocol.

Used by ``p2p-chinchon play --in-process`` and by the integration tests. Nothing here
shortcuts the protocol: the peers only share the loopback interface (and, in one process, the
interpreter).
"""

from __future__ import annotations

import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.autoplay import bot_decider
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import node as nd
from p2p_chinchon.net.session import HostConfig, JoinConfig, host_game, join_game
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
    on_status: Callable[[Any], Any] | None = None  # presence and waits (NodeStatus)
    on_notice: Callable[[str], Any] | None = None  # one-line messages (the turn clock ran out)


class SpecEvents(nd.Events):
    """A :class:`SeatSpec`'s callbacks as the node's :class:`~p2p_chinchon.net.node.Events`."""

    def __init__(self, spec: SeatSpec, decide: Any, table_ready: Callable[..., Any] | None = None,
                 listening: Callable[[int], Any] | None = None) -> None:
        self.spec = spec
        self._decide = decide
        self._table_ready = table_ready
        self._listening = listening

    def decide(self, view: Any, need: str) -> Any:
        return self._decide(view, need)

    def update(self, view: Any) -> None:
        if self.spec.on_update is not None:
            self.spec.on_update(view)

    def status(self, status: Any) -> None:
        if self.spec.on_status is not None:
            self.spec.on_status(status)

    def reject(self, reason: str) -> None:
        if self.spec.on_reject is not None:
            self.spec.on_reject(reason)

    def notice(self, text: str, key: str = "", fields: dict[str, Any] | None = None, lasting: bool = False) -> None:
        if self.spec.on_notice is not None:
            self.spec.on_notice(text)

    def node_ready(self, node: Any) -> None:
        if self.spec.node_ready is not None:
            self.spec.node_ready(node)

    def table_ready(self, table: Any) -> None:
        if self._table_ready is not None:
            self._table_ready(table)

    def listening(self, port: int) -> None:
        if self._listening is not None:
            self._listening(port)


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
        config = HostConfig(
            identity=ids[0], rng=rngs[0], player_name=specs[0].name, transcript_path=path(0),
            timeouts=timeouts, bind="127.0.0.1", rules=rules, seats=n, name=table_name,
            proof_rounds=proof_rounds, advertise=False,
        )
        results[0] = await host_game(config, SpecEvents(specs[0], decider(0), host_table.append, on_listening))

    async def run_joiner(i: int) -> None:
        config = JoinConfig(
            identity=ids[i], rng=rngs[i], player_name=specs[i].name, transcript_path=path(i),
            timeouts=timeouts, bind="127.0.0.1", auto_agree=specs[i].decide is None,
            host="127.0.0.1", port=lobby_port, table_cls=specs[i].table_cls,
            min_proof_rounds=min(proof_rounds, tbl.MIN_PROOF_ROUNDS),
        )
        results[i] = await join_game(config, SpecEvents(specs[i], decider(i)))

    async with trio.open_nursery() as nursery:
        nursery.start_soon(run_host)
        await listening.wait()
        for i in range(1, n):
            nursery.start_soon(run_joiner, i)
            # seat the joiners one by one so that seat numbers match the specs
            while len(host_table[0].lobby.pending_players) < i + 1 and not host_table[0].lobby.players:
                await trio.sleep(0.005)
    return [r for r in results if r is not None]
