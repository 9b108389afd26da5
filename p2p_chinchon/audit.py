"""Replay a transcript with no network and no secrets: who won, or which seat cheated and where.

The replay is the same :class:`~p2p_chinchon.table.Table` every node runs, as an observer:
signatures, the hash chain, whose turn it is, every rule through the engine, every proof
through the deck, the end-of-hand secrets against the key commitments, the hand digests every
seat signed, the scores and the winner.

Verdicts (``AuditReport.verdict``):

- ``ok``: a complete game; ``winner`` set.
- ``incomplete``: every envelope is valid but the game did not finish (a torn tail after a
  crash, a seat that left, or a recording that simply stops), or it never started: a seat was
  away before the first hand (a ``fault`` ``absent``: a table whose seats could not reach each
  other), which accuses nobody.
- ``cheat``: a validly signed envelope breaks the protocol: ``seat``, ``index`` and ``rule``
  name it. This is attributable: only the seat's key could have signed it.
- ``accused``: the table stopped on a seat's ``fault`` message; ``seat`` is the accused seat
  and ``detail`` says whether the attached evidence proves it (re-checked here).
- ``corrupt``: the file is damaged (a frame that does not decode, or a signature that does not
  verify, which a corrupted byte or a forger produces, never an honest seat): not
  attributable to any seat.
- ``unsupported``: the transcript starts with an envelope of another protocol version (e.g. a
  version-1 game, whose deck is Ed25519): ``detail`` names it in one line; nothing is replayed.
"""

from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict

import msgpack

from p2p_chinchon import PROTOCOL_VERSION, deck, table as tbl, wire
from p2p_chinchon.schedule import TERMINAL_KINDS
from p2p_chinchon.transcript import LoadResult, load_transcript, signed_by

# Violations a third party could have produced with no key of the accused seat: a damaged or
# forged frame, or a genuine signed envelope copied from another game or another position.
NOT_ATTRIBUTABLE = {
    "bad_signature": "a damaged byte or a forgery",
    "malformed": "a damaged byte",
    "wrong_game": "an envelope copied from another game",
    "seq": "an envelope copied from another position",
    "unknown_seat": "an envelope signed for a seat that does not exist",
    "diverged": "an envelope that follows another history (a fork made by someone else's equivocation, or a splice)",
}

# AuditReport.verdict (see the module docstring)
Verdict = Literal["ok", "incomplete", "cheat", "accused", "corrupt", "unsupported"]


class PlayerInfo(TypedDict):
    """A seat in :attr:`AuditReport.players` (index = seat)."""

    name: str
    fingerprint: str


class Mark(TypedDict):
    """An elimination or re-entry in :attr:`AuditReport.marks`."""

    after_hand: int
    seat: int
    event: Literal["out", "reentered", "left"]
    total: int  # the seat's total then
    reason: NotRequired[str]  # "left" only: "absent" or "left" (docs/protocol.md "Removal")


# A proof check handed to ``Hand.proof_sink``: (envelope index, fn, args); fn(*args) raises
# DeckError if the proof fails
_ProofCheck = tuple[int, Callable[..., object], tuple[Any, ...]]
_ProofSink = Callable[[int, Callable[..., object], tuple[Any, ...]], None]
Progress = Callable[[int, int], object]


@dataclass
class AuditReport:
    verdict: Verdict
    envelopes: int = 0
    players: list[PlayerInfo] = field(default_factory=list)
    hands: int = 0
    scores: list[list[int]] = field(default_factory=list)  # per hand, penalty per seat
    totals: list[int] = field(default_factory=list)
    winner: int | None = None
    seat: int | None = None  # the seat to blame (cheat/accused)
    index: int | None = None  # envelope index of the violation
    rule: str | None = None
    detail: str = ""
    head: str = ""
    # the offer's proof_rounds (= rules.shuffle_proof_rounds), whatever the proof system: the
    # k of cut-and-choose proofs (soundness 2^-k); a Terelius-Wikström table signs it too, unused
    proof_rounds: int = 0
    proof_system: str = ""  # rules.shuffle_proof: terelius-wikstrom or cut-and-choose
    # eliminations and re-entries: {"after_hand": n, "seat": s, "event": "out"|"reentered"|"left",
    # "total": the seat's total then} (a re-entry restarts the total: the columns add up);
    # "left" (a seat removed from the game, docs/protocol.md "Removal") has "reason":
    # "absent" or "left"; such a seat never makes the verdict "cheat"
    marks: list[Mark] = field(default_factory=list)
    # a game whose end is signed by a majority, not by every seat still at the table
    # (docs/protocol.md "Removal", the game's end): the seats whose game_end this record lacks
    unsigned_end: list[int] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        """True only for a whole, valid game (verdict ``ok``): nothing is missing from it."""
        return self.verdict == "ok"

    @property
    def exit_code(self) -> int:
        """0 complete and valid; 3 valid but incomplete (cut short: it proves nothing about
        what is missing); 1 cheat, accused or corrupt."""
        if self.verdict == "ok":
            return 0
        return 3 if self.verdict == "incomplete" else 1

    def to_json(self) -> dict[str, Any]:
        return {**asdict(self), "complete": self.complete}

    def summary(self) -> str:
        if self.verdict == "unsupported":
            return self.detail
        lines = []
        names = [p["name"] for p in self.players]

        def nm(s: int | None) -> str:
            return f"seat {s} ({names[s]})" if s is not None and s < len(names) else f"seat {s}"

        if self.players:
            lines.append("players: " + ", ".join(f"{i}: {p['name']} [{p['fingerprint']}]" for i, p in enumerate(self.players)))
        lines.append(f"envelopes: {self.envelopes}, hands: {self.hands}"
                     + (f", shuffle proofs k = {self.proof_rounds}" + (" (weak: under 40)" if self.proof_rounds < 40 else "")
                        if self.proof_system == "cut-and-choose" else "")
                     + (f", shuffle proofs {self.proof_system}" if self.proof_system not in ("", "cut-and-choose") else ""))
        for h, row in enumerate(self.scores):
            lines.append(f"  hand {h + 1}: " + "  ".join(f"{names[s] if s < len(names) else s} {p:+d}" for s, p in enumerate(row)))
            for m in self.marks:
                if m["after_hand"] == h + 1:
                    who = names[m["seat"]] if m["seat"] < len(names) else m["seat"]
                    said = {"out": "out at", "left": f"left ({m.get('reason')}) at"}.get(m["event"], "re-entered at")
                    lines.append(f"    {who} {said} {m['total']}")
        if self.totals:
            lines.append("totals: " + "  ".join(f"{names[s] if s < len(names) else s} {t}" for s, t in enumerate(self.totals)))
        if self.verdict == "ok":
            lines.append(f"winner: {nm(self.winner)}" if self.winner is not None else "game over, no winner")
            if self.detail:
                lines.append(self.detail)
        elif self.verdict == "incomplete":
            lines.append(f"valid but incomplete: {self.detail}")
        elif self.verdict == "cheat":
            lines.append(f"CHEAT: {nm(self.seat)} at envelope {self.index}: {self.rule}: {self.detail}")
        elif self.verdict == "accused":
            lines.append(f"STOPPED: {nm(self.seat)} accused: {self.rule}: {self.detail}")
        else:
            lines.append(f"CORRUPT file at envelope {self.index}: {self.detail}")
        return "\n".join(lines)


def _fill(report: AuditReport, t: tbl.Table, marks: list[Mark] | None = None) -> None:
    report.marks = list(marks or [])
    report.players = [{"name": p.name, "fingerprint": p.fingerprint} for p in t.lobby.players]
    report.scores = [list(r) for r in t.turns.score_history]
    report.hands = len(t.turns.score_history)
    report.totals = list(t.flow.engine.totals) if t.flow.engine else []
    report.envelopes = len(t.chain.envelopes)
    report.head = t.chain.head.hex()
    report.proof_system = t.lobby.rules.shuffle_proof if t.chain.envelopes and t.lobby.rules is not None else ""
    report.proof_rounds = t.lobby.proof_rounds if report.proof_system else 0


def _other_version(frame: bytes) -> AuditReport | None:
    """An ``unsupported`` report if ``frame`` is an envelope array of another protocol version."""
    try:
        v = msgpack.unpackb(frame, raw=True)[0]
    except Exception:  # noqa: BLE001 - anything unparseable is judged by the strict decoder
        return None
    if type(v) is not int or v == PROTOCOL_VERSION:
        return None
    return AuditReport("unsupported", index=0, detail=(
        f"transcript of protocol version {v}; this p2p-chinchon audits version "
        f"{PROTOCOL_VERSION} only (use a release that speaks version {v})"))


def _track(t: tbl.Table, marks: list[Mark], seen: dict[int, tuple[bool, int]]) -> None:
    """Note who went out or re-entered since the last frame (for the score sheet)."""
    e = t.flow.engine
    if e is None:
        return
    for s in range(len(e.totals)):
        now = (s in e.eliminated, e.reentries_used[s])
        was = seen.get(s, (False, 0))
        if now != was:
            hand = len(t.turns.score_history)
            removed = t.removal.removed
            if now[0] and not was[0] and s in removed:  # gone for good: removed by the others
                marks.append({"after_hand": hand, "seat": s, "event": "left", "reason": removed[s],
                              "total": e.totals[s]})
            elif now[0] and not was[0]:
                marks.append({"after_hand": hand, "seat": s, "event": "out", "total": e.totals[s]})
            if now[1] > was[1]:
                marks.append({"after_hand": hand, "seat": s, "event": "reentered", "total": e.totals[s]})
            seen[s] = now


def default_jobs() -> int:
    """Every core this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def _check_proofs(checks: list[_ProofCheck]) -> int | None:
    """A pool worker: checks the table handed to its ``proof_sink`` (shuffle proofs, an
    envelope's DLEQ share proofs), in envelope order; the envelope index of the first that
    fails, or None."""
    for seq, fn, args in checks:
        try:
            fn(*args)
        except deck.DeckError:
            return seq
    return None


CHECKS_PER_TASK = 8  # one pool task carries this many checks: a task's round trip costs ~0.2 ms


def audit_frames(frames: Sequence[bytes | wire.Envelope], *, torn_tail: bool = False,
                 progress: Progress | None = None, jobs: int = 1) -> AuditReport:
    """Replay ``frames`` (envelope encodings in chain order, or the envelopes
    :func:`~p2p_chinchon.wire.decode_envelope` made of them: each frame is decoded once).
    ``progress(done, total)`` is called after each frame (a progress display; it must not
    raise). ``jobs`` > 1: the shuffle proofs and the decryption shares' DLEQ proofs (most of
    the work) are checked by that many worker processes while this one replays everything
    else; the report is the one a serial replay gives, byte for byte. If a check fails at
    an envelope the serial replay would reach (at or before the one the replay stopped at),
    the replay is run again up to the first such envelope, every check before it trusted
    (they passed) and its own made in place: its verdict is the serial one."""
    if jobs <= 1:
        return _serial_replay(frames, torn_tail, progress)
    context = multiprocessing.get_context("fork") if "fork" in multiprocessing.get_all_start_methods() else None
    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=context) as pool:
        tasks: list[concurrent.futures.Future[int | None]] = []
        batch: list[_ProofCheck] = []

        def sink(seq: int, fn: Callable[..., object], args: tuple[Any, ...]) -> None:
            batch.append((seq, fn, args))
            if len(batch) >= CHECKS_PER_TASK:
                tasks.append(pool.submit(_check_proofs, batch[:]))
                batch.clear()

        r, stopped = _replay(frames, torn_tail, progress, sink)
        if batch:
            tasks.append(pool.submit(_check_proofs, batch))
        failed = min((seq for task in tasks if (seq := task.result()) is not None and seq <= stopped), default=None)
        if failed is not None:
            r = _replay(frames[: failed + 1], False, None, lambda *_: None, inline_at=failed)[0]
    # None: the replay broke on a value whose check was deferred and no check failed: the serial
    # replay says what broke. (After a failed check the replay again cannot break so: every
    # check before it passed and its own are made in place; if it did, the serial replay's
    # answer is still the one to give.)
    return r if r is not None else _serial_replay(frames, torn_tail)


def _serial_replay(frames: Sequence[bytes | wire.Envelope], torn_tail: bool,
                   progress: Progress | None = None) -> AuditReport:
    """:func:`_replay` with every check made in place: it never defers one."""
    r, _ = _replay(frames, torn_tail, progress)
    assert r is not None  # with no sink a failure raises, it is never deferred
    return r


def _replay(frames: Sequence[bytes | wire.Envelope], torn_tail: bool, progress: Progress | None,
            sink: _ProofSink | None = None, inline_at: int | None = None) -> tuple[AuditReport | None, int]:
    """:func:`audit_frames`' replay: the report, and the index of the envelope the replay
    stopped at (the length when it went through them all). ``sink(seq, fn, args)`` takes the
    proof checks (``Hand.proof_sink``) instead of this process, except at index
    ``inline_at`` and in a fault's evidence. The report is None when, with a ``sink``, the
    replay broke on a value whose check was deferred (an unchecked share broke something
    after the checks): a serial replay stops at or before that envelope."""
    t = tbl.Table.observer()
    t.hand.proof_sink = sink
    marks: list[Mark] = []
    seen: dict[int, tuple[bool, int]] = {}
    for i, frame in enumerate(frames):
        if progress is not None:
            progress(i, len(frames))
        if i == inline_at:
            t.hand.proof_sink = None
        if isinstance(frame, wire.Envelope):
            env = frame
        else:
            try:
                env = wire.decode_envelope(frame)
            except wire.WireError as exc:
                if i == 0 and exc.code == "version" and (other := _other_version(frame)):
                    return other, i
                r = AuditReport("corrupt", index=i, detail=f"frame does not decode: {exc}")
                _fill(r, t, marks)
                return r, i
        if i == 0 and env.kind != "offer":  # nothing in the file says whose key signed it
            r = AuditReport("corrupt", index=0, detail=f"a transcript starts with the host's offer, not a {env.kind}")
            _fill(r, t, marks)
            return r, 0
        gone = _removed_signer(t, env)
        if gone is not None:
            _fill(gone, t, marks)
            return gone, i
        if env.kind == "fault" and t.lobby.players:
            t.hand.proof_sink = None  # the evidence is judged here, every check made
            return _judge_fault(t, env, i, marks, frames), i
        try:
            t.replay(env)  # the decoded envelope: the table does not decode it again
        except tbl.ProtocolViolation as exc:
            r = AuditReport("cheat", index=i, seat=exc.seat, rule=exc.rule, detail=exc.reason)
            if exc.rule in NOT_ATTRIBUTABLE:
                r.verdict = "corrupt"
                reason = exc.reason if exc.reason.startswith(exc.rule) else f"{exc.rule}: {exc.reason}"
                r.detail = f"{reason} ({NOT_ATTRIBUTABLE[exc.rule]}; not attributable to seat {exc.seat})"
            _fill(r, t, marks)
            return r, i
        except Exception:  # noqa: BLE001
            if sink is None:
                raise
            # a value whose check was deferred (an unchecked share) broke something after the
            # checks: a serial replay stops at or before this envelope
            return None, i
        _track(t, marks, seen)
    if progress is not None:
        progress(len(frames), len(frames))
    # a majority's game_ends end the game; a leave after them changes nothing, a fault is judged
    ended = t.flow.finished or (t.turns.end_signed_by_majority() and (t.flow.fault is None or t.flow.fault.rule == "left"))
    r = AuditReport("ok" if ended else "incomplete", winner=t.flow.winner)
    if ended and not t.flow.finished:  # docs/protocol.md "Removal", the game's end
        # the seats still at the table when the end was signed, without their game_end: a seat
        # removed or left before (its leave chained) is not listed; a leave after it changes nothing
        left_before = t.flow.left - ({t.flow.fault.seat} if t.flow.fault is not None else set())
        missing = ([s for s in range(len(t.lobby.players)) if s not in t.turns.game_end_sigs and s not in left_before]
                   if t.flow.fault is not None else [st.seat for st in t.flow.queue if st.kind == "game_end"])
        r.unsigned_end = missing
        r.detail = ("the game's end is signed by a majority of the seats in the game; not by seat "
                    + ", ".join(str(s) for s in missing) + " (their own records may hold it)")
    if not ended:
        if t.flow.fault is not None:
            r.detail = f"{t.flow.fault.reason}"
            r.seat = t.flow.fault.seat
            r.rule = t.flow.fault.rule
        elif torn_tail:
            r.detail = "the file ends in a torn frame (a crash while writing)"
        elif t.chain.envelopes and t.chain.envelopes[-1].kind == "remove" and t.chain.envelopes[-1].body["seat"] in t.removal.removed:
            # the removed seat's own record ends so: removed, accusing nobody
            last = t.chain.envelopes[-1].body
            r.seat, r.rule = last["seat"], "removed"
            r.detail = (f"seat {last['seat']} was removed from the game ({last['reason']}, hand {last['hand'] + 1}) "
                        "with every signature: the record stops there")
        else:
            step = t.expected()
            r.detail = f"the record stops while {f'seat {step.seat}' if step else 'nobody'} was to send {step.kind if step else 'anything'}"
    _fill(r, t, marks)
    return r, len(frames)


def _removed_signer(t: tbl.Table, env: wire.Envelope) -> AuditReport | None:
    """A ``fault`` or ``leave`` at index ``env.seq`` signed by a seat out of the game for good
    before it in the record (its removal complete, or its chained ``leave`` sent it home), or a
    ``fault`` quoting one (``Faults.quoted_fault``): every seat drops what such a seat signs
    (docs/protocol.md "Removal"), so it judges nothing and blames nobody. The record stops
    there: ``incomplete``, rule ``removed`` (``left``), ``seat`` None. None for any other
    envelope."""
    if env.kind not in TERMINAL_KINDS or not t.lobby.players:
        return None
    signer = env
    if env.seat not in t.flow.left and env.kind == "fault":
        signer = t.faults.quoted_fault(env) or env
    if signer.seat not in t.flow.left:
        return None
    how = "holds" if signer is env else f"stops with seat {env.seat}'s fault quoting"
    why = f"its removal ({t.removal.removed[signer.seat]})" if signer.seat in t.removal.removed else "it left the game"
    return AuditReport("incomplete", index=env.seq, rule="removed" if signer.seat in t.removal.removed else "left", detail=(
        f"the record {how} a {signer.kind} of seat {signer.seat} (seq {signer.seq}), signed after {why}: it "
        "changes nothing, no seat is judged by it; the record stops there"))


def _judge_fault(t: tbl.Table, env: wire.Envelope, i: int, marks: list[Mark],
                 frames: Sequence[bytes | wire.Envelope]) -> AuditReport:
    """A seat stopped the table with a ``fault``: check its signature and re-check the
    evidence against the state just before it. A fault that quotes a peer's fault which
    reached it after our chain had moved on (``Faults.quoted_fault``) is judged as that fault,
    against the state at its own position (the record replayed again up to it, its proofs
    not checked twice): the verdict the transcript of a seat that chained it gets."""
    quoted: wire.Envelope | None = t.faults.quoted_fault(env)
    judged: tuple[str, tbl.ProtocolViolation | None] | None = None
    if quoted is not None:
        there = tbl.Table.observer()
        there.hand.proof_sink = lambda *_: None  # every check before the fault passed (or is pending) in t
        for frame in frames[: quoted.seq]:
            there.replay(frame)
        there.hand.proof_sink = None  # the evidence itself gets every check
        b = quoted.body
        judged = there.faults.check_evidence(b["evidence"], (b["rule"], b["accused"] if b["accused"] != 255 else None,
                                                      quoted.seat), at=quoted)
    try:
        t.replay(env)  # checks the accuser's signature and chain position
    except tbl.ProtocolViolation as exc:
        r = AuditReport("cheat", index=i, seat=exc.seat, rule=exc.rule, detail=exc.reason)
        if exc.rule in NOT_ATTRIBUTABLE:
            r.verdict = "corrupt"
        _fill(r, t, marks)
        return r
    status: str  # proves | consistent | valid | unverifiable (Faults.check_evidence)
    proof: tbl.ProtocolViolation | None
    status, proof = t.faults.fault_judgement
    if quoted is not None and judged is not None:
        env, i, (status, proof) = quoted, quoted.seq, judged
    b = env.body
    accused = b["accused"] if b["accused"] != 255 else None
    if b["rule"] == "absent" and t.flow.engine is None:
        # a seat away before the first hand: the table never formed (a seat nobody could
        # reach); nothing was played, so nobody is accused of anything
        r = AuditReport("incomplete", index=i, seat=accused, rule="absent",
                        detail=f"never started: seat {env.seat} says: {b['reason']}")
        _fill(r, t, marks)
        return r
    r = AuditReport("accused", index=i, seat=accused, rule=b["rule"])
    if status == "proves" and proof is not None and proof.seat == accused:
        r.detail = f"confirmed: {proof.rule}: {proof.reason}"
        r.rule = proof.rule
    elif status == "proves" and proof is not None:
        r.detail = f"the evidence shows seat {proof.seat} broke {proof.rule}, not seat {accused}"
        r.seat, r.rule = proof.seat, proof.rule
    elif status == "consistent":
        r.detail = (f"seat {env.seat} says: {b['rule']}: {b['reason']} (the record agrees it was "
                    f"seat {accused}'s turn; the delay itself is not in the record)")
    elif status == "valid":
        r.verdict, r.seat, r.rule = "cheat", env.seat, "false_accusation"
        r.detail = f"seat {env.seat} accused seat {accused} ({b['rule']}) but the evidence proves nothing against it"
    else:  # an unverifiable claim names nobody: the accused stays in the detail only
        r.seat = None
        r.detail = (f"seat {env.seat} says: {b['rule']}"
                    + (f" against seat {accused}" if accused is not None else "")
                    + f": {b['reason']} (unverifiable from the record)")
    _fill(r, t, marks)
    return r


def audit_file(path: str | Path, progress: Progress | None = None, *,
               loaded: LoadResult | None = None, jobs: int = 1) -> AuditReport:
    """Load a transcript file (recovering a torn tail) and replay it (``progress``, ``jobs``:
    see :func:`audit_frames`; ``loaded``: the file already loaded)."""
    res = loaded if loaded is not None else load_transcript(path)
    if res.errors and res.errors[0].index == 0 and res.errors[0].code == "version":
        other = _other_version(res.frames[0]) if res.frames else None
        if other is None:
            other = AuditReport("unsupported", index=0, detail=(
                f"transcript of another protocol version ({res.errors[0].reason}); this "
                f"p2p-chinchon audits version {PROTOCOL_VERSION} only"))
        return other
    if not res.frames:
        return AuditReport("corrupt", index=0, detail="no complete envelope in the file (empty, or cut inside the first one)")
    if res.errors:
        first = res.errors[0]
        # the envelopes decoded by the load, up to the first frame that did not decode
        good = res.envelopes[: first.index] if first.index is not None else res.envelopes
        r = audit_frames(good, progress=progress, jobs=jobs)
        if r.verdict in ("ok", "incomplete"):
            r.verdict = "corrupt"
            r.index = first.index if first.index is not None else len(res.frames)
            r.detail = f"{first.code}: {first.reason} at byte {first.offset}"
        return r
    return audit_frames(res.envelopes, torn_tail=res.torn_tail is not None, progress=progress, jobs=jobs)


# --- several seats' transcripts of one game ---------------------------------------------------

# the verdicts of a pair of records that do not agree (worst first), of a pair, of all the files
Disagreement = Literal["fork", "damaged", "other_game"]
PartingVerdict = Literal["same", "shorter", "cut_off", Disagreement]
MultiVerdict = Literal["agree", Disagreement]
_DISAGREEMENTS: tuple[Disagreement, ...] = ("fork", "damaged", "other_game")


@dataclass
class Parting:
    """How two transcripts of one game relate (``files``: their positions on the command line).

    ``verdict``: ``same`` (byte for byte), ``shorter`` (one is a prefix of the other: a record
    that stops earlier, which proves nothing about what it lacks; or they part by leaves, see
    :func:`_leaver_parting`: seats that left, each record stopping at its own), ``cut_off``
    (one file goes on with the own envelopes of seats the other removes there for "absent":
    see :func:`_removed_parting`), ``fork`` (two different
    validly signed continuations of one common prefix under one game id: ``seats`` are the
    seats that signed envelopes on both continuations, each of whom put its signature on two
    histories), ``damaged`` (they part at an envelope that does not decode or is not validly
    signed by its seat in one of them: damage or forgery, nobody to blame) or ``other_game``
    (different game ids from envelope 0: not one game)."""

    files: list[int]
    verdict: PartingVerdict
    common: int  # envelopes both hold from the start, byte for byte
    at: int | None = None  # index of the first envelope that differs (fork, damaged)
    seats: list[int] = field(default_factory=list)
    detail: str = ""


def compare_loaded(a: LoadResult, b: LoadResult, files: tuple[int, int] = (0, 1)) -> Parting:
    """Compare two loaded transcripts frame by frame (see :class:`Parting`)."""
    fa, fb = a.frames, b.frames
    common = 0
    while common < min(len(fa), len(fb)) and fa[common] == fb[common]:
        common += 1
    part = Parting(list(files), "same", common)
    if common == len(fa) == len(fb):
        return part
    if common == min(len(fa), len(fb)):
        shorter, longer = (files[0], files[1]) if len(fa) < len(fb) else (files[1], files[0])
        part.verdict = "shorter"
        part.detail = (f"file {shorter} holds the first {common} envelopes of file {longer}, which goes on "
                       f"to {max(len(fa), len(fb))}: one record stops earlier, none contradicts the other")
        return part
    part.at = common
    envs = [_decoded(fa), _decoded(fb)]
    first_a, first_b = envs[0][0], envs[1][0]  # both files go on past `common`
    if common == 0 or first_a is None or first_b is None or first_a.game != first_b.game:
        part.verdict = "other_game"
        part.detail = "the files do not start with one offer of one game id: they are not one game"
        return part
    game = first_a.game
    keys = _seat_keys(envs[0][:common]) or _seat_keys(envs[1][:common])
    signers: list[set[int]] = []
    heads: list[wire.Envelope] = []  # each file's envelope at `common`
    for record in envs:
        e = record[common]
        if e is None or keys is None or not signed_by(e, keys) or e.game != game:
            part.verdict = "damaged"
            part.detail = (f"envelope {common} of file {files[len(signers)]} does not decode or is not validly "
                           "signed by its seat: damage or forgery, not attributable to any seat")
            return part
        heads.append(e)
        signers.append({x.seat for x in record[common:] if x is not None and x.game == game and signed_by(x, keys)})
    # a parting by leaves is no fork: no seat signed both sides, and each side either ends
    # right there with its own seat's leave or removes that leaver with the leave as proof
    left = None if signers[0] & signers[1] else _leaver_parting(envs, (fa, fb), common)
    if left is not None:
        part.verdict = "shorter"
        if len(left) == 2:
            (sa, la), (sb, lb) = left
            part.detail = (f"file {files[sa]} ends with seat {la}'s own leave and file {files[sb]} with seat "
                           f"{lb}'s own leave, both at envelope {common}: they left concurrently, nothing "
                           "follows either leave and no seat signed both: none contradicts the other")
        else:
            (side, seat), = left
            part.detail = (f"file {files[side]} ends with seat {seat}'s own leave at envelope {common}; file "
                           f"{files[1 - side]} goes on, seat {seat} removed for 'left' with that leave as proof "
                           "(docs/protocol.md \"Removal\"): none contradicts the other")
        return part
    cut = None if signers[0] & signers[1] else _removed_parting(envs, common, signers)
    if cut is not None:
        side, seats = cut
        who = ", ".join(str(s) for s in seats)
        part.verdict = "cut_off"
        part.seats = []
        how = ("stops there with a fault naming it away (before the game)" if heads[1 - side].kind == "fault"
               else "removes there (or waits for, its removal unfinished) for 'absent' with a majority's signed votes")
        part.detail = (f"from envelope {common} file {files[side]} holds only the own envelopes of seat {who}, "
                       f"which file {files[1 - side]} {how} "
                       "(docs/protocol.md \"Removal\"): cut off, their last envelopes never reached the others; "
                       "no seat signed both: none contradicts the other")
        return part
    part.verdict = "fork"
    part.seats = sorted(signers[0] & signers[1])
    ea, eb = heads
    part.detail = (f"after {common} common envelopes the files part: envelope {common} is seat {ea.seat}'s "
                   f"{ea.kind} in file {files[0]} and seat {eb.seat}'s {eb.kind} in file {files[1]}, both validly "
                   f"signed under one game id; seats that signed both continuations: "
                   + (", ".join(str(s) for s in part.seats) or "none"))
    return part


def _removed_parting(envs: list[list[wire.Envelope | None]], common: int,
                     signers: list[set[int]]) -> tuple[int, list[int]] | None:
    """``(side, seats)`` when the files part because ``seats`` were cut off: the other side's
    envelope at ``common`` is a first ``remove`` for "absent" (its proof: a majority's votes,
    checked by that file's own audit) and every seat that signed this side's continuation is
    removed for "absent" on the other side's (their own envelopes, which never reached the
    majority; docs/protocol.md "Removal"); or, before the game, the other side's envelope
    there is a ``fault`` ``absent`` accusing the one seat that signed this side's (the table
    stopped without it). Else None. (The caller has checked that no seat signed both sides.)
    A seat of this side that the other does not remove is one of the signers of every removal
    there, and it signed nothing there: then the other side's continuation is only those
    removes for "absent", never completed (two seats of five cut off at the game's end: rule 5
    forbids removing the second; docs/protocol.md "The game's end"), which is no fork either."""
    for major in (0, 1):
        first = envs[major][common]
        minor = signers[1 - major]
        if first is not None and first.kind == "fault" and first.body["rule"] == "absent" \
                and minor == {first.body["accused"]}:
            return 1 - major, sorted(minor)  # before the game: the others stopped, naming it away
        if first is None or first.kind != "remove" or first.body["reason"] != "absent" or not first.body["proof"]:
            continue
        absent = [e for e in envs[major][common:]
                  if e is not None and e.kind == "remove" and e.body["reason"] == "absent"]
        removed = {e.body["seat"] for e in absent}
        stuck = len(absent) == len(envs[major]) - common  # nothing but those removes
        if minor and (minor <= removed or stuck) and first.body["seat"] in minor:
            return 1 - major, sorted(minor)
    return None


def _leaver_parting(envs: list[list[wire.Envelope | None]], frames: tuple[list[bytes], list[bytes]],
                    common: int) -> list[tuple[int, int]] | None:
    """The leavers ``[(side, seat), ...]`` when the two files part by leaves: at least one
    side's whole continuation is one ``leave`` (its seat's own record, which ends there), and
    the other side either ends the same way (concurrent leaves) or holds a ``remove`` of that
    seat for ``left`` whose proof is that very frame; else None. (The caller has checked that
    no seat signed both sides.)"""
    leavers: list[tuple[int, int]] = []
    for side in (0, 1):
        last = envs[side][common] if len(envs[side]) == common + 1 else None
        if last is not None and last.kind == "leave":
            leavers.append((side, last.seat))
    if not leavers:
        return None
    ended = {side for side, _ in leavers}
    for other in (0, 1):
        if other in ended:
            continue
        for side, seat in leavers:
            leave = frames[side][common]
            if not any(e is not None and e.kind == "remove" and e.body["seat"] == seat
                       and e.body["reason"] == "left" and leave in e.body["proof"] for e in envs[other][common:]):
                return None
    return leavers


def _decoded(frames: list[bytes]) -> list[wire.Envelope | None]:
    out: list[wire.Envelope | None] = []
    for f in frames:
        try:
            out.append(wire.decode_envelope(f))
        except wire.WireError:
            out.append(None)
    return out


def _seat_keys(envs: Sequence[wire.Envelope | None]) -> tuple[bytes, ...] | None:
    from p2p_chinchon.transcript import seat_keys

    seating = next((e for e in envs if e is not None and e.kind == "seating"), None)
    return seat_keys(seating) if seating is not None else None


@dataclass
class MultiReport:
    """``audit A B ...``: each file's own report, and how each pair of files relates."""

    paths: list[str]
    reports: list[AuditReport]
    partings: list[Parting]
    # the files by game: (game id in hex, or "" where envelope 0 does not decode; file positions)
    games: list[tuple[str, list[int]]] = field(default_factory=list)

    @property
    def verdict(self) -> MultiVerdict:
        """``fork``, ``damaged`` or ``other_game`` when a pair says so; else ``agree``."""
        for worst in _DISAGREEMENTS:
            if any(p.verdict == worst for p in self.partings):
                return worst
        return "agree"

    @property
    def exit_code(self) -> int:
        codes = [r.exit_code for r in self.reports]
        if self.verdict != "agree" or 1 in codes:
            return 1
        # the records of each game agree (each a prefix of another): one complete, valid record
        # proves that game; the shorter ones (a removed or crashed seat's) only stop earlier
        groups = self.games or [("", list(range(len(codes))))]
        return 0 if all(any(codes[i] == 0 for i in files) for _, files in groups) else 3

    def to_json(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "complete": self.exit_code == 0,
                "files": [{"path": p, **r.to_json()} for p, r in zip(self.paths, self.reports, strict=True)],
                "games": [{"game": g, "files": files} for g, files in self.games],
                "partings": [asdict(p) for p in self.partings]}

    def summary(self) -> str:
        lines = []
        for i, (p, r) in enumerate(zip(self.paths, self.reports, strict=True)):
            lines.append(f"== file {i}: {p}")
            lines.extend("   " + line for line in r.summary().splitlines())
        if len(self.games) > 1:  # e.g. an evening's rematches audited together
            for g, files in self.games:
                lines.append(f"game {g or '(unreadable)'}: files {', '.join(map(str, files))}")
        for part in self.partings:
            a, b = part.files
            head = {"same": "identical", "shorter": "one is shorter", "cut_off": "a seat was cut off",
                    "fork": "FORK", "damaged": "DAMAGED",
                    "other_game": "NOT ONE GAME"}[part.verdict]
            lines.append(f"files {a} and {b}: {head}, {part.common} envelopes in common"
                         + (f": {part.detail}" if part.detail else ""))
        return "\n".join(lines)


def audit_files(paths: Sequence[str | Path], progress: Progress | None = None,
                jobs: int = 1) -> MultiReport:
    """Audit each of several seats' transcripts and compare every pair of records of one game
    (the same game id in envelope 0: an evening's games may be given together): where they
    part, and whether that is a fork or one record being shorter. Files whose envelope 0 does
    not decode form one group, compared as before (``other_game``). ``OSError`` if a file
    cannot be read."""
    loaded = [load_transcript(p) for p in paths]
    reports = [audit_file(p, progress=progress, loaded=res, jobs=jobs) for p, res in zip(paths, loaded, strict=True)]
    games: dict[str, list[int]] = {}
    for i, res in enumerate(loaded):
        first = _decoded(res.frames[:1])
        games.setdefault(first[0].game.hex() if first and first[0] is not None else "", []).append(i)
    partings = [compare_loaded(loaded[i], loaded[j], (i, j))
                for files in games.values() for x, i in enumerate(files) for j in files[x + 1:]]
    for part in partings:  # a cut-off record cannot end the game: if both do, that is no agreement
        if part.verdict == "cut_off" and all(reports[f].verdict == "ok" for f in part.files):
            part.verdict = "fork"
            part.detail = ("both files end the game, and they part at envelope "
                           f"{part.at}: two ends of one game (docs/protocol.md \"Removal\", the game's end)")
    partings.sort(key=lambda p: p.files)
    return MultiReport([str(p) for p in paths], reports, partings, list(games.items()))
