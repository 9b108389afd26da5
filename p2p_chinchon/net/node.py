"""A live node: one seat's sans-I/O :class:`~p2p_chinchon.table.Table` driven over trio.

The node owns the I/O around the table: the lobby link (host or joiner), the full mesh to
every other seat, the transcript file (every accepted envelope is appended and fsynced
*before* anything that depends on it is sent), per-action timeouts, and the decision maker
(a bot, the UI, or the plain line mode) that turns a :class:`~p2p_chinchon.view.SeatView`
into intents.

Mesh payloads carry a one-byte type: ``E`` + an envelope frame, or ``S`` + 4-byte big-endian
chain length ("I hold this many envelopes; send me the rest"), sent on every (re)connect so
a dropped link resumes from the transcript.

Timing log (benchmarks only, off by default): when the environment variable
``P2P_CHINCHON_TIMING`` names a folder, each node appends one line per accepted envelope to
``<folder>/node-<pid>.log``: ``<unix time, s> <our seat> <seq> <sender seat> <kind> [<source>]``,
written right after the envelope is persisted (``benchmarks/game.py`` reads it).
"""

from __future__ import annotations

import logging
import os
import secrets
import time
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Awaitable, Callable

import msgpack
import trio

from p2p_chinchon import table as tbl, view as v
from p2p_chinchon.net import lobby as lob
from p2p_chinchon.net.evidence import EvidenceLog
from p2p_chinchon.net.framing import FrameError
from p2p_chinchon.net.mesh import Frame, Mesh, MeshConfig, PeerAddr, PeerDown, PeerUp
from p2p_chinchon.transcript import TranscriptWriter

log = logging.getLogger(__name__)

ENVELOPE = b"E"
SYNC = b"S"
TIMING_ENV = "P2P_CHINCHON_TIMING"


def _timing_log() -> Any:
    """The benchmark timing log (line-buffered text file), or None when not asked for."""
    folder = os.environ.get(TIMING_ENV)
    if not folder:
        return None
    try:
        Path(folder).mkdir(parents=True, exist_ok=True)
        return open(Path(folder) / f"node-{os.getpid()}.log", "a", buffering=1)
    except OSError as exc:
        log.warning("cannot write the timing log in %s: %s", folder, exc)
        return None

# Decider: called with the table's SeatView and what it needs ("agree", "draw", "discard",
# "reenter"); returns an intent, or None when the decision will arrive later through
# ``Node.submit`` (the UI).
Decider = Callable[[v.SeatView, str], Any]


@dataclass
class NodeResult:
    winner: int | None
    fault: v.Fault | None
    transcript: Path | None
    head: bytes
    totals: list[int] = field(default_factory=list)
    seat: int | None = None
    names: list[str] = field(default_factory=list)
    dropped: list[tuple[int | None, str]] = field(default_factory=list)  # (claimed seat, rule)


@dataclass
class Timeouts:
    """Seconds a node waits for the expected speaker before blaming it."""

    protocol: float = 90.0  # automatic steps (keys, shuffles, shares)
    decision: float = 900.0  # a person choosing a move
    agree: float = 120.0  # a seated player accepting the rules (issue 9: a no-show frees the table)


class Node:
    """Drives one :class:`Table` over a :class:`Mesh`.

    ``decide`` chooses intents (a bot) or returns None and lets the UI call :meth:`submit`.
    ``on_update(view)`` is called after every change (UI redraw, console printing).
    """

    def __init__(
        self,
        table: tbl.Table,
        *,
        decide: Decider | None = None,
        on_update: Callable[[v.SeatView], Any] | None = None,
        transcript_path: Path | None = None,
        timeouts: Timeouts | None = None,
        on_output: Callable[[Any], Any] | None = None,
        on_reject: Callable[[str], Any] | None = None,
    ) -> None:
        self.table = table
        self.on_reject = on_reject
        self.decide = decide
        self.on_update = on_update
        self.on_output = on_output
        self.transcript_path = transcript_path
        self.timeouts = timeouts or Timeouts()
        self._writer: TranscriptWriter | None = None
        self._written = 0
        self._lock = trio.Lock()
        self._mesh: Mesh | None = None
        self._done = trio.Event()
        self._progress = trio.Event()
        self._intent_send, self._intent_recv = trio.open_memory_channel[Any](16)
        self.dropped: list[tuple[int | None, str]] = []
        self._synced: dict[int, set[int]] = {}
        self.evidence = EvidenceLog(None if transcript_path is None
                                    else transcript_path.with_name(transcript_path.name + ".evidence"))
        self._timing = _timing_log()

    # -------------------------------------------------------------- table calls

    async def _call(self, fn: Callable[..., list], *args: Any, link: int | None = None) -> None:
        """Run a table method off the event loop (shuffle proofs take a while; libsodium
        releases the GIL), then persist and send what it produced, in that order. ``link``:
        the seat whose link brought the frame (evidence is counted against it)."""
        async with self._lock:
            outs = await trio.to_thread.run_sync(fn, *args)
            await self._handle(outs, link)

    async def _handle(self, outs: list, link: int | None = None) -> None:
        sends = []
        for out in outs:
            if isinstance(out, tbl.Accepted):
                self._persist(out)
                if self._timing is not None:
                    self._log_timing(out)
                self._progress.set()
                self._progress = trio.Event()
            elif isinstance(out, tbl.Send):
                sends.append(out.frame)
            elif isinstance(out, tbl.Job):
                self._nursery.start_soon(self._run_job, out)
            elif isinstance(out, tbl.Evidence):
                self._keep_evidence(out, link)
            elif isinstance(out, tbl.Resync) and self._mesh is not None:
                await self._mesh.send(out.seat, SYNC + out.from_seq.to_bytes(4, "big"))
            elif isinstance(out, (tbl.Finished, tbl.Stopped)):
                self._done.set()
            if self.on_output is not None:
                self.on_output(out)
        if self._mesh is not None:
            for frame in sends:
                await self._mesh.broadcast(ENVELOPE + frame)
        if self.on_update is not None:
            self.on_update(self.table.view())

    def _keep_evidence(self, ev: tbl.Evidence, link: int | None = None) -> None:
        """Rejected frames go to ``<transcript>.evidence``, bounded (:mod:`.evidence`); a link
        that keeps sending junk is dropped, counted against its seat."""
        self.dropped.append((ev.seat, ev.rule))
        self._drop_junk(link, self.evidence.keep(ev.seat, ev.rule, ev.reason, ev.frames, link))

    def _drop_junk(self, link: int | None, why: str | None) -> None:
        if why is not None and link is not None and self._mesh is not None:
            log.warning("%s", why)
            self._mesh.drop(link, why)

    def _persist(self, out: tbl.Accepted) -> None:
        if self.transcript_path is None:
            return
        if self._writer is None:
            self.transcript_path.parent.mkdir(parents=True, exist_ok=True)
            self._writer = TranscriptWriter(self.transcript_path)
        self._writer.append(out.env)

    def _log_timing(self, out: tbl.Accepted) -> None:
        env = out.env
        src = f" {env.body['source']}" if env.kind == "draw" else ""
        self._timing.write(f"{time.time():.6f} {self.table.me} {out.index} {env.seat} {env.kind}{src}\n")

    async def _run_job(self, job: tbl.Job) -> None:
        """Heavy pure work (a peer's proof, our shuffle's multiplications) in a worker thread:
        libsodium releases the GIL, and the event loop keeps serving the mesh meanwhile."""
        result = await trio.to_thread.run_sync(tbl.run_job, job)
        await self._call(self.table.job_done, job.id, result)
        await self._decide()

    def submit(self, intent: Any) -> None:
        """Queue an intent from the UI (thread-safe within trio; use TrioToken from outside)."""
        self._intent_send.send_nowait(intent)

    async def persist_existing(self) -> None:
        """Write envelopes the table accepted before the node existed (offer, seating)."""
        for i, frame in enumerate(self.table.frames):
            self._persist(tbl.Accepted(i, frame, self.table.chain[i]))

    # -------------------------------------------------------------- main loop

    async def run(self, mesh: Mesh) -> NodeResult:
        self._mesh = mesh
        async with trio.open_nursery() as nursery:
            self._nursery = nursery
            nursery.start_soon(self._inbound_loop, mesh)
            nursery.start_soon(self._intent_loop)
            nursery.start_soon(self._timeout_loop)
            await self._call(self.table.poll)
            await self._decide()
            await self._done.wait()
            # give our last envelopes (game_end / fault) a moment to leave
            with trio.move_on_after(1.0):
                await self._flush(mesh)
            nursery.cancel_scope.cancel()
        if self._writer is not None:
            self._writer.close()
        if self._timing is not None:
            self._timing.close()
            self._timing = None
        t = self.table
        return NodeResult(
            winner=t.winner, fault=t.fault, transcript=self.transcript_path, head=t.head,
            totals=list(t.engine.totals) if t.engine else [], seat=t.me,
            names=[p.name for p in t.players], dropped=list(self.dropped),
        )

    async def _flush(self, mesh: Mesh) -> None:
        await trio.sleep(0.3)

    async def _inbound_loop(self, mesh: Mesh) -> None:
        async for ev in mesh.inbound:
            if isinstance(ev, Frame):
                payload = ev.payload
                if payload[:1] == ENVELOPE:
                    await self._call(self.table.receive, payload[1:], ev.seat, link=ev.seat)
                    await self._decide()
                elif payload[:1] == SYNC and len(payload) == 5:
                    have = int.from_bytes(payload[1:5], "big")
                    # answer each starting point once per link (no amplification by repeats)
                    if have not in self._synced.setdefault(ev.seat, set()):
                        self._synced[ev.seat].add(have)
                        for frame in self.table.frames[have:]:
                            await mesh.send(ev.seat, ENVELOPE + frame)
                elif payload:
                    log.warning("seat %s sent an unknown payload type %r", ev.seat, payload[:1])
                    self._drop_junk(ev.seat, self.evidence.unknown_payload(ev.seat, payload))
            elif isinstance(ev, PeerUp):
                self._synced.pop(ev.seat, None)
                await mesh.send(ev.seat, SYNC + len(self.table.frames).to_bytes(4, "big"))
            elif isinstance(ev, PeerDown):
                log.info("link to seat %s down: %s", ev.seat, ev.reason)

    async def _intent_loop(self) -> None:
        async for intent in self._intent_recv:
            try:
                await self._call(self.table.intent, intent)
            except tbl.IntentError as exc:
                if self.on_reject is not None:
                    self.on_reject(str(exc))
            await self._decide()

    async def _decide(self) -> None:
        """Ask the decider while this seat has a decision to make (bots answer at once)."""
        while self.decide is not None and not self._done.is_set():
            # Several tasks call this (inbound frames, finished jobs): look at the table and
            # act under one lock, so two of them never answer the same question.
            async with self._lock:
                need = self.table.needs_decision()
                if need is None:
                    return
                intent = self.decide(self.table.view(), need)
                if intent is None:
                    return
                try:
                    outs = await trio.to_thread.run_sync(self.table.intent, intent)
                except tbl.IntentError as exc:
                    log.error("decider chose an illegal %s: %s", intent, exc)
                    return
                await self._handle(outs)

    async def _timeout_loop(self) -> None:
        while not self._done.is_set():
            step = self.table.expected()
            limit = self.timeouts.decision if step and step.kind in ("draw", "discard", "reenter") else self.timeouts.protocol
            if step and step.kind == "agree":
                limit = self.timeouts.agree
            progressed = self._progress
            with trio.move_on_after(limit):
                await progressed.wait()
                continue
            step = self.table.expected()
            if step is not None and step.seat != self.table.me:
                await self._call(self.table.timeout)


# ------------------------------------------------------------------ lobby helpers


def peers_of(table: tbl.Table) -> dict[int, PeerAddr]:
    out = {}
    for i, p in enumerate(table.players):
        host, port = lob.parse_addr(p.addr)
        out[i] = PeerAddr(host, port, p.key)
    return out


async def host_lobby(
    table: tbl.Table,
    listener: Any,
    *,
    seats: int,
    on_seated: Callable[[tbl.Table], Any] | None = None,
    approve: Callable[[lob.JoinRequest, str], Awaitable[bool]] | None = None,
    task_status: Any = trio.TASK_STATUS_IGNORED,
) -> None:
    """Host side: accept joiners on ``listener`` until ``seats`` players sit, then sign the
    seating and hand every joiner the offer and the seating. Returns when all are told.
    ``approve(request, source_ip)`` (a person asked; None = open, first-come seating) must
    return True before a joiner who accepted the offer is seated."""
    full = trio.Event()
    told = 0
    waiting: list[trio.Event] = []

    async def on_join(req: lob.JoinRequest, link: Any) -> None:
        nonlocal told
        if full.is_set():
            await link.send(msgpack.packb({"error": "the table is full"}))
            return
        peer_ip = _peer_ip(link)
        _, port = req.listen_host_port
        # The joiner reads the offer first and sits down only if it accepts it (rules, k, host
        # key), so a refusal never leaves a seat taken by someone who has gone.
        await link.send(msgpack.packb({"offer": table.frames[0]}))
        with trio.move_on_after(30):
            answer = await link.receive()
        if answer != b"sit" or full.is_set():
            return
        if approve is not None and not await approve(req, peer_ip):
            await link.send(msgpack.packb({"error": "the host did not let you sit down"}))
            return
        if full.is_set():
            await link.send(msgpack.packb({"error": "the table is full"}))
            return
        try:
            seat = table.seat_host(req.name, req.public_key, lob.format_addr(peer_ip, port))
        except tbl.IntentError as exc:
            await link.send(msgpack.packb({"error": str(exc)}))
            return
        await link.send(msgpack.packb({"seat": seat}))
        if on_seated is not None:
            on_seated(table, seat)
        if len(table.pending_players) >= seats:
            full.set()
        await full.wait()
        await started.wait()
        await link.send(msgpack.packb({"seating": table.frames[1]}))
        told += 1
        done_one.set()

    started = trio.Event()
    done_one = trio.Event()
    async with trio.open_nursery() as nursery:
        await nursery.start(partial(lob.serve_lobby, listener, on_join, identity=table.identity))
        task_status.started()
        await full.wait()
        table.start()  # signs the seating (and the host's agree when it auto-agrees)
        started.set()
        # wait until every joiner got the seating (or a short grace for dead links)
        with trio.move_on_after(10):
            while told < seats - 1:
                await done_one.wait()
                done_one = trio.Event()
        nursery.cancel_scope.cancel()


def _peer_ip(link: Any) -> str:
    stream = getattr(link, "stream", None) or getattr(link, "_stream", None)
    stream = getattr(stream, "transport_stream", stream)  # under TLS, the socket is below
    sock = getattr(stream, "socket", None)
    try:
        return sock.getpeername()[0] if sock is not None else "127.0.0.1"
    except OSError:
        return "127.0.0.1"


async def join_lobby(
    identity: Any, host: str, port: int, *, name: str, listen_port: int, timeout: float = 600.0,
    check_offer: Callable[[bytes, bytes], Any] | None = None, expect_fingerprint: str | None = None,
) -> tuple[bytes, bytes]:
    """Joiner side: sit down at ``host:port`` over TLS, pinning ``expect_fingerprint`` if
    given; returns the offer and seating frames. ``check_offer(offer_frame, host_tls_key)`` may
    refuse the table (raise) before we wait to be seated. Any hostile answer raises
    :class:`~.lobby.LobbyError` (:class:`~.lobby.Refused`, :class:`~.lobby.BadAnswer`)."""
    link, host_key = await lob.connect_lobby(host, port, identity, name=name, listen_addr=lob.format_addr("0.0.0.0", listen_port),
                                             expect_fingerprint=expect_fingerprint)
    async with link:
        offer = await lob.read_answer(link, "offer", bytes, closed="the host refused the join request")
        if check_offer is not None:
            check_offer(offer, host_key)  # raises: we leave without taking a seat
        await link.send(b"sit")
        await lob.read_answer(link, "seat", int, closed="the host closed the lobby")
        with trio.fail_after(timeout):
            seating = await lob.read_answer(link, "seating", bytes, closed="the host closed the lobby before seating")
        return offer, seating


async def run_seat(
    table: tbl.Table,
    listeners: Any,
    *,
    decide: Decider | None,
    on_update: Callable[[v.SeatView], Any] | None = None,
    transcript_path: Path | None = None,
    timeouts: Timeouts | None = None,
    mesh_config: MeshConfig | None = None,
    node_ready: Callable[[Node], Any] | None = None,
    on_reject: Callable[[str], Any] | None = None,
) -> NodeResult:
    """Build the mesh for a seated table and play to the end."""
    node = Node(table, decide=decide, on_update=on_update, transcript_path=transcript_path,
                timeouts=timeouts, on_reject=on_reject)
    if node_ready is not None:
        node_ready(node)
    await node.persist_existing()
    mesh = Mesh(table.me, table.game, table.identity.private_key.sign, peers_of(table),
                listener=listeners if listeners else None, config=mesh_config)
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.run)
        result = await node.run(mesh)
        await mesh.aclose()
        nursery.cancel_scope.cancel()
    return result


def new_rng() -> Any:
    """Production randomness: the OS CSPRNG through :mod:`secrets`."""
    return secrets
