"""A live node: one seat's sans-I/O :class:`~p2p_chinchon.table.Table` driven over trio.

The node owns the I/O around the table: the full mesh to every other seat, the transcript file
(every accepted envelope is appended and fsynced *before* anything that depends on it is sent),
per-action timeouts, and the decision maker (a bot, the UI, or the plain line mode) that turns a
:class:`~p2p_chinchon.view.SeatView` into intents. This module holds the driver
(:class:`Node`: its loops, the rematch vote at game over) and :func:`run_seat`, which builds a
seated table's mesh and runs the node on it. Around it, each in its own module:

- :mod:`.clocks`: the clocks as a sans-I/O machine (:class:`~.clocks.Clocks`: from ``now``, the
  table and a snapshot of presence to the current :class:`~.status.Wait`), fed once a tick;
- :mod:`.presence`: who this node hears, who is away and who came back, as a sans-I/O machine
  (:class:`~.presence.Presence`, fed every frame, heartbeat and link event), the heartbeat
  and its timings;
- :mod:`.verdicts`: what the node does once a tick and when a wait runs out
  (:class:`~.verdicts.Verdicts`: a :class:`~.verdicts.Verdict` the node applies);

- :mod:`.seating`: the lobby runners (:func:`~.seating.host_lobby`, :func:`~.seating.join_lobby`)
  that seat a table before the node runs (the host's decisions sans-I/O in :mod:`.admission`);
- :mod:`.status`: what the node publishes while it waits (:class:`~.status.NodeStatus`,
  :class:`~.status.Wait`) and how that is said;
- :mod:`.secretsfile`: the secrets a seat keeps beside its transcript to rejoin.

Their names stay importable from here (``from p2p_chinchon.net.node import host_lobby`` ...).

Mesh payloads carry a one-byte type: ``E`` + an envelope frame, or ``S`` + 4-byte big-endian
chain length ("I hold this many envelopes; send me the rest"), sent on every (re)connect so
a dropped link resumes from the transcript, and ``H`` (empty body), a heartbeat sent every
second on every link: a seat heard from neither by frames nor heartbeats for
:data:`SILENT_AFTER` seconds, or whose link is down, is *absent* (:mod:`.presence`). Heartbeats
are link-level (never chain envelopes): they prove nothing and are never blamed on anyone.

Waiting (docs/reliability.md): every wait has a named seat, a reason and a deadline, published
as a :class:`NodeStatus` to :meth:`Events.status` once a second while it lasts. A seat that is
*present* but silent past its deadline is faulted ``timeout``; one that is *absent* is waited
for ``rejoin_wait`` seconds (a table option) and then recorded ``absent``, never as a cheat; a
node that hears nobody at all (cut off) blames nobody. This seat's own decision runs on the turn
clock (table option ``turn_time``): when it runs out the node plays the bot's move and says so.
The timings the node's loops read (``LINGER_FINISHED``, ``REMATCH_WAIT`` ...) are names of this
module, where a test may patch them; those of presence and the verdicts (``SILENT_AFTER``,
``SHOWN_AFTER``, ``WAKE_AFTER``, ``NOBODY_ANSWERS`` ...) are names of those modules, read
there (patch them there).

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
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import trio

from p2p_chinchon import table as tbl, view as v
from p2p_chinchon.autoplay import bot_decider
from p2p_chinchon.bots import BEST_LEVEL, make_bot
from p2p_chinchon.i18n import NOBODY
from p2p_chinchon.net import lobby as lob, verdicts as vd
from p2p_chinchon.net.clocks import (
    Clocks,
    Timeouts as Timeouts,  # (re-exported)
)
from p2p_chinchon.net.evidence import EvidenceLog
from p2p_chinchon.net.mesh import Frame, Mesh, MeshConfig, PeerAddr, PeerDown, PeerUp, RelayPlan
from p2p_chinchon.net.presence import HEARTBEAT, HEARTBEAT_EVERY, Presence, Seen, heard_by, heartbeat

# Moved to their own modules; still importable from here, where the commands and tests find them.
from p2p_chinchon.net.seating import (  # noqa: F401  (re-exported)
    LOBBY_RETRY as LOBBY_RETRY,
    _connect_patiently as _connect_patiently,
    host_lobby as host_lobby,
    join_lobby as join_lobby,
    peers_of,
)
from p2p_chinchon.net.secretsfile import (  # the commands and tests import these from here
    Secrets,
    next_secrets,
    read_secrets as read_secrets,
    secrets_path_for as secrets_path_for,
    write_secrets as write_secrets,
)
from p2p_chinchon.net.status import (
    DECISIONS as DECISIONS,  # (re-exported)
    RECORD,
    TOLD,
    NodeStatus,
    Wait,
    clock as clock,  # noqa: F401  (re-exported)
    english,
    error_text as error_text,  # (re-exported)
)
from p2p_chinchon.net.verdicts import SHOWN_AFTER, Verdicts
from p2p_chinchon.transcript import TranscriptError, TranscriptWriter

if TYPE_CHECKING:  # imported when mDNS is on only (zeroconf takes a while to load)
    from p2p_chinchon.net.discovery import SeatLocator

log = logging.getLogger(__name__)

ENVELOPE = b"E"
SYNC = b"S"
REMATCH = b"R"  # after a finished game: this seat's rematch vote, b"R\x01" yes, b"R\x00" no (unsigned)
# R + one of these: this seat's command cannot play a rematch, and why (the i18n key the others say)
REMATCH_NONE = b"\x02"  # a game it came back to (resumed)
REMATCH_CODE = b"\x03"  # a code-word table
REMATCH_ONE = b"\x04"  # a seat that plays one game (a bot seat not told to play on, a person with no screen)
NO_REMATCH = {"resumed": REMATCH_NONE, "code": REMATCH_CODE, "one_game": REMATCH_ONE}
NO_REMATCH_SAID = {REMATCH_NONE: "rematch_none", REMATCH_CODE: "rematch_none_code", REMATCH_ONE: "rematch_none_one"}
REMATCH_WAIT = 180.0  # seconds the rematch question waits for every seat's answer
LINGER_FINISHED = 30.0  # seconds a finished node waits for every seat in the game to hold its whole chain
RESYNC_BUDGET = 2  # chains' worth of envelopes answered to one seat per link connection
LINGER_STOPPED = 2.0  # the same after a fault or a leave (the others may be gone)
TIMING_ENV = "P2P_CHINCHON_TIMING"
STALLED = "stalled"  # the table's fault rule when a node stops waiting, signing nothing (resumable)
# s a finished or stopped node stays for a seat removed while away that has not yet been
# handed its removal (it may wake and ask); a told seat is one that asked past it
LINGER_REMOVED = LINGER_FINISHED
TOLD_AFTER = 1.0  # s after its removal left on a live link that a removed seat counts as told
# s a node that learned its own removal (absent) keeps its links up before it exits: long
# enough past TOLD_AFTER for the others to count it told and end their linger for it
REMOVED_STAYS = TOLD_AFTER + 1.5


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


class Events:
    """What a node tells the player of its seat (a UI, a console, a bot), and asks it.

    Subclass and override what you need; every method is optional (the defaults do nothing
    and ``decide`` leaves every decision to :meth:`Node.submit`). All calls come from trio.
    """

    def decide(self, view: v.SeatView, need: str) -> Any:
        """An intent for ``need`` ("agree", "draw", "discard", "reenter"), or None: the answer
        comes later through :meth:`Node.submit` (a person)."""
        return None

    def update(self, view: v.SeatView) -> None:
        """The seat's view changed (redraw)."""

    def status(self, status: NodeStatus) -> None:
        """Presence and the current wait changed (about once a second while waiting)."""

    def reject(self, reason: str) -> None:
        """The table refused this seat's last intent; ``reason`` is one sentence."""

    def notice(self, text: str, key: str = "", fields: dict[str, Any] | None = None,
               lasting: bool = False) -> None:
        """A one-line message outside any view (e.g. "time is up: the bot plays for you
        (draw)"): ``text`` in English; ``key`` and ``fields``, when given, the same message in
        :mod:`p2p_chinchon.i18n`'s catalogues, for a UI in another language. ``lasting``:
        the person must be able to read it after the fact (a move made for them), so a UI
        keeps it where the next status line does not replace it."""

    async def wait_leave(self) -> None:
        """Return when the player asks to leave before the game begins (lobby); never, by
        default. The host then closes the table, a joiner frees its seat."""
        await trio.sleep_forever()

    def listening(self, port: int) -> None:
        """Host: the lobby accepts joiners on ``port``."""

    def offers_rematch(self) -> bool:
        """Whether this seat takes part in a rematch vote at game over (:meth:`rematch`); False,
        the default: it tells the others it cannot play one, and why (:meth:`no_rematch`)."""
        return False

    def no_rematch(self) -> str:
        """Why this seat plays no rematch when it does not :meth:`offers_rematch`: a key of
        :data:`NO_REMATCH` ("resumed", "code", "one_game", the default)."""
        return "one_game"

    async def rematch(self, view: v.SeatView) -> bool:
        """At game over (every seat still in the game), when :meth:`offers_rematch`: does this
        seat's player want a rematch (same seats, same rules, a new game)?"""
        return False

    def rematch_said(self, text: str, key: str, fields: dict[str, Any]) -> None:
        """How the rematch vote ended (everyone agreed, or who declined or left)."""
        self.notice(text, key, fields, lasting=True)

    def table_ready(self, table: tbl.Table) -> None:
        """The seat's :class:`Table` exists (host: before anyone sits; joiner: once seated)."""

    def node_ready(self, node: Node) -> None:
        """The :class:`Node` exists, before the mesh starts (UIs keep it to :meth:`Node.submit`)."""


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
    error: str | None = None  # why this node stopped itself (disk, internal error), one line
    rematch: bool = False  # every seat agreed to play again (same seats and rules, a new game)


class Node:
    """Drives one :class:`Table` over a :class:`Mesh`; tells ``events`` what happens."""

    def __init__(
        self,
        table: tbl.Table,
        events: Events | None = None,
        *,
        transcript_path: Path | None = None,
        timeouts: Timeouts | None = None,
        on_output: Callable[[Any], Any] | None = None,
    ) -> None:
        self.table = table
        self.events = events or Events()
        self.on_output = on_output
        self.transcript_path = transcript_path
        self.timeouts = timeouts or Timeouts()
        self.clock = Clocks(table, self.timeouts)  # the turn clock, the limits, stall_limit
        self._writer: TranscriptWriter | None = None
        self._on_disk = 0  # envelopes already in the transcript file (a rejoin reopens it)
        self._lock = trio.Lock()
        # peers' shuffle proofs are checked one at a time: run side by side they would
        # take the cores from the receive-prove-send path the next shuffler waits on
        self._checks = trio.CapacityLimiter(1)
        self._mesh: Mesh | None = None
        self.relay: str | None = None  # "host:port" of a code-word table's transit relay (kept with the secrets)
        self._done = trio.Event()
        self._progress = trio.Event()
        self._intent_send, self._intent_recv = trio.open_memory_channel[Any](16)
        self.dropped: list[tuple[int | None, str]] = []
        self._synced: dict[int, dict[int, int]] = {}  # seat -> {index asked: our length when answered}
        self._has: dict[int, int] = {}  # seat -> the longest chain it told us it holds (S payloads)
        self._resent: dict[int, int] = {}  # seat -> envelopes answered on its current link
        self._asked: set[tuple[int, int]] = set()  # (seat, our length) asked for after it said it had more
        self.evidence = EvidenceLog(None if transcript_path is None
                                    else transcript_path.with_name(transcript_path.name + ".evidence"))
        self._timing = _timing_log()
        self.presence = Presence()  # who is heard, away, back (fed with trio's clock)
        self.verdicts = Verdicts()  # what a tick, and a wait that ran out, call for
        self._votes: dict[int, bool | None] = {}  # seat -> its rematch vote (None: cannot play one)
        self._no_rematch: dict[int, bytes] = {}  # seat -> why it cannot play one (a NO_REMATCH value)
        self.rematch = False
        self._status_text = ""
        # when we last asked every peer to fill a gap: (chain length, envelopes buffered), time
        self._gap_asked: Any = None
        self._gap_at = 0.0
        self.status = NodeStatus()
        self.error: str | None = None
        self._bot: Any = None
        self.secrets_path: Path | None = None
        self.kept_secrets: Secrets = {}  # what the secrets file holds (see _save_secrets)
        self.keep_identity = False
        self._early_jobs: list[tbl.Job] = []
        # while presence.listening: this node was asleep or reached nobody; it treats every seat as
        # unknown, signs nothing, and catches up before it speaks (docs/reliability.md)
        self._listen_asked: set[int] = set()  # seats asked for what follows our head meanwhile
        self._listen_asked_at = 0.0
        self._grew_at = 0.0  # when our chain last grew
        # envelopes of our chain that are on disk: only those ever leave this node (a frame the
        # disk refused must not reach a peer through a resync answer)
        self._stored = 0
        self._sent_upto: dict[int, tuple[int, float]] = {}  # seat -> (our envelopes it was sent up to, when)
        self._told_seats: set[int] = set()  # removed seats counted told (for good: see _told)
        self._nobody = False  # stopped because nobody of the table answered this node back from away

    # -------------------------------------------------------------- table calls

    async def _call(self, fn: Callable[..., list[Any]], *args: Any, link: int | None = None) -> None:
        """Run a table method off the event loop (shuffle proofs take a while; libsodium
        releases the GIL), then persist and send what it produced, in that order. ``link``:
        the seat whose link brought the frame (evidence is counted against it). Nothing once
        the node is done: while it lingers (:meth:`_linger`) a seat that left signs nothing more."""
        if self._done.is_set():
            return
        async with self._lock:
            if self._done.is_set():
                return
            outs = await trio.to_thread.run_sync(fn, *args)
            await self._handle(outs, link)

    async def _handle(self, outs: list[Any], link: int | None = None) -> None:
        # secrets first: a message that depends on them may be on disk before it is sent
        if any(isinstance(o, tbl.Send) for o in outs) and not self._save_secrets():
            return
        sends = []
        # every accepted envelope on disk with one fsync, before anything else of this call
        accepted = [out for out in outs if isinstance(out, tbl.Accepted)]
        if accepted and not self._persist_or_leave(accepted):
            return
        for out in outs:
            if isinstance(out, tbl.Accepted):
                self._grew_at = trio.current_time()
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
        self._forward(accepted, link)
        self.events.update(self.table.view())

    def _keep_evidence(self, ev: tbl.Evidence, link: int | None = None) -> None:
        """Rejected frames go to ``<transcript>.evidence``, bounded (:mod:`.evidence`); a link
        that keeps sending junk is dropped, counted against its seat."""
        self.dropped.append((ev.seat, ev.rule))
        self._drop_junk(link, self.evidence.keep(ev.seat, ev.rule, ev.reason, ev.frames, link))

    def _drop_junk(self, link: int | None, why: str | None) -> None:
        if why is not None and link is not None and self._mesh is not None:
            log.warning("%s", why)
            self._mesh.drop(link, why)

    def _persist(self, accepted: list[tbl.Accepted]) -> None:
        """Append accepted envelopes to the transcript (one fsync for them all) and count them
        as stored (only stored envelopes ever leave this node). Raises OSError or
        TranscriptError; an envelope already on disk (a rejoin) must be the same frame."""
        if self.transcript_path is not None:
            if self._writer is None:
                self.transcript_path.parent.mkdir(parents=True, exist_ok=True)
                self._writer = TranscriptWriter(self.transcript_path, game=self.table.lobby.game or None)
                self._on_disk = len(self._writer.recovered.frames)
            wrote = False
            for out in accepted:
                if out.index < self._on_disk:
                    if self._writer.recovered.frames[out.index] != out.frame:
                        raise TranscriptError(f"{self.transcript_path} holds another envelope at seq {out.index}")
                else:
                    self._writer.append(out.env, sync=False)
                    wrote = True
            if wrote:
                self._writer.sync()
        self._stored = max(self._stored, *(out.index + 1 for out in accepted))

    def _persist_or_leave(self, accepted: list[tbl.Accepted]) -> bool:
        """Persist, or on a write failure leave the table saying why (the others must
        not wait for us). False when the node is stopping."""
        try:
            self._persist(accepted)
            return True
        except (OSError, TranscriptError) as exc:
            self._fail(f"cannot write the transcript: {error_text(exc)}")
            return False

    def _fail(self, reason: str) -> None:
        """Stop this node: sign a ``leave`` naming ``reason`` for the others (sent, not
        persisted: the disk may be what failed) and end the run."""
        if self.error is None:
            self.error = reason
        try:
            outs = self.table.intent(v.Leave(reason[:256]))
        except tbl.IntentError:
            outs = []
        frames = [o.frame for o in outs if isinstance(o, tbl.Send)]
        if self._mesh is not None and frames:
            for frame in frames:
                for seat in self._mesh.peer_seats:
                    self._mesh.send_nowait(seat, ENVELOPE + frame)
        self._done.set()

    def _save_secrets(self) -> bool:
        """Write this seat's secrets (0600, atomically) before any message that depends on them
        is persisted or sent; False (and the node leaves) when that fails. What the file keeps:
        :func:`.secretsfile.next_secrets`."""
        if self.secrets_path is None:
            return True
        kept = self.kept_secrets
        new = next_secrets(kept, self.table.seat_secrets(), self.table.lobby.identity,
                           keep_identity=self.keep_identity, relay=self.relay)
        if new == kept:
            return True
        try:
            write_secrets(self.secrets_path, new)
        except OSError as exc:
            self._fail(f"cannot save this seat's secrets: {error_text(exc)}")
            return False
        self.kept_secrets = new
        return True

    def _log_timing(self, out: tbl.Accepted) -> None:
        env = out.env
        src = f" {env.body['source']}" if env.kind == "draw" else ""
        self._timing.write(f"{time.time():.6f} {self.table.lobby.me} {out.index} {env.seat} {env.kind}{src}\n")

    async def _run_job(self, job: tbl.Job) -> None:
        """Heavy pure work (a peer's proof, our shuffle's multiplications) in a worker thread:
        libsodium releases the GIL, and the event loop keeps serving the mesh meanwhile."""
        limiter = self._checks if job.kind == "verify_shuffle" else None
        result = await trio.to_thread.run_sync(tbl.run_job, job, limiter=limiter)
        await self._call(self.table.job_done, job.id, result)
        await self._decide()

    def start_job(self, job: tbl.Job) -> None:
        """Run a table :class:`Job` once the node runs (a rejoin's replay left some pending)."""
        self._early_jobs.append(job)

    def submit(self, intent: Any) -> None:
        """Queue an intent from the UI (thread-safe within trio; use TrioToken from outside)."""
        self._intent_send.send_nowait(intent)

    async def persist_existing(self) -> None:
        """Write envelopes the table accepted before the node existed (offer, seating)."""
        frames = [tbl.Accepted(i, frame, self.table.chain.envelopes[i]) for i, frame in enumerate(self.table.chain.frames)]
        if frames:
            self._persist_or_leave(frames)

    # -------------------------------------------------------------- main loop

    async def run(self, mesh: Mesh) -> NodeResult:
        self._mesh = mesh
        try:
            async with trio.open_nursery() as nursery:
                self._nursery = nursery
                for job in self._early_jobs:
                    nursery.start_soon(self._run_job, job)
                nursery.start_soon(self._inbound_loop, mesh)
                nursery.start_soon(self._intent_loop)
                nursery.start_soon(self._clock_loop)
                nursery.start_soon(self._heartbeat_loop, mesh)
                if not self._done.is_set():
                    await self._call(self.table.poll)
                    await self._decide()
                await self._done.wait()
                # our last envelopes (game_end / fault / leave) must reach everyone: stay until
                # each seat still linked says it holds our whole chain (bounded)
                await self._linger(mesh, LINGER_FINISHED if self.table.flow.finished else LINGER_STOPPED)
                if self.table.flow.finished and self.table.flow.fault is None and not self.table.flow.left:
                    self.rematch = await self._rematch(mesh)
                nursery.cancel_scope.cancel()
        except Exception as exc:  # noqa: BLE001 - a bug must not leave the others waiting
            log.debug("node failed", exc_info=True)  # the user gets one line (NodeResult.error)
            self._fail(f"internal error: {error_text(exc)}")
            with trio.move_on_after(1.0):
                await self._flush(mesh)
        finally:
            if self._writer is not None:
                self._writer.close()
            if self._timing is not None:
                self._timing.close()
                self._timing = None
        t = self.table
        if self.secrets_path is not None and (t.flow.finished or (t.flow.fault is not None and t.flow.fault.rule != STALLED)):
            try:
                self.secrets_path.unlink(missing_ok=True)  # the game is over for us: nothing to rejoin
            except OSError as exc:
                log.warning("cannot remove %s: %s", self.secrets_path, exc)
        return NodeResult(
            winner=t.flow.winner, fault=replace(t.flow.fault, detail=NOBODY) if self._nobody and t.flow.fault else t.flow.fault,
            transcript=self.transcript_path, head=t.chain.head,
            totals=list(t.flow.engine.totals) if t.flow.engine else [], seat=t.lobby.me,
            names=[p.name for p in t.lobby.players], dropped=list(self.dropped), error=self.error,
            rematch=self.rematch,
        )

    async def _flush(self, mesh: Mesh) -> None:
        await trio.sleep(0.3)

    async def _linger(self, mesh: Mesh, limit: float) -> None:
        """After the table finished or stopped: tell every seat our chain length (``S``), then
        wait, at most ``limit`` seconds, until each seat has said it holds that many envelopes,
        answering what it asks for meanwhile (the inbound loop runs on). A finished node waits
        for every seat still in the game, linked or not (the mesh redials a cut link, and its
        ``S`` exchange hands the seat the rest); a stopped one for the seats still linked. A
        node removed by the others stays :data:`REMOVED_STAYS` s, so that they count it told
        (:meth:`_told`) and need not linger for it.
        Exiting at once could strand the last envelope of the game in a cut or closing link:
        its receiver would then wait for a seat that is gone, and end the game without it."""
        n = self._stored
        for seat in list(self.presence.up):
            mesh.send_nowait(seat, SYNC + n.to_bytes(4, "big"))
        start = trio.current_time()
        t = self.table
        every = t.flow.finished and t.flow.fault is None

        def waited(s: int) -> bool:
            return s in self.presence.up or (every and s not in t.turns.unsigned_end)

        removals = self._removals_untold()
        if removals:  # a seat removed while away may wake and ask: stay a little longer for it
            limit = max(limit, LINGER_REMOVED)
        fault = t.flow.fault
        removed = fault is not None and fault.rule == "removed" and fault.detail == "absent" and bool(self.presence.up)
        if removed:  # the others linger for us until our links outlive their removal's sends
            limit = max(limit, REMOVED_STAYS)
            self._publish(NodeStatus())
        with trio.move_on_after(limit):
            await trio.sleep(0.05)  # our sends leave before a quick exit
            while True:
                now = trio.current_time()
                lacking = [(s, RECORD) for s in self._others() if waited(s) and self._has.get(s, 0) < n]
                lacking += [(s, TOLD) for s, end in removals.items() if not self._told(s, end, now)]
                if not lacking and not (removed and now - start < REMOVED_STAYS):
                    break
                if lacking and now - start >= SHOWN_AFTER:  # never a silent wait: say for whom, how long
                    seat, what = lacking[0]
                    self._publish(NodeStatus((), Wait(seat, self.table.lobby.players[seat].name,
                                                      what, start + limit - now)))
                await self._progress_or(0.1)
        self._publish(NodeStatus())

    def _removes(self) -> dict[int, list[int]]:
        """``{seat: positions of the removes that name it}`` in our chain."""
        at: dict[int, list[int]] = {}
        for i, env in enumerate(self.table.chain.envelopes):
            if env.kind == "remove" and isinstance(env.body, dict) and isinstance(env.body.get("seat"), int):
                at.setdefault(env.body["seat"], []).append(i)
        return at

    def _removals_untold(self) -> dict[int, int]:
        """``{seat: chain length that holds its whole removal}`` for the seats this chain
        removed while away (``absent``: a seat that left knows it), except those counted told
        (:meth:`_told`)."""
        t = self.table
        if not any(r == "absent" and s != t.lobby.me and s not in self._told_seats for s, r in t.removal.removed.items()):
            return {}  # (no scan of the chain)
        ends = {s: at[-1] + 1 for s, at in self._removes().items()
                if t.removal.removed.get(s) == "absent" and s != t.lobby.me and s not in self._told_seats}
        return {s: end for s, end in ends.items() if self._has.get(s, 0) < end}

    def _told(self, seat: int, end: int, now: float) -> bool:
        """Whether removed ``seat`` holds its removal: it said it holds ``end`` envelopes, or
        they were sent on a link still up :data:`TOLD_AFTER` s later (a removed seat on
        another branch learns from the removes alone, and its chain stays shorter)."""
        sent = self._sent_upto.get(seat)
        told = self._has.get(seat, 0) >= end or (
            sent is not None and sent[0] >= end and now - sent[1] >= TOLD_AFTER and seat in self.presence.up)
        if told:
            self._told_seats.add(seat)  # for good: it is not waited for once its link closes
        return told

    def _note_told(self, now: float) -> None:
        """Count each removed seat told as soon as it is (:meth:`_told`), mid-game too: a seat
        that comes back, learns its removal and exits is not waited for when the game ends."""
        for seat, end in self._removals_untold().items():
            self._told(seat, end, now)

    async def _rematch(self, mesh: Mesh) -> bool:
        """The rematch vote at game over: ask this seat's player (:meth:`Events.rematch`), send
        the answer to every seat, and wait (at most :data:`REMATCH_WAIT`) for everyone's. True
        only when every seat said yes; a no, a link that closes, or the time running out ends
        it, and the player's question is withdrawn. The vote is unsigned and binds nothing:
        a rematch is a new game, with its own lobby, seating, agree and shuffles."""
        others = self._others()
        if not self.events.offers_rematch():
            # say so, rather than close the links: the others then name the real reason
            why = NO_REMATCH.get(self.events.no_rematch(), REMATCH_ONE)
            for seat in others:
                if seat in self.presence.up:
                    await mesh.send(seat, REMATCH + why)
            if others:
                await trio.sleep(0.3)  # it leaves before a quick exit closes the links
            return False
        mine: list[bool] = []

        def said(why: str, seat: int | None = None) -> bool:
            name = self.table.lobby.players[seat].name if seat is not None else ""
            self.events.rematch_said(english(why, name=name), why, {"name": name})
            return why == "rematch_on"

        async with trio.open_nursery() as nursery:
            async def ask() -> None:
                answer = await self.events.rematch(self.table.view()) is True
                for seat in others:
                    if seat in self.presence.up:
                        await mesh.send(seat, REMATCH + (b"\x01" if answer else b"\x00"))
                await trio.sleep(0.3)  # our vote leaves before a quick exit closes the links
                mine.append(answer)

            nursery.start_soon(ask)
            try:
                deadline = trio.current_time() + REMATCH_WAIT
                with trio.move_on_after(REMATCH_WAIT):
                    while True:
                        none = [s for s in others if self._votes.get(s) is None and s in self._votes]
                        if none:
                            return said(NO_REMATCH_SAID.get(self._no_rematch.get(none[0], REMATCH_NONE),
                                                            "rematch_none"), none[0])
                        no = [s for s in others if self._votes.get(s) is False]
                        if no:
                            return said("rematch_declined", no[0])
                        waiting = [s for s in others if s not in self._votes]
                        if mine and waiting:  # never a silent wait: whom, and how long
                            self._publish(NodeStatus((), Wait(waiting[0], self.table.lobby.players[waiting[0]].name,
                                                              "rematch", deadline - trio.current_time())))
                        gone = [s for s in others if s not in self.presence.up and s not in self._votes]
                        if gone:
                            return said("rematch_gone", gone[0])
                        if mine and not mine[0]:
                            return said("rematch_you_no")
                        if mine and all(self._votes.get(s) for s in others):
                            return said("rematch_on")
                        await trio.sleep(0.1)
                return said("rematch_timeout")
            finally:
                self._publish(NodeStatus())
                nursery.cancel_scope.cancel()  # a question still open leaves the screen

    def take_vote(self, seat: int, vote: bytes) -> None:
        """``seat``'s rematch vote (the byte after ``R``), its first only: ``0x01`` yes, one of
        :data:`NO_REMATCH_SAID` its command cannot play one (and why), anything else no."""
        if seat in self._votes:
            return
        if vote in NO_REMATCH_SAID:
            self._no_rematch[seat] = vote
        self._votes[seat] = None if vote in NO_REMATCH_SAID else vote == b"\x01"

    def showdown_seen(self) -> None:
        """This seat's person put the last showdown away (:class:`~p2p_chinchon.view.ShowdownSeen`):
        a turn of ours that began while it was up has its clock start now."""
        self.clock.showdown_seen(trio.current_time())

    async def _progress_or(self, seconds: float) -> None:
        with trio.move_on_after(seconds):
            await self._progress.wait()

    async def _answer_sync(self, mesh: Mesh, seat: int, have: int) -> None:
        """``seat`` says it holds ``have`` envelopes (``S``): note it, and send it what follows
        in our stored chain. Each starting point is answered once per link and per chain length
        of ours (no amplification by repeats; a repeat after we grew gets the new part), and at
        most :data:`RESYNC_BUDGET` chains' worth per link connection (asking from every starting
        point in turn would otherwise cost quadratic data). A seat removed here is answered from
        its first ``remove`` at the latest: its own head may lie past it on another branch (its
        last envelopes never reached us), and it learns its removal from the whole run alone."""
        if seat in self.table.removal.removed:
            have = min(have, self._removes().get(seat, [have])[0])
        self._note_has(mesh, seat, have)
        answered = self._synced.setdefault(seat, {})
        mine = self._stored
        spent = self._resent.get(seat, 0)
        if have < mine and answered.get(have, -1) < mine:
            answered[have] = mine
            part = self.table.chain.frames[have:mine][:max(0, RESYNC_BUDGET * mine - spent)]
            self._resent[seat] = spent + len(part)
            if have + len(part) > self._sent_upto.get(seat, (0, 0.0))[0]:
                self._sent_upto[seat] = (have + len(part), trio.current_time())
            if len(part) < mine - have:
                log.warning("seat %s asked for more than %d chains' worth of envelopes on "
                            "one link: not answered", seat, RESYNC_BUDGET)
            for frame in part:
                await mesh.send(seat, ENVELOPE + frame)

    async def _inbound_loop(self, mesh: Mesh) -> None:
        async for ev in mesh.inbound:
            if isinstance(ev, Frame):
                self._hear(ev.seat)
                payload = ev.payload
                if payload[:1] == ENVELOPE:
                    await self._call(self.table.receive, payload[1:], ev.seat, link=ev.seat)
                    await self._decide()
                elif payload[:1] == SYNC and len(payload) == 5:
                    await self._answer_sync(mesh, ev.seat, int.from_bytes(payload[1:5], "big"))
                elif payload[:1] == HEARTBEAT:
                    hears = heard_by(payload[1:], len(self.table.lobby.players), ev.seat)
                    if hears is not None:
                        self.presence.heartbeat(ev.seat, trio.current_time(), hears)
                elif payload[:1] == REMATCH and len(payload) == 2:
                    self.take_vote(ev.seat, payload[1:])
                elif payload:
                    log.warning("seat %s sent an unknown payload type %r", ev.seat, payload[:1])
                    self._drop_junk(ev.seat, self.evidence.unknown_payload(ev.seat, payload))
            elif isinstance(ev, PeerUp):
                self.presence.link_up(ev.seat, trio.current_time())
                self._update_presence(trio.current_time())
                self._synced.pop(ev.seat, None)
                self._resent.pop(ev.seat, None)
                await mesh.send(ev.seat, SYNC + len(self.table.chain.frames).to_bytes(4, "big"))
                for vote in self.table.removal.my_votes():  # a vote sent while its link was down
                    await mesh.send(ev.seat, ENVELOPE + vote)
            elif isinstance(ev, PeerDown):
                log.info("link to seat %s down: %s", ev.seat, ev.reason)
                self.presence.link_down(ev.seat)
                self._update_presence(trio.current_time())

    def _note_has(self, mesh: Mesh, seat: int, have: int) -> None:
        """A peer told us its chain length. Longer than ours: ask it for the rest, once per
        length (the last envelopes of a game may have been lost in a link that closed)."""
        if have > self._has.get(seat, -1):
            self._has[seat] = have
        self._progress.set()
        self._progress = trio.Event()
        mine = len(self.table.chain.frames)
        if have > mine and (seat, mine) not in self._asked:
            self._asked.add((seat, mine))
            mesh.send_nowait(seat, SYNC + mine.to_bytes(4, "big"))

    # -------------------------------------------------------------- presence

    def _hear(self, seat: int) -> None:
        now = trio.current_time()
        self.presence.hear(seat, now)
        self._update_presence(now)

    def _update_presence(self, now: float) -> None:
        """Feed the presence machine ``now`` (:meth:`.presence.Presence.update`); a seat back
        is no longer counted gone by the table (no removal of it is signed here any more)."""
        t = self.table
        for seat in self.presence.update(now, self._others(), t.flow.left, len(t.chain.frames)):
            t.removal.present(seat)

    def _forward(self, accepted: list[tbl.Accepted], link: int | None) -> None:
        """Hand envelopes of other seats on to the present seats that said they do not hear
        their signer directly (its link to them is down): its play reaches them now, not at
        their next ask. Seats that say nothing (older nodes) ask as before."""
        if self._mesh is None or not self.presence.hears:
            return
        fresh = self.presence.fresh_hears(trio.current_time())
        for out in accepted:
            signer = out.env.seat
            if signer == self.table.lobby.me:
                continue  # our own went to every linked seat already
            for seat, hears in fresh:
                if seat not in (signer, link) and signer not in hears:
                    self._mesh.send_nowait(seat, ENVELOPE + out.frame)

    def _others(self) -> list[int]:
        t = self.table
        return [i for i in range(len(t.lobby.players)) if i != t.lobby.me and i not in t.flow.left]

    async def _heartbeat_loop(self, mesh: Mesh) -> None:
        while True:
            now = trio.current_time()
            beat = heartbeat(s for s in self._others() if self.presence.present(s, now))
            for seat in list(self.presence.up):
                mesh.send_nowait(seat, beat)
            await trio.sleep(HEARTBEAT_EVERY)

    # -------------------------------------------------------------- decisions

    async def _intent_loop(self) -> None:
        async for intent in self._intent_recv:
            if isinstance(intent, v.ShowdownSeen):
                self.showdown_seen()
                continue
            try:
                await self._call(self.table.intent, intent)
            except tbl.IntentError as exc:
                self.events.reject(str(exc))
            await self._decide()

    async def _decide(self) -> None:
        """Ask the decider while this seat has a decision to make (bots answer at once)."""
        while not self._done.is_set():
            # Several tasks call this (inbound frames, finished jobs): look at the table and
            # act under one lock, so two of them never answer the same question.
            async with self._lock:
                need = self.table.needs_decision()
                if need is None:
                    return
                intent = self.events.decide(self.table.view(), need)
                if intent is None:
                    return
                if not await self._act(intent):
                    return

    async def _act(self, intent: Any) -> bool:
        """Apply this seat's intent (lock held). False when the table refused it."""
        try:
            outs = await trio.to_thread.run_sync(self.table.intent, intent)
        except tbl.IntentError as exc:
            log.error("decider chose an illegal %s: %s", intent, exc)
            return False
        await self._handle(outs)
        return True

    def _bot_intent(self, need: str) -> Any:
        """The move the bot would make for this seat (turn clock ran out)."""
        if need == "agree":
            return v.Leave("did not accept the table in time")
        if self._bot is None:  # the hint's level: the best move we know for the player
            self._bot = bot_decider(make_bot(self.table.lobby.rules, secrets, BEST_LEVEL))
        return self._bot(self.table.view(), need)

    # -------------------------------------------------------------- clocks

    def _seen(self, now: float) -> Seen:
        """What the clocks need of presence now (:meth:`.presence.Presence.seen`)."""
        t = self.table
        return self.presence.seen(now, (s for s in range(len(t.lobby.players)) if s != t.lobby.me), self._others())

    def _deadline(self, step: tbl.Step, now: float) -> Wait:
        """The current wait for ``step`` (:meth:`.clocks.Clocks.deadline`)."""
        return self.clock.deadline(step, now, self._seen(now))

    async def _clock_loop(self) -> None:
        """Once a second (and on every accepted envelope): recompute the wait, publish the
        status, and act on a deadline that passed."""
        if self.table.flow.engine is not None and self.table.lobby.me is not None:
            self._listen(trio.current_time(), "listening")  # a seat back mid-game catches up first
        while not self._done.is_set():
            progressed = self._progress
            with trio.move_on_after(0.5):
                await progressed.wait()
            if self._done.is_set():
                return
            await self._tick()

    def _listen(self, now: float, note: str) -> None:
        """This node was away (its clock jumped: asleep, stopped) or reaches nobody: it cannot
        tell whether it or the others were away, so every other seat is unknown, not away; its
        table signs nothing (``hold``) until it has caught up with the seats it reaches."""
        self.presence.listen(now, note)
        self._listen_asked.clear()
        self.table.flow.catching_up = True
        log.info("seat %s: %s: catching up before playing on", self.table.lobby.me, note)

    async def _listen_tick(self, now: float) -> None:
        """Ask every seat heard again for what follows our head; once one is back and nothing
        new has come for :data:`SHOWN_AFTER` s after the last ask, play on: seats still not
        heard start their ``rejoin_wait`` now."""
        listening = self.presence.listening
        if listening is None:
            return
        present = [s for s in self._others() if self.presence.present(s, now)]
        if self._mesh is not None:
            n = len(self.table.chain.frames)
            for seat in present:
                if seat not in self._listen_asked:
                    self._listen_asked.add(seat)
                    self._listen_asked_at = now
                    self._mesh.send_nowait(seat, SYNC + n.to_bytes(4, "big"))
        if not vd.caught_up(now, present, self._listen_asked_at, self._grew_at, bool(self.table.chain.buffer),
                            listening):
            return
        self.presence.play_on(now, self._others())
        self.table.flow.catching_up = False
        # every clock of the current step starts now, ours too (this very tick reads it): no
        # limit, and no turn of ours, counts the time this node was away
        self.clock.restart(now)
        log.info("seat %s: caught up, playing on", self.table.lobby.me)
        await self._call(self.table.poll)
        await self._decide()

    async def _tick(self) -> None:
        """Once a tick: feed presence and the clocks ``now``, publish the status, and apply
        what the verdicts call for (:mod:`.verdicts`: the decisions; here, their I/O)."""
        now = trio.current_time()
        t, p, verdicts = self.table, self.presence, self.verdicts
        if verdicts.woke(now, p.listening is not None):
            self._listen(now, "listening")  # our own clock jumped: we were asleep
        self._update_presence(now)
        others = self._others()
        if verdicts.cut_off(now, p, others, t.flow.engine is not None):
            self._listen(now, "cutoff")  # we reach nobody: maybe we are the one away
        step = t.expected()
        self.clock.tick(now, step)
        if p.listening is not None:
            await self._listen_tick(now)
        if p.listening is not None:
            wait: Wait | None = self._listen_wait(now)
        else:
            wait = self._deadline(step, now) if step is not None else None
            await self._fill_gap(now, step)
        if not vd.stalled(wait):
            self.clock.not_stalled()
        relayed = self._mesh.relayed if self._mesh is not None else frozenset()
        seats = p.shown(now, others, [pl.name for pl in t.lobby.players], relayed)
        self._publish(NodeStatus(seats, vd.shown(wait, now, self.clock.step_since)))
        self._note_told(now)
        for s in verdicts.gone(now, p, self.clock.rejoin(), t.flow.engine is not None):
            t.removal.mark_gone(s)  # not counted on to start a removal; we co-sign its own
        gone = verdicts.vote(wait, step, len(t.chain.frames))
        if gone is not None:  # rejoin_wait ran out: our vote to remove the seat (the table signs it when it may)
            await self._call(t.absent, gone)
            await self._decide()
        await self._apply(verdicts.expired(wait, now, p, others, t.removal.removing_seat,
                                           self.clock.stall_limit()), step)

    async def _apply(self, verdict: vd.Verdict, step: tbl.Step | None) -> None:
        """Do what a wait that ran out calls for (:meth:`.verdicts.Verdicts.expired`)."""
        t, act = self.table, verdict.act
        if act == vd.HALT:
            self._nobody = verdict.nobody
            await self._call(t.halt, verdict.reason)
        elif act == vd.COSIGN:  # our own clock for the seat being removed ran out
            await self._call(t.absent, verdict.seat)
            await self._decide()
        elif act == vd.BOT:
            async with self._lock:
                need = t.needs_decision()
                if need is not None and t.expected() == step:
                    said = f"st_bot_{need}"
                    self.events.notice(english(said), said, lasting=True)
                    await self._act(self._bot_intent(need))
            await self._decide()
        elif act == vd.ABSENT:  # before the game began: the table cannot play on without the seat
            await self._call(t.absent, verdict.seat)
        elif act == vd.CUT_OFF:  # cut off from everyone: we cannot tell who is gone, so we blame nobody
            await self._call(t.timeout, "absent", False)
        elif act == vd.SPENT:  # it played only through another seat: never blamed, away from now on
            assert verdict.seat is not None
            self.presence.spent(verdict.seat, len(t.chain.frames))
            self._update_presence(trio.current_time())
        elif act == vd.TIMEOUT:
            await self._call(t.timeout, "timeout", True)

    def _listen_wait(self, now: float) -> Wait:
        """The wait of a listening node (:func:`.verdicts.listen_wait`)."""
        t = self.table
        me = t.lobby.players[t.lobby.me].name if t.lobby.me is not None else ""
        return vd.listen_wait(now, self.presence, self._others(), t.lobby.me or 0, me,
                              lambda: self.clock.stall_left(now))

    async def _fill_gap(self, now: float, step: tbl.Step | None) -> None:
        """A stalled chain: an envelope we lack may have reached some peers only (its sender
        died sending it, or its link to us broke: a seat then removed, or a connected seat
        waited on for an envelope it never got). Ask every connected peer for what follows our
        head (``S``): at once when the awaited seat's link is down, else once the step stalled
        :data:`SHOWN_AFTER` seconds (always when envelopes wait buffered ahead of our chain);
        again every :data:`SHOWN_AFTER` seconds while it stays stalled (an ask can cross the
        envelope on its way to the peer). Not while the table waits for this seat's own step.
        A peer answers each starting point once per length of its chain (no amplification)."""
        if self._mesh is None:
            return
        n = len(self.table.chain.frames)
        buffered = bool(self.table.chain.buffer)
        ours = step is None or step.seat == self.table.lobby.me
        if ours and not buffered:
            return
        away = not ours and step is not None and step.seat not in self.presence.up
        if not away and now - self.clock.step_since < SHOWN_AFTER:
            return
        if self._gap_asked == (n, buffered) and now - self._gap_at < SHOWN_AFTER:
            return
        self._gap_asked, self._gap_at = (n, buffered), now
        for seat in self._others():
            if seat in self.presence.up:
                self._mesh.send_nowait(seat, SYNC + n.to_bytes(4, "big"))

    def _publish(self, status: NodeStatus) -> None:
        self.status = status
        text = status.text()
        if text != self._status_text:
            self._status_text = text
            self.events.status(status)


async def run_seat(
    table: tbl.Table,
    listeners: Any,
    events: Events | None = None,
    *,
    transcript_path: Path | None = None,
    timeouts: Timeouts | None = None,
    mesh_config: MeshConfig | None = None,
    keep_identity: bool = False,
    kept: Secrets | None = None,
    jobs: tuple[tbl.Job, ...] = (),
    mdns: bool = False,
    reach: Sequence[str] = (),
    relay: tuple[str, int] | None = None,
    host_at: tuple[str, int] | None = None,
) -> NodeResult:
    """Build the mesh for a seated table and play to the end. With a transcript, this seat's
    secrets are kept beside it (:func:`secrets_path_for`) while the game lasts (with the
    identity seed too when ``keep_identity``). A rejoin passes the secrets it ``kept`` and the
    table's pending ``jobs`` (from its replay). ``mdns``: advertise where this seat's mesh
    listens and find a seat whose address changed by its record (:func:`.discovery.advertise_seat`;
    ``reach``: this seat's ``--advertise`` entries, whose IPv4 hosts come first in it). Until
    the first hand, every seat that cannot be reached is named on the screen
    (:func:`.reach.watch_reach`). ``relay``: the transit relay ``(host, port)`` of a code-word
    table, where a link that does not come up directly meets (:class:`~.mesh.RelayPlan`).
    ``host_at``: where a joiner reached the host's lobby, a place to dial seat 0 at when its
    link is down (the seating holds the host's bind address)."""
    assert table.lobby.me is not None and table.lobby.identity is not None, "run_seat needs a seated table"
    events = events or Events()
    node = Node(table, events, transcript_path=transcript_path, timeouts=timeouts)
    if transcript_path is not None:
        node.secrets_path = secrets_path_for(transcript_path)
        node.kept_secrets = read_secrets(node.secrets_path) if kept is None else kept
    node.keep_identity = keep_identity
    if relay is not None:
        node.relay = lob.format_addr(*relay)
    for job in jobs:
        node.start_job(job)
    events.node_ready(node)
    await node.persist_existing()
    locator = None
    if mdns:
        from p2p_chinchon.net.discovery import SeatLocator

        locator = SeatLocator(table.lobby.game, {s: p.key for s, p in enumerate(table.lobby.players)})
    peers = peers_of(table)
    if host_at is not None and table.lobby.me != 0:
        h = peers[0]
        peers[0] = PeerAddr(h.host, h.port, h.public_key, (*h.alternates, host_at))
    mesh = Mesh(table.lobby.me, table.lobby.game, table.lobby.identity.private_key.sign, peers,
                listener=listeners if listeners else None, config=mesh_config,
                locate=locator.lookup if locator is not None else None,
                relay=relay_plan(table, relay) if relay is not None else None)
    async with trio.open_nursery() as nursery:
        await nursery.start(mesh.run)
        if locator is not None:
            nursery.start_soon(_seat_mdns, table, mesh.port, locator, reach)
        if table.flow.engine is None:  # the mesh has not formed yet: say who cannot reach whom
            from p2p_chinchon.net.reach import watch_reach

            nursery.start_soon(watch_reach, table, mesh, events)
        result = await node.run(mesh)
        await mesh.aclose()
        nursery.cancel_scope.cancel()
    return result


def relay_plan(table: tbl.Table, relay: tuple[str, int]) -> RelayPlan:
    """The mesh's :class:`~.mesh.RelayPlan` for a seated table: each pair's token from the
    game id, the two seats and the X25519 secret of their identity keys (docs/protocol.md
    "Code words and the transit relay")."""
    from p2p_chinchon.net.relay import pair_secret
    from p2p_chinchon.net.rendezvous import mesh_token

    me = table.lobby.me
    assert me is not None, "a seated table"
    tokens: dict[int, str] = {}

    def token(peer: int) -> str:
        if peer not in tokens:
            shared = pair_secret(table.lobby.identity, table.lobby.players[peer].key)
            tokens[peer] = mesh_token(shared, table.lobby.game, me, peer)
        return tokens[peer]

    return RelayPlan(relay[0], relay[1], token)


MDNS_WATCH = 2.0  # s between looks at this machine's addresses while its seat is advertised
MDNS_RETRY_MAX = 30.0  # s at most between tries to advertise again after mDNS failed


async def _seat_mdns(table: tbl.Table, port: int | None, locator: SeatLocator, reach: Sequence[str] = (),
                     addresses_now: Callable[[], list[str]] | None = None) -> None:
    """Keep this seat's mDNS record up and the others' in ``locator`` (addresses change under
    DHCP and Wi-Fi): when this machine's addresses change the record is advertised again with
    the new ones, and when mDNS fails (its sockets went, a long freeze) it says why in words
    and tries again, with backoff up to :data:`MDNS_RETRY_MAX` s; a LAN without mDNS costs only
    these warnings. ``addresses_now``: this machine's addresses (tests; default
    :func:`.discovery.local_addresses`)."""
    from p2p_chinchon.net import discovery

    assert table.lobby.me is not None and table.lobby.identity is not None, "a seated table"
    now_at = addresses_now or discovery.local_addresses
    delay = MDNS_WATCH
    while True:
        seen = now_at()
        addresses = None
        if reach and port is not None:  # the advertised IPv4 hosts on our port, then our interfaces
            from p2p_chinchon.net.addresses import advertised_ipv4

            addresses = advertised_ipv4(reach, port) + seen
        try:
            async with discovery.advertise_seat(table.lobby.game, table.lobby.me, port, locator=locator,
                                                sign=table.lobby.identity.private_key.sign, addresses=addresses):
                delay = MDNS_WATCH
                while (now := now_at()) == seen:
                    await trio.sleep(MDNS_WATCH)
            log.info("this seat's addresses changed (%s, now %s): advertising it again",
                     ", ".join(seen) or "none", ", ".join(now) or "none")
        except Exception as exc:  # noqa: BLE001 - a convenience: zeroconf's own errors must not end the game
            kind, text = type(exc).__name__, error_text(exc)
            why = f"{kind}: {text}" if text != kind else f"{kind} (it gave no reason)"
            log.warning("mDNS for this seat is off: %s (trying again in %g s)", why, delay)
            await trio.sleep(delay)
            delay = min(delay * 2, MDNS_RETRY_MAX)

