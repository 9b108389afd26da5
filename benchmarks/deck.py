"""Benchmark of the mental-poker deck: one hand set up and dealt, with every proof checked.

Usage: ``python benchmarks/deck.py --seats 4 --cards 40 [--proof cut-and-choose --k 64] [--json]``
(or ``p2p-chinchon bench deck --seats 4 --cards 40 --json``). The proof system is
Terelius-Wikström unless ``--proof cut-and-choose``; per shuffle it reports
``precompute_ms`` (needs only the joint key), ``prove_online_ms`` (once the deck arrives) and
``verify_ms`` (median over the verifying seats).

All seats run in this one process, one after the other; every task's CPU time
(``time.process_time``) is measured and charged to the seat doing it. ``wall_s`` is the
hand-ready time if every seat had its own core: the critical path of the protocol's task graph
(key commitments -> key shares -> joint key -> shuffle chain -> every seat verifies every other
seat's proof -> deal of 7 cards each, every share verified by every seat), replayed with the
measured task times. Each seat precomputes its shuffle (``prepare_shuffle``) as soon as the
joint key is known, so only point additions and hashing of its shuffle sit on the chain.

``floor_s`` counts the group operations of the same work (base-point and variable-base
multiplications, point additions and point validations) times their cost measured in this
run; ``ratio`` is CPU over floor. Also measured: opening one stock card to one seat
(shares by every other seat, verified by all) and the end-of-hand audit (secrets checked and
the whole deck decrypted). ``--mentalpoker PATH`` adds the pure-Python ``mentalpoker`` package
(PyPI) found at PATH: a 4-player shuffle of the same number of cards, without proofs.
"""

from __future__ import annotations

import argparse
import json
import os
import secrets
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import rbcl  # noqa: E402  (its own wrappers: the primitive costs as the floor counts them)

from p2p_chinchon.deck import sodium  # noqa: E402

sodium.remove_extracted_library()  # the file this import of rbcl wrote

from p2p_chinchon.deck import (  # noqa: E402
    GROUP,
    Context,
    KeyPair,
    card_points,
    decode_deck,
    decrypt_deck,
    decryption_share,
    encode_deck,
    initial_deck,
    joint_key,
    make_key_share,
    open_card,
    own_share,
    prepare_shuffle,
    proof_system,
    remask,
    shuffle,
    verify_decryption_share,
    verify_key_share,
    verify_secret,
    verify_shuffle,
)

HAND_SIZE = 7


def measure_primitives(reps: int = 400, rounds: int = 5) -> dict[str, float]:
    """Median seconds per call of the libsodium operations the floor counts (through rbcl)."""
    s = rbcl.crypto_core_ristretto255_scalar_random()
    p = rbcl.crypto_scalarmult_ristretto255_base(s)
    q = rbcl.crypto_core_ristretto255_random()
    ops = {
        "base": lambda: rbcl.crypto_scalarmult_ristretto255_base(s),
        "var": lambda: rbcl.crypto_scalarmult_ristretto255(s, p),
        "validate": lambda: rbcl.crypto_core_ristretto255_is_valid_point(p),
        "add": lambda: rbcl.crypto_core_ristretto255_add(p, q),
    }
    out = {}
    for name, f in ops.items():
        samples = []
        for _ in range(rounds):
            t = time.process_time()
            for _ in range(reps):
                f()
            samples.append((time.process_time() - t) / reps)
        out[name] = statistics.median(samples)
    return out


def shuffle_ops(system: str, n: int, k: int) -> dict[str, dict[str, int]]:
    """Group operations of one n-card shuffle: the prover's precompute (``prepare_shuffle``,
    re-masking included) and online part (``shuffle``), and one verification (``verify``).
    Counted from the code of ``p2p_chinchon.deck.tw`` and ``p2p_chinchon.deck.shuffle``."""
    if system == "cut-and-choose":
        return {"precompute": {"base": (k + 1) * n, "var": (k + 1) * n},
                "online": {"add": 2 * (k + 1) * n},
                "verify": {"base": k * n, "var": k * n, "add": 2 * k * n}}
    return {"precompute": {"base": 2 * n + 4, "var": 2 * n + 1, "add": 2 * n},
            "online": {"base": 2 * n, "var": 4 * n, "add": 6 * n},
            "verify": {"base": n + 4, "var": 8 * n + 4, "add": 9 * n + 3, "validate": 2 * n}}


class Counts:
    """Group operations per seat, by kind (see the docstrings of the deck modules)."""

    KINDS = ("base", "var", "add", "validate")

    def __init__(self, seats: int) -> None:
        self.c = [dict.fromkeys(self.KINDS, 0) for _ in range(seats)]

    def add(self, seat: int, ops: dict[str, int] | None = None, **kw: int) -> None:
        d = self.c[seat]
        for kind, m in {**(ops or {}), **kw}.items():
            d[kind] += m

    def floor(self, seat: int, cost: dict[str, float], with_validate: bool = True) -> float:
        d = self.c[seat]
        return sum(d[kind] * cost[kind] for kind in self.KINDS
                   if with_validate or kind != "validate")


class Clock:
    """CPU time per (seat, task) and the task graph for the critical path."""

    def __init__(self) -> None:
        self.cost: dict[tuple[int, str], float] = {}
        self.deps: dict[tuple[int, str], list[tuple[int, str]]] = {}
        self.order: dict[int, list[str]] = {}

    def run(self, seat: int, task: str, deps: list[tuple[int, str]], fn, *args, **kw):
        t = time.process_time()
        result = fn(*args, **kw)
        self.cost[(seat, task)] = self.cost.get((seat, task), 0.0) + time.process_time() - t
        self.deps[(seat, task)] = deps
        if task not in self.order.setdefault(seat, []):
            self.order[seat].append(task)
        return result


def critical_path(clock: Clock, seats: int, priority, own_first: bool) -> tuple[float, dict]:
    """Event-driven list schedule, one core per seat, non-preemptive tasks.

    A free seat starts its ready task of best ``priority``; with ``own_first`` it verifies no
    peer's proof before its own shuffle is out. Returns (makespan, finish times).
    """
    todo = {s: list(clock.order[s]) for s in range(seats)}
    finish: dict[tuple[int, str], float] = {}
    free = {s: 0.0 for s in range(seats)}
    while any(todo.values()):
        busy = [x for x in range(seats) if todo[x]]
        now = min(free[x] for x in busy)
        for s in (x for x in busy if free[x] == now):
            deps = clock.deps
            ready = [t for t in todo[s]
                     if all(d in finish and finish[d] <= now for d in deps[(s, t)])
                     and not (own_first and t.startswith("verify")
                              and (s, "shuffle") not in finish)]
            if ready:
                task = min(ready, key=lambda t: priority(s, t))
                todo[s].remove(task)
                finish[(s, task)] = now + clock.cost[(s, task)]
                free[s] = finish[(s, task)]
                break
        else:  # nobody free can start: wait for the next finish or the next free seat
            later = [f for f in finish.values() if f > now] + [free[x] for x in busy
                                                               if free[x] > now]
            if not later:
                raise RuntimeError(f"task graph deadlock: {todo}")
            for x in busy:
                if free[x] == now:
                    free[x] = min(later)
    return max(finish.values()), finish


def run_hand(seats: int, cards: int, k: int, rng=secrets,
             proof: str = "terelius-wikstrom") -> dict:
    n = cards
    system = proof_system(proof, k)
    ops = shuffle_ops(system.name, n, k)
    if seats * HAND_SIZE + 1 > n:
        raise SystemExit(f"{seats} seats x {HAND_SIZE} cards + 1 need more than {n} cards")
    clock, counts = Clock(), Counts(seats)
    game = secrets.token_bytes(16)
    ctx = [Context(game, 1, s) for s in range(seats)]
    points = card_points(n)
    everyone = range(seats)

    # -- keys -------------------------------------------------------------------------------
    kps, commits, shares = [], [], []
    for s in everyone:
        kp = clock.run(s, "keygen", [], KeyPair.generate, rng)
        commits.append(clock.run(s, "keygen", [], kp.commitment, ctx[s]))
        kps.append(kp)
        counts.add(s, base=1)
    for s in everyone:
        shares.append(clock.run(s, "keyshare", [(j, "keygen") for j in everyone],
                                make_key_share, ctx[s], kps[s], rng))
        counts.add(s, base=1)
    joint = None
    for s in everyone:
        deps = [(j, "keyshare") for j in everyone]
        publics = []
        for j in everyone:
            if j == s:
                publics.append(kps[s].public)
                continue
            publics.append(clock.run(s, "keyverify", deps, verify_key_share, ctx[j], shares[j],
                                     commits[j], kps[j].nonce))
            counts.add(s, base=1, var=1, validate=1, add=1)
        joint = clock.run(s, "keyverify", deps, joint_key, publics)
        counts.add(s, validate=seats + 1, add=seats - 1)

    # -- shuffle chain ----------------------------------------------------------------------
    deck = initial_deck(n)
    wire_decks, proofs, decks = [], [], [deck]
    precompute_s, online_s = [], []
    for s in everyone:
        t = time.process_time()
        prep = clock.run(s, "prep", [(s, "keyverify")], prepare_shuffle, joint, n, rng, k,
                         system=system)
        precompute_s.append(time.process_time() - t)
        counts.add(s, ops["precompute"], validate=1)
        deps = [(s, "prep")] + ([(s - 1, "shuffle")] if s else [])
        if s:  # the seat decodes (validates) its input deck before shuffling it
            deck = clock.run(s, "shuffle", deps, decode_deck, wire_decks[-1], n)
            counts.add(s, validate=2 * n)
        t = time.process_time()
        out, proof = clock.run(s, "shuffle", deps, shuffle, ctx[s], joint, deck, rng, k,
                               prep=prep, system=system)
        online_s.append(time.process_time() - t)
        counts.add(s, ops["online"], validate=1)
        wire_decks.append(clock.run(s, "shuffle", deps, encode_deck, out))
        proofs.append(proof)
        deck = out
        decks.append(out)
    verify_s: list[list[float]] = [[] for _ in everyone]
    for v in everyone:
        for s in everyone:
            if s == v:
                continue
            task = f"verify{s}"
            deps = [(s, "shuffle"), (v, "keyverify")]
            d_in = (clock.run(v, task, deps, decode_deck, wire_decks[s - 1], n) if s
                    else initial_deck(n))
            d_out = clock.run(v, task, deps, decode_deck, wire_decks[s], n)
            counts.add(v, validate=2 * n * (2 if s else 1))
            t = time.process_time()
            clock.run(v, task, deps, verify_shuffle, ctx[s], joint, d_in, d_out, proofs[s], k,
                      system=system)
            verify_s[s].append(time.process_time() - t)
            counts.add(v, ops["verify"], validate=1)
    final = decks[-1]

    # -- deal: slot i goes to seat i % seats ------------------------------------------------
    dealt = {}
    share_of: dict[tuple[int, int], bytes] = {}
    verified = [(s, f"verify{j}") for s in everyone for j in everyone if j != s]
    for s in everyone:
        deps = [x for x in verified if x[0] == s] + [(seats - 1, "shuffle")]
        for slot in range(seats * HAND_SIZE):
            if slot % seats == s:
                continue
            share_of[(s, slot)] = clock.run(s, "deal_share", deps, decryption_share, ctx[s],
                                            kps[s], final[slot], slot, rng)
            counts.add(s, base=1, var=2, validate=1)
    for v in everyone:
        deps = [(j, "deal_share") for j in everyone]
        for slot in range(seats * HAND_SIZE):
            owner = slot % seats
            ds = []
            for s in everyone:
                if s == owner:
                    continue
                if s == v:  # one's own published share needs no check
                    ds.append(share_of[(s, slot)][:32])
                    continue
                ds.append(clock.run(v, "deal_verify", deps, verify_decryption_share, ctx[s],
                                    kps[s].public, final[slot], slot, share_of[(s, slot)]))
                counts.add(v, base=1, var=3, validate=1, add=2)
            if owner == v:
                ds.append(clock.run(v, "deal_verify", deps, own_share, kps[v], final[slot]))
                counts.add(v, var=1, add=seats)
                dealt[slot] = clock.run(v, "deal_verify", deps, open_card, final[slot], ds,
                                        points)
    assert sorted(dealt) == list(range(seats * HAND_SIZE))
    assert len(set(dealt.values())) == len(dealt)

    cpu = [sum(c for (s, _), c in clock.cost.items() if s == seat) for seat in everyone]

    def prio(seat, task):
        order = ["keygen", "keyshare", "keyverify", "shuffle", "prep"]
        if task in order:
            return (order.index(task), 0)
        if task.startswith("verify"):
            return (len(order), int(task[6:]))
        return (len(order) + 1, ["deal_share", "deal_verify"].index(task))

    schedules = {name: critical_path(clock, seats, prio, own)
                 for name, own in (("greedy", False), ("own-shuffle-first", True))}
    policy = min(schedules, key=lambda p: schedules[p][0])
    wall, finish = schedules[policy]
    chain_end = finish[(seats - 1, "shuffle")]

    # -- open one stock card for seat 0, verified by everyone -------------------------------
    slot = seats * HAND_SIZE
    t_share = []
    stock_shares = {}
    for s in range(1, seats):
        t = time.process_time()
        stock_shares[s] = decryption_share(ctx[s], kps[s], final[slot], slot, rng)
        t_share.append(time.process_time() - t)
    t_verify = []
    for v in everyone:
        t = time.process_time()
        ds = [verify_decryption_share(ctx[s], kps[s].public, final[slot], slot, stock_shares[s])
              for s in range(1, seats) if s != v]
        if v == 0:
            open_card(final[slot], ds + [own_share(kps[0], final[slot])], points)
        t_verify.append(time.process_time() - t)
    open_s = max(t_share) + max(t_verify)

    # -- end-of-hand audit: secrets checked, whole deck decrypted (per seat) ----------------
    t = time.process_time()
    for s in range(seats):
        verify_secret(ctx[s], kps[s].secret_bytes(), kps[s].public)
    order = decrypt_deck(final, [kp.secret_bytes() for kp in kps], points)
    audit_s = time.process_time() - t
    assert all(order[sl] == dealt[sl] for sl in dealt)

    # -- same shuffle chain without proofs (for the mentalpoker comparison) -----------------
    t = time.process_time()
    d = initial_deck(n)
    for _ in everyone:
        perm = list(range(n))
        for m in range(n - 1, 0, -1):
            j = secrets.randbelow(m + 1)
            perm[m], perm[j] = perm[j], perm[m]
        d = [remask(d[p], GROUP.random_scalar(secrets), joint) for p in perm]
    noproof_s = time.process_time() - t

    prim = measure_primitives()
    floors = [counts.floor(s, prim) for s in everyone]
    floors_nv = [counts.floor(s, prim, with_validate=False) for s in everyone]
    pb = [len(p) for p in proofs]
    ms = [[round(x * 1000, 2) for x in xs] for xs in (precompute_s, online_s)]
    return {
        "seats": seats, "cards": n, "k": k if system.name == "cut-and-choose" else None,
        "proof_system": system.name,
        "precompute_ms": ms[0],
        "prove_online_ms": ms[1],
        "verify_ms": [round(statistics.median(v) * 1000, 2) for v in verify_s],
        "wall_s": round(wall, 4),
        "wall_note": (f"critical path from per-seat CPU times measured in this run, as if each "
                      f"seat had its own core (this machine has {os.cpu_count()} cores, so the "
                      f"seats ran one after another)"),
        "shuffle_chain_done_s": round(chain_end, 4),
        "schedule": policy,
        "wall_s_by_schedule": {p: round(v[0], 4) for p, v in schedules.items()},
        "cpu_s_per_seat": round(max(cpu), 4),
        "cpu_s_each_seat": [round(c, 4) for c in cpu],
        "floor_s": round(max(floors), 4),
        "floor_s_without_validation": round(max(floors_nv), 4),
        "ratio": round(sum(cpu) / sum(floors), 3),
        "ratio_without_validation": round(sum(cpu) / sum(floors_nv), 3),
        "mults_per_seat": counts.c[max(range(seats), key=lambda s: floors[s])],
        "primitive_us": {k2: round(v * 1e6, 2) for k2, v in prim.items()},
        "proof_bytes": sum(pb),
        "proof_bytes_each": pb,
        "deck_bytes": 64 * n,
        "open_card_s": round(open_s, 5),
        "audit_s": round(audit_s, 4),
        "audit_full_reverify_s_single_core": round(
            sum(clock.cost[(0 if s else 1, f"verify{s}")] for s in everyone), 4),
        "task_cpu_s": {f"{s}:{t}": round(c, 4) for (s, t), c in sorted(clock.cost.items())},
        "shuffle_chain_no_proofs_s": round(noproof_s, 4),
    }


MP_CODE = r"""
import json, sys, time
from mentalpoker import DealerEC, DealerEG, CARDS
seats, n = int(sys.argv[1]), int(sys.argv[2])
cards = [f"c{i}" for i in range(n)]
out = {}
for cls in (DealerEC, DealerEG):
    players = [cls(cards=cards) for _ in range(seats)]
    t = time.process_time()
    deck = players[0].new_deck
    for p in players:
        deck = p.shuffle(deck)
    out[cls.__name__] = round(time.process_time() - t, 4)
print(json.dumps(out))
"""


def run_mentalpoker(path: str | None, seats: int, cards: int) -> dict:
    env = dict(os.environ)
    if path:
        env["PYTHONPATH"] = path + os.pathsep + env.get("PYTHONPATH", "")
    try:
        r = subprocess.run([sys.executable, "-c", MP_CODE, str(seats), str(cards)], env=env,
                           capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "timed out"}
    if r.returncode:
        return {"error": (r.stderr.strip().splitlines() or ["failed"])[-1]}
    return {"shuffle_s": json.loads(r.stdout), "note": "SRA/commutative masking, "
            "random.shuffle permutation, no proofs; DealerEC = secp256k1 via pure-Python "
            "ecdsa, DealerEG = 2048-bit ElGamal"}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench deck", description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--cards", type=int, default=40)
    ap.add_argument("--proof", choices=("terelius-wikstrom", "cut-and-choose"),
                    default="terelius-wikstrom", help="shuffle proof system")
    ap.add_argument("--k", type=int, default=64,
                    help="shadow shuffles per cut-and-choose proof (default 64)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--mentalpoker", metavar="PATH", nargs="?", const="",
                    help="also time the PyPI 'mentalpoker' package (import path, optional)")
    args = ap.parse_args(argv)
    if not 2 <= args.seats <= 8 or not 1 <= args.cards <= 256:
        ap.error("need 2..8 seats and 1..256 cards")
    res = run_hand(args.seats, args.cards, args.k, proof=args.proof)
    if args.mentalpoker is not None:
        res["mentalpoker"] = run_mentalpoker(args.mentalpoker or None, args.seats, args.cards)
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"deck: {args.seats} seats x {args.cards} cards, {res['proof_system']}"
          + (f", k = {args.k}" if res["k"] else ""))
    print(f"  per shuffle (ms): precompute {res['precompute_ms']}, prove online "
          f"{res['prove_online_ms']}, verify {res['verify_ms']}")
    print(f"  hand ready (wall, one core per seat): {res['wall_s']:.3f} s"
          f"  (shuffle chain done at {res['shuffle_chain_done_s']:.3f} s; schedule "
          f"{res['wall_s_by_schedule']})")
    print(f"  {res['wall_note']}")
    print(f"  CPU per seat (max): {res['cpu_s_per_seat']:.3f} s  each: {res['cpu_s_each_seat']}")
    print(f"  floor per seat: {res['floor_s']:.3f} s ({res['floor_s_without_validation']:.3f} s "
          f"without point validation)  ratio CPU/floor: {res['ratio']} "
          f"({res['ratio_without_validation']} without validation)")
    print(f"  primitives (us): {res['primitive_us']}  mults/seat: {res['mults_per_seat']}")
    print(f"  proof bytes: {res['proof_bytes']} total, each {res['proof_bytes_each']}")
    print(f"  open one card (shares + verified by all): {res['open_card_s'] * 1000:.2f} ms")
    print(f"  end-of-hand audit (secrets + decrypt deck): {res['audit_s'] * 1000:.1f} ms; full "
          f"re-verification of all proofs on one core: "
          f"{res['audit_full_reverify_s_single_core']} s")
    print(f"  shuffle chain without proofs: {res['shuffle_chain_no_proofs_s']} s")
    if "mentalpoker" in res:
        print(f"  mentalpoker (PyPI): {res['mentalpoker']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
