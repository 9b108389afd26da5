"""Benchmark of ``p2p-chinchon audit``: replaying a recorded 4-seat game with every check.

Usage: ``python benchmarks/audit.py [--transcript FILE] [--seed S] [--proof-rounds K] [--json]``
(or ``p2p-chinchon bench audit ...``).

Without ``--transcript`` it first records a game: 4 bot peers in separate processes on
loopback (``benchmarks/game.py``'s driver, seeded with ``--seed``), or with ``--in-process``
the deterministic single-thread self-play below (:func:`self_play`; slower on a multi-core
machine, but the same game for the same seed and code). Then it audits the host's
transcript in this process (:func:`p2p_chinchon.audit.audit_frames`, as the command does after
loading the file) and reports:

* CPU seconds (``time.process_time``) of the whole replay, envelopes per second, seconds per
  hand; the verdict must be ``ok``;
* where the time goes: every call the table makes into the deck (shuffle proofs, DLEQ shares,
  Schnorr key shares, secrets, deck decoding with its point validation, end-of-hand
  decryption) and into the signature and envelope decoding of ``wire`` is timed by wrapping
  those module functions for the run (the table calls them through the module, so nothing is
  changed in the code under test); the rest is the engine, the table and copies;
* the floor: the scalar multiplications the audit must do (:func:`count_ops`: per shuffle
  k*n re-maskings = 2 multiplications each, 4 per decryption share, 2 per key share, 1 per
  secret, 1 per slot decrypted at the end of a hand) times the per-operation costs the deck
  benchmark measures, in this run; ``ratio`` = audit CPU / floor.

``benchmarks/game.py`` uses :func:`count_ops` (for one seat) and :func:`measure_costs` too.
"""

from __future__ import annotations

import argparse
import contextlib
import cProfile
import functools
import importlib.util
import json
import pstats
import statistics
import sys
import tempfile
import time
from collections import Counter, defaultdict, deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

from p2p_chinchon import deck, table as tbl, wire  # noqa: E402
from p2p_chinchon.audit import audit_frames  # noqa: E402
from p2p_chinchon.autoplay import bot_decider  # noqa: E402
from p2p_chinchon.identity import Identity  # noqa: E402
from p2p_chinchon.local import BOT_NAMES, make_bot, seat_rng  # noqa: E402
from p2p_chinchon.transcript import load_transcript  # noqa: E402

# ------------------------------------------------------------------------------ the floor
#
# count_ops walks a chain of envelopes and counts the group operations a node *must* do to
# check it (an observer, as in ``audit``) or to play it (one seat): the multiplications of
# every proof check and of every proof or share the seat makes, never its re-checks of its
# own messages. Per envelope kind (k proof rounds, n cards shuffled):
#
#   key_commit   make: key pair, 1 base
#   key_share    check: Schnorr, 1 base + 1 var, 1 point validation; make: 1 base
#   shuffle      the deck benchmark's shuffle_ops(system, n, k): for Terelius-Wikström check
#                8n+4 var + n+4 base + 9n+3 additions + 2n validations (proof points), make
#                6n+1 var + 4n+4 base + 8n additions; for cut-and-choose check k*n base +
#                k*n var + 2kn additions, make (k+1)*n base and var; plus 2n validations
#                (the deck)
#   deal_shares, draw_share, discard, close, show
#                check, per share: DLEQ, 1 base + 3 var, 1 point validation;
#                make, per share: 1 base + 2 var (d, B), 1 point validation (c1)
#   secret       check: 1 base (x_i*G == Y_i)
#   end of hand  every slot decrypted once: 1 var per slot (deck + re-shuffled sub-decks)
#   own cards    a seat opens its 7 dealt cards and each stock draw with its own share: 1 var
#
# Every envelope also has one Ed25519 signature to verify (others' only, for a seat). The
# floor in seconds multiplies the counts by per-operation costs measured in the same run with
# the deck benchmark's measure_primitives (libsodium through rbcl, per-call overhead
# included, as the code pays it).


OPS = ("base", "var", "add", "validate", "sig")


def deck_bench() -> Any:
    """``benchmarks/deck.py`` as a module (its floor machinery: measure_primitives, run_hand)."""
    mod = sys.modules.get("_bench_deck")
    if mod is None:
        spec = importlib.util.spec_from_file_location("_bench_deck", HERE / "deck.py")
        mod = importlib.util.module_from_spec(spec)
        sys.modules["_bench_deck"] = mod
        spec.loader.exec_module(mod)
    return mod


def measure_costs(reps: int = 400, rounds: int = 5) -> dict[str, float]:
    """Seconds per operation: the deck benchmark's primitives plus one Ed25519 verify."""
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    cost = dict(deck_bench().measure_primitives(reps, rounds))
    key = Ed25519PrivateKey.generate()
    msg = bytes(200)
    sig = key.sign(msg)
    pub = key.public_key()
    samples = []
    for _ in range(rounds):
        t = time.process_time()
        for _ in range(reps):
            pub.verify(sig, msg)
        samples.append((time.process_time() - t) / reps)
    cost["sig"] = statistics.median(samples)
    return cost


def _decode(frames: Iterable[bytes | Any]) -> list[Any]:
    return [f if isinstance(f, wire.Envelope) else wire.decode_envelope(f) for f in frames]


def count_ops(frames: Iterable[bytes | Any], me: int | None = None) -> dict[str, Any]:
    """Operations a node must do for this chain: ``me`` = None for an observer (audit),
    else that seat playing. Returns ``{"ops": {base, var, validate, sig}, "k", "hands",
    "shuffles", "cards_shuffled", "shares", "envelopes"}``."""
    envs = _decode(frames)
    k, system = 64, "terelius-wikstrom"
    ops = Counter({o: 0 for o in OPS})
    shuffles = shares = hands = cards = 0
    slots = 0  # slots of the current hand: the deck plus every re-shuffled sub-deck
    restock_round = 0
    secrets_seen = 0
    dealt = False
    share_counts = {"draw_share": 1, "discard": 1}
    for env in envs:
        kind, b, s = env.kind, env.body, env.seat
        mine = me is not None and s == me
        if not mine:
            ops["sig"] += 1
        if kind == "offer":
            k = b["proof_rounds"]
            system = b["rules"].get("shuffle_proof", system)
        elif kind == "key_commit":
            slots, restock_round, secrets_seen, dealt = 0, 0, 0, False
            if mine:
                ops["base"] += 1  # Y_i = x_i*G
        elif kind == "key_share":
            if mine:
                ops["base"] += 1  # Schnorr commitment w*G
            else:
                ops["base"] += 1
                ops["var"] += 1
                ops["validate"] += 1
        elif kind == "shuffle":
            n = len(b["deck"]) // 64
            shuffles += 1
            cards += n
            if b["round"] == 0:
                if slots == 0:
                    hands += 1
                slots = n
            elif b["round"] != restock_round:
                restock_round = b["round"]
                slots += n
            sh = deck_bench().shuffle_ops(system, n, k)  # per proof system, additions included
            if mine:
                ops.update(sh["precompute"])
                ops.update(sh["online"])
            else:
                ops.update(sh["verify"])
                ops["validate"] += 2 * n
        elif kind in ("deal_shares", "draw_share", "discard", "close", "show"):
            m = share_counts.get(kind) or len(b["shares"])
            shares += m
            if mine:
                ops["base"] += m
                ops["var"] += 2 * m
                ops["validate"] += m
            else:
                ops["base"] += m
                ops["var"] += 3 * m
                ops["validate"] += m
            if kind == "deal_shares" and not dealt:
                dealt = True
                if me is not None:
                    ops["var"] += 7  # own shares to open the seat's own seven cards
        elif kind == "draw":
            if mine and b["source"] == "stock":
                ops["var"] += 1  # own share to open the drawn card
        elif kind == "secret":
            secrets_seen += 1
            if not mine:
                ops["base"] += 1  # x_i*G == Y_i
            if secrets_seen == 1:
                ops["var"] += slots  # the end-of-hand audit decrypts every slot once
    return {"ops": dict(ops), "k": k, "hands": hands, "shuffles": shuffles,
            "cards_shuffled": cards, "shares": shares, "envelopes": len(envs)}


def floor_seconds(ops: dict[str, int], cost: dict[str, float]) -> dict[str, float]:
    """The floor in seconds: ``mults`` (base + variable-base multiplications and point
    additions), ``with_validation`` (+ point validations), ``with_signatures`` (+ Ed25519
    verifies)."""
    mults = ops["base"] * cost["base"] + ops["var"] * cost["var"] + ops["add"] * cost["add"]
    val = mults + ops["validate"] * cost["validate"]
    return {"mults": mults, "with_validation": val, "with_signatures": val + ops["sig"] * cost["sig"]}


# --------------------------------------------------------------- in-process recording
#
# Deterministic self-play: N seats' Tables driven by one synchronous loop (no sockets,
# threads or clocks in the protocol path), the full protocol (own identity keys, every check
# on every envelope, deferred shuffle proofs run as jobs in order on this thread, the simple
# bot deciding). With a seed, the same code plays the same game envelope for envelope.


@dataclass
class SelfPlay:
    """Result of :func:`self_play`: the host's chain (``frames``), every seat's table, the CPU
    seconds spent in each seat's table calls (``cpu_s``, jobs included) and the calls."""

    frames: list[bytes]
    tables: list[tbl.Table]
    cpu_s: list[float]
    calls: list[int]
    hands: int
    winner: int | None
    fault: Any
    job_cpu_s: list[float] = field(default_factory=list)


def self_play(
    seats: int = 4,
    *,
    seed: int | str = 1,
    k: int = tbl.DEFAULT_PROOF_ROUNDS,
    rules: Any = None,
    max_envelopes: int = 1_000_000,
    view_after_call: bool = False,
    around: Callable[[int], Any] | None = None,
    max_seats: int | None = None,
) -> SelfPlay:
    """Play one game among ``seats`` bot seats in this thread and return the result.

    ``view_after_call`` rebuilds each seat's SeatView after every call (what a node with a UI
    or a console printer does). ``around(seat)``, if given, returns a context manager entered
    around every call into that seat's table (e.g. to switch a profiler on for one seat).
    ``max_seats``: the offer's (default ``seats``); the host seats ``seats`` players.
    """
    if rules is None:
        from p2p_chinchon.engine import make_rules

        rules = make_rules("classic")
    rngs = [seat_rng(seed, i) for i in range(seats)]
    ids = [Identity.generate(rngs[i]) for i in range(seats)]
    deciders = [bot_decider(make_bot(rules, rngs[i])) for i in range(seats)]
    cpu = [0.0] * seats
    job_cpu = [0.0] * seats
    calls = [0] * seats
    todo: deque[tuple[int, str, Any]] = deque()

    def call(seat: int, fn: Callable[..., list], *args: Any, job: bool = False) -> list:
        ctx = around(seat) if around is not None else contextlib.nullcontext()
        t0 = time.process_time()
        with ctx:
            outs = fn(*args)
            if view_after_call:
                tables[seat].view()
        dt = time.process_time() - t0
        cpu[seat] += dt
        if job:
            job_cpu[seat] += dt
        calls[seat] += 1
        dispatch(seat, outs)
        return outs

    def dispatch(seat: int, outs: list) -> None:
        for out in outs:
            if isinstance(out, tbl.Send):
                for other in range(seats):
                    if other != seat:
                        todo.append((other, "recv", out.frame))
            elif isinstance(out, tbl.Job):
                todo.append((seat, "job", out))
        todo.append((seat, "decide", None))

    # joiners refuse a table whose k is below their minimum: accept the k we were asked for
    weak = {"min_proof_rounds": min(k, tbl.MIN_PROOF_ROUNDS)} if hasattr(tbl, "MIN_PROOF_ROUNDS") else {}
    host = tbl.Table.create(ids[0], rngs[0], name="bench table", rules=rules, max_seats=max_seats or seats,
                            addr="127.0.0.1:1", proof_rounds=k, auto_agree=True, defer_proofs=True)
    host.lobby.set_host_name(BOT_NAMES[0])
    tables = [host]
    for i in range(1, seats):
        t = tbl.Table.joining(ids[i], rngs[i], host.chain.frames[0], auto_agree=True, defer_proofs=True,
                              **weak)
        host.lobby.seat_host(BOT_NAMES[i], ids[i].public_bytes, f"127.0.0.1:{1000 + i}")
        tables.append(t)
    call(0, host.start)
    seating = host.chain.frames[1]
    for i in range(1, seats):
        call(i, tables[i].receive, seating, 0)

    while todo:
        if len(host.chain.frames) > max_envelopes:
            raise RuntimeError("self-play did not end")
        seat, what, arg = todo.popleft()
        t = tables[seat]
        if what == "recv":
            call(seat, t.receive, arg, None)
        elif what == "job":
            def run_and_report(job: tbl.Job = arg, t: tbl.Table = t) -> list:
                return t.job_done(job.id, tbl.run_job(job))

            call(seat, run_and_report, job=True)
        else:
            need = t.needs_decision()
            if need is None:
                continue
            ctx = around(seat) if around is not None else contextlib.nullcontext()
            t0 = time.process_time()
            with ctx:
                intent = deciders[seat](t.view(), need)
            cpu[seat] += time.process_time() - t0
            if intent is not None:
                call(seat, t.intent, intent)
    return SelfPlay(
        frames=list(host.chain.frames), tables=tables, cpu_s=cpu, calls=calls,
        hands=len(host.turns.score_history), winner=host.flow.winner, fault=host.flow.fault, job_cpu_s=job_cpu,
    )


# ------------------------------------------------------------------------- the replay

# (module, attribute, category) of every function timed during the replay
TIMED = [
    (deck, "verify_shuffle", "proof: shuffle"),
    (deck, "verify_decryption_share", "proof: DLEQ shares"),
    (deck, "verify_key_share", "proof: Schnorr key shares"),
    (deck, "verify_secret", "proof: secrets"),
    (deck, "decode_deck", "deck decoding (point validation)"),
    (deck, "decrypt_with_secrets", "end-of-hand decryption"),
    (deck, "open_card", "opening cards"),
    (deck, "joint_key", "joint key"),
    (wire, "verify_envelope", "signatures (Ed25519)"),
    (wire, "decode_envelope", "envelope decoding"),
]
PROOF_CATEGORIES = ("proof: shuffle", "proof: DLEQ shares", "proof: Schnorr key shares",
                    "proof: secrets")


@contextlib.contextmanager
def timed_calls(spent: dict[str, float], calls: dict[str, int]):
    """Wrap the TIMED functions so that their CPU time lands in ``spent`` by category."""
    saved = []
    for mod, name, cat in TIMED:
        fn = getattr(mod, name)
        saved.append((mod, name, fn))

        def wrapper(*a, __fn=fn, __cat=cat, **kw):
            t = time.process_time()
            try:
                return __fn(*a, **kw)
            finally:
                spent[__cat] += time.process_time() - t
                calls[__cat] += 1

        setattr(mod, name, functools.wraps(fn)(wrapper))
    try:
        yield
    finally:
        for mod, name, fn in saved:
            setattr(mod, name, fn)


def record(args: argparse.Namespace, folder: Path) -> list[bytes]:
    if args.in_process:
        rules = None
        if args.limit is not None:
            from p2p_chinchon.engine import make_rules

            rules = make_rules("classic", {"limit": args.limit})
        sp = self_play(4, seed=args.seed if args.seed is not None else 1, k=args.k, rules=rules)
        return sp.frames
    import game

    g = game.play_game(4, args.k, args.seed, folder, "classic", 3600.0)
    return load_transcript(g["transcript"]).frames


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench audit", description=__doc__.splitlines()[0])
    ap.add_argument("--transcript", type=Path, help="audit this file instead of recording a game")
    ap.add_argument("--proof-rounds", "--k", dest="k", type=int, default=64, metavar="K",
                    help="k of the game to record (default 64)")
    ap.add_argument("--seed", default=None, help="seed of the game to record")
    ap.add_argument("--in-process", action="store_true",
                    help="record with the single-thread self-play instead of processes")
    ap.add_argument("--limit", type=int, default=None, metavar="POINTS",
                    help="the recorded game's table limit (default the classic 100; a lower one "
                         "records fewer hands; --in-process only)")
    ap.add_argument("--keep", metavar="DIR", type=Path, help="keep the recorded game in DIR")
    ap.add_argument("--profile", action="store_true", help="also print a cProfile of the replay")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--jobs", type=int, default=1, metavar="N",
                    help="processes checking shuffle proofs beside the replay (audit --jobs; default 1: "
                         "all in this process, where the breakdown sees every call; with more, the CPU "
                         "and breakdown are this process's only, and the wall time is the figure)")
    args = ap.parse_args(argv)
    if args.limit is not None and not args.in_process:
        ap.error("--limit needs --in-process")

    if args.transcript:
        res = load_transcript(args.transcript)
        if res.errors:
            raise SystemExit(f"{args.transcript}: {res.errors[0]}")
        frames, source = res.frames, str(args.transcript)
    else:
        source = ("self-play" if args.in_process else "4 processes") + f", seed {args.seed}"
        if args.keep:
            args.keep.mkdir(parents=True, exist_ok=True)
            folder = Path(tempfile.mkdtemp(prefix="bench-audit-", dir=args.keep))
            frames = record(args, folder)
            path = folder / "recorded.chn"
            path.write_bytes(b"".join(frames))
            source += f", saved as {path}"
        else:  # the recording is scratch: every run used to leave ~1.6 MB in the temp folder
            with tempfile.TemporaryDirectory(prefix="bench-audit-") as scratch:
                frames = record(args, Path(scratch))

    spent: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    prof = cProfile.Profile() if args.profile else None
    with timed_calls(spent, calls):
        t_wall = time.perf_counter()
        t = time.process_time()
        if prof:
            prof.enable()
        report = audit_frames(frames, jobs=args.jobs)
        if prof:
            prof.disable()
        cpu = time.process_time() - t
        wall = time.perf_counter() - t_wall
    if report.verdict != "ok":
        raise SystemExit(f"audit verdict {report.verdict}: {report.summary()}")

    counts = count_ops(frames, None)
    cost = measure_costs()
    floor = floor_seconds(counts["ops"], cost)
    hands = max(1, report.hands)
    proofs = sum(spent[c] for c in PROOF_CATEGORIES)
    timed = sum(spent.values())
    breakdown = {c: round(spent[c], 3) for c in sorted(spent, key=lambda c: -spent[c])}
    breakdown["rest (engine, table, copies)"] = round(cpu - timed, 3)
    res = {
        "source": source, "verdict": report.verdict, "envelopes": len(frames),
        "bytes": sum(len(f) for f in frames), "hands": report.hands, "k": counts["k"],
        "shuffles": counts["shuffles"], "shares": counts["shares"],
        "audit_cpu_s": round(cpu, 3), "audit_wall_s": round(wall, 3),
        "envelopes_per_s": round(len(frames) / cpu, 1),
        "s_per_hand": round(cpu / hands, 3),
        "jobs": args.jobs,
        "wall_s_per_hand": round(wall / hands, 3),
        "proof_share": round(proofs / cpu, 3),
        "breakdown_s": breakdown,
        "calls": dict(calls),
        "floor_ops": counts["ops"],
        "floor_s": round(floor["mults"], 3),
        "floor_s_with_validation_and_signatures": round(floor["with_signatures"], 3),
        "ratio": round(cpu / floor["mults"], 3),
        "ratio_with_validation_and_signatures": round(cpu / floor["with_signatures"], 3),
        "proof_verification_over_its_floor": None,
        "primitive_us": {k: round(v * 1e6, 2) for k, v in cost.items()},
    }
    # every multiplication an audit does is in a proof check or the end-of-hand decryption
    ops = counts["ops"]
    res["proof_verification_over_its_floor"] = round(
        (proofs + spent["end-of-hand decryption"]) / floor["mults"], 3) if floor["mults"] else None
    if args.json:
        print(json.dumps(res))
    else:
        print(f"audit: {res['envelopes']} envelopes ({res['bytes']} bytes), {res['hands']} hands, "
              f"k = {res['k']}, {res['shuffles']} shuffles, {res['shares']} decryption shares")
        print(f"  source: {res['source']}")
        print(f"  replay: {res['audit_cpu_s']} s CPU ({res['audit_wall_s']} s wall): "
              f"{res['envelopes_per_s']} envelopes/s, {res['s_per_hand']} s per hand "
              f"({res['wall_s_per_hand']} s wall, {res['jobs']} proof job(s)); "
              f"verdict {res['verdict']}")
        print(f"  proof verification: {res['proof_share'] * 100:.1f}% of the time")
        for c, s in res["breakdown_s"].items():
            print(f"    {c:34s} {s:8.3f} s  {100 * s / cpu:5.1f}%  ({calls.get(c, '-')} calls)")
        print(f"  floor (scalar multiplications: {ops['base']} base + {ops['var']} variable-base): "
              f"{res['floor_s']} s; audit / floor = {res['ratio']}")
        print(f"  with {ops['validate']} point validations and {ops['sig']} signature checks: "
              f"{res['floor_s_with_validation_and_signatures']} s; audit / floor = "
              f"{res['ratio_with_validation_and_signatures']}")
        print(f"  proofs + decryption / their multiplication floor: "
              f"{res['proof_verification_over_its_floor']}")
        print(f"  primitives (us): {res['primitive_us']}")
    if prof:
        pstats.Stats(prof, stream=sys.stderr).sort_stats("tottime").print_stats(25)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
