"""Benchmark of a whole 4-seat bot game on loopback, every seat a separate process.

Usage: ``python benchmarks/game.py [--seats 4] [--proof-rounds 64] [--seed S] [--json]``
(or ``p2p-chinchon bench game ...``).

Starts ``p2p-chinchon host --bot --no-mdns`` and ``join --connect --bot`` processes (each its
own identity key, table, mesh links and fsynced transcript: the real protocol, not a
shortcut) with the node timing log on (``P2P_CHINCHON_TIMING``, see ``net/node.py``) and
measures:

* ``first_turn_s``: from starting the host process to the moment the first player's node has
  its seven cards and the turn (its last ``deal_shares`` of hand 1 accepted), and to the first
  ``draw`` accepted by the host; Python start-up (the package's bytecode written beforehand,
  as an installed copy has it: :func:`compile_package`), lobby, mesh, agreement, coin toss,
  keys, shuffle chain (deferred proofs) and deal included;
* ``draw_to_card_ms``: for every draw from the stock, from the drawer's node accepting its own
  ``draw`` to it accepting the last ``draw_share`` (when it opens the card): median and p95;
* ``between_hands_ms``: medians over the hands after the first, as the host's node saw them:
  from a hand's last envelope to the next hand's first turn (``gap``), and its parts ``keys``
  (key commitments and shares), ``shuffles`` (the round-0 shuffle chain) and ``deal``;
* ``game_s``: from starting the host to every process having exited;
* CPU seconds each peer used (``os.wait4`` rusage: user + system, start-up included), in
  total and per hand.

They are reported against the deck benchmark's floor (``benchmarks/deck.py`` run in this
process at the same k: the hand-ready critical path ``wall_s`` and per-seat multiplication
floor ``floor_s`` for 4 seats x 40 cards, and ``open_card_s``), and against the floor of this
very game counted from its transcript (``benchmarks/audit.py`` ``count_ops``: every multiplication the seat
must do, re-shuffles of the stock included). This machine's core count is in the output:
with fewer cores than seats the peers share them, so wall times include waiting for a core.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

import audit as _floor  # noqa: E402  (count_ops, floor_seconds, measure_costs, deck_bench)

NAMES = ["Ana", "Bruno", "Carla", "Diego", "Elena", "Fermin", "Gloria", "Hugo"]


def _pct(xs: list[float], q: float) -> float:
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(round(q * (len(xs) - 1))))]


def _wait_for_port(path: Path, proc: subprocess.Popen, timeout: float = 60.0) -> int:
    """The host prints "table '...' open on port N" on stderr once its lobby listens."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        m = re.search(r"open on port (\d+)", path.read_text(errors="replace") if path.exists() else "")
        if m:
            return int(m.group(1))
        if proc.poll() is not None:
            raise SystemExit(f"the host exited early:\n{path.read_text(errors='replace')}")
        time.sleep(0.01)
    raise SystemExit("the host did not open its lobby in time")


def _reap(procs: list[subprocess.Popen], timeout: float) -> list[dict]:
    """Wait for every process; return each one's exit code and rusage CPU seconds."""
    out: dict[int, dict] = {}
    end = time.monotonic() + timeout
    pending = {p.pid: p for p in procs}
    while pending:
        if time.monotonic() > end:
            for p in pending.values():
                p.kill()
            raise SystemExit("the game did not finish in time (processes killed)")
        pid, status, ru = os.wait4(-1, os.WNOHANG)
        if pid == 0:
            time.sleep(0.02)
            continue
        p = pending.pop(pid, None)
        if p is None:
            continue
        p.returncode = os.waitstatus_to_exitcode(status)
        out[pid] = {"exit": p.returncode, "cpu_s": ru.ru_utime + ru.ru_stime,
                    "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "end": time.time()}
    return [out[p.pid] for p in procs]


def _read_logs(folder: Path) -> dict[int, list[tuple[float, int, int, str, str]]]:
    """seat -> [(time, seq, sender, kind, source)] from the nodes' timing logs."""
    logs: dict[int, list] = {}
    for f in folder.glob("node-*.log"):
        rows = []
        me = None
        for line in f.read_text().splitlines():
            parts = line.split()
            if len(parts) < 5:
                continue
            me = int(parts[1])
            rows.append((float(parts[0]), int(parts[2]), int(parts[3]), parts[4],
                         parts[5] if len(parts) > 5 else ""))
        if me is not None:
            logs[me] = sorted(rows, key=lambda r: r[1])
    return logs


def draw_latencies(logs: dict[int, list]) -> list[float]:
    """Seconds from each stock draw to the drawer's node accepting the last draw_share."""
    out = []
    for seat, rows in logs.items():
        for i, (t, _seq, sender, kind, src) in enumerate(rows):
            if kind != "draw" or sender != seat or src != "stock":
                continue
            last = None
            for t2, _s2, _snd2, kind2, _src2 in rows[i + 1:]:
                if kind2 != "draw_share":
                    break
                last = t2
            if last is not None:
                out.append(last - t)
    return out


def first_turn(logs: dict[int, list]) -> tuple[float, float]:
    """(time the first player's node is dealt in with the turn, time the host accepts the
    first draw)."""
    host = logs[0]
    first_draw = next(r for r in host if r[3] == "draw")
    player = first_draw[2]
    rows = logs.get(player, host)
    ready = max(r[0] for r in rows if r[3] == "deal_shares" and r[1] < first_draw[1])
    return ready, first_draw[0]


KEY_KINDS = ("key_commit", "key_share")


def between_hands(logs: dict[int, list]) -> dict[str, list[float]]:
    """Seconds between hands as the host's node accepted the envelopes, one entry per hand
    after the first: ``gap`` from the previous hand's last envelope (its last ``hand_digest``
    or ``reenter``) to the new hand's last ``deal_shares`` (the first player has the turn), and
    its parts: ``keys`` (up to the last ``key_share``: what carrying the next hand's keys on the
    end-of-hand messages would save at most), ``shuffles`` (the round-0 shuffle chain, proofs
    deferred) and ``deal`` (the ``deal_shares``)."""
    rows = logs[0]
    out: dict[str, list[float]] = {"gap": [], "keys": [], "shuffles": [], "deal": []}
    for i in range(1, len(rows)):
        if rows[i][3] != "key_commit" or rows[i - 1][3] in KEY_KINDS:
            continue
        j = i
        while j + 1 < len(rows) and rows[j + 1][3] in KEY_KINDS:
            j += 1
        k = j
        while k + 1 < len(rows) and rows[k + 1][3] == "shuffle":
            k += 1
        m = k
        while m + 1 < len(rows) and rows[m + 1][3] == "deal_shares":
            m += 1
        if m == k or rows[i - 1][3] == "toss":  # hand 1 (first_turn covers it), or cut short
            continue
        end = rows[i - 1][0]
        out["gap"].append(rows[m][0] - end)
        out["keys"].append(rows[j][0] - end)
        out["shuffles"].append(rows[k][0] - rows[j][0])
        out["deal"].append(rows[m][0] - rows[k][0])
    return out


def compile_package() -> None:
    """Write the package's bytecode (``__pycache__``, git-ignored) before the clock starts, as
    ``pip install`` does: with ``PYTHONDONTWRITEBYTECODE`` set (some shells and CI images set
    it) every peer would otherwise compile every module of ours at each start, about 0.2 s of
    CPU per process that no installed copy pays."""
    import compileall

    compileall.compile_dir(ROOT / "p2p_chinchon", quiet=1)


def play_game(seats: int, k: int, seed: str | None, folder: Path, rules: str,
              timeout: float) -> dict:
    compile_package()
    timing = folder / "timing"
    env = dict(os.environ)
    env["P2P_CHINCHON_TIMING"] = str(timing)
    env["PYTHONPATH"] = str(ROOT) + os.pathsep + env.get("PYTHONPATH", "")
    py = [sys.executable, "-m", "p2p_chinchon"]
    common = ["--bot", "--quiet", "--timeout", "120"] + (["--seed", str(seed)] if seed is not None else [])
    host_err = folder / "host.err"
    t0 = time.time()
    with open(host_err, "wb") as err:
        host = subprocess.Popen(
            py + ["host", "--no-mdns", "--seats", str(seats), "--bind", "127.0.0.1", "--port", "0",
                  "--player", NAMES[0], "--rules", rules, "--proof-rounds", str(k),
                  "--transcript", str(folder / "seat-0.chn")] + common,
            cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err)
    procs = [host]
    port = _wait_for_port(host_err, host)
    for i in range(1, seats):
        with open(folder / f"join-{i}.err", "wb") as err:
            procs.append(subprocess.Popen(
                py + ["join", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1",
                      "--name", NAMES[i], "--transcript", str(folder / f"join-{i}.chn")] + common
                + (["--min-proof-rounds", str(k)] if k < 64 else []),  # joiners refuse k < 64
                cwd=ROOT, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=err))
    usage = _reap(procs, timeout)
    t_end = max(u["end"] for u in usage)
    if any(u["exit"] for u in usage):
        errs = "\n".join((folder / n).read_text(errors="replace")[-2000:]
                         for n in ["host.err"] + [f"join-{i}.err" for i in range(1, seats)])
        raise SystemExit(f"a peer failed: exits {[u['exit'] for u in usage]}\n{errs}")
    logs = _read_logs(timing)
    if sorted(logs) != list(range(seats)):
        raise SystemExit(f"timing logs for seats {sorted(logs)} only")
    ready, first_draw = first_turn(logs)
    lat = draw_latencies(logs)
    # CPU per seat: the process of seat s is the one whose log says "me = s"
    pid_of_seat = {}
    for f in timing.glob("node-*.log"):
        line = f.read_text().split("\n", 1)[0].split()
        pid_of_seat[int(line[1])] = int(f.stem.split("-")[1])
    by_pid = {p.pid: u for p, u in zip(procs, usage, strict=True)}
    cpu = [by_pid[pid_of_seat[s]]["cpu_s"] for s in range(seats)]
    sys_s = [by_pid[pid_of_seat[s]]["sys_s"] for s in range(seats)]
    from p2p_chinchon.transcript import load_transcript

    frames = load_transcript(folder / "seat-0.chn").frames
    counts = [_floor.count_ops(frames, s) for s in range(seats)]
    last_game_end = max(r[0] for rows in logs.values() for r in rows if r[3] == "game_end")
    return {
        "t0": t0, "first_turn_s": ready - t0, "first_draw_s": first_draw - t0,
        "game_s": t_end - t0, "play_s": last_game_end - ready,
        "draw_to_card_s": lat, "between_hands_s": between_hands(logs), "cpu_s": cpu, "sys_s": sys_s, "counts": counts,
        "hands": counts[0]["hands"], "envelopes": len(frames),
        "shuffles": counts[0]["shuffles"], "transcript": str(folder / "seat-0.chn"),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench game", description=__doc__.splitlines()[0])
    ap.add_argument("--seats", type=int, default=4)
    ap.add_argument("--proof-rounds", "--k", dest="k", type=int, default=64, metavar="K",
                    help="shadow shuffles per shuffle proof (default 64)")
    ap.add_argument("--seed", default=None, help="seed the peers' randomness (bots and deck)")
    ap.add_argument("--rules", default="classic", help="rule preset (default classic)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    ap.add_argument("--keep", metavar="DIR", type=Path, help="keep transcripts and logs in DIR")
    ap.add_argument("--no-deck", action="store_true", help="skip the deck benchmark's floor run")
    ap.add_argument("--timeout", type=float, default=1800.0, help="seconds before giving up")
    args = ap.parse_args(argv)
    if not 2 <= args.seats <= 8:
        ap.error("2..8 seats")
    if args.keep:
        args.keep.mkdir(parents=True, exist_ok=True)
        folder = Path(tempfile.mkdtemp(prefix="game-", dir=args.keep))
        g = play_game(args.seats, args.k, args.seed, folder, args.rules, args.timeout)
    else:  # scratch: every run used to leave its transcripts and logs in the temp folder
        with tempfile.TemporaryDirectory(prefix="p2p-chinchon-bench-game-") as scratch:
            g = play_game(args.seats, args.k, args.seed, Path(scratch), args.rules, args.timeout)
        g["transcript"] = None
    cost = _floor.measure_costs()
    hands = max(1, g["hands"])
    lat = g["draw_to_card_s"]
    game_floor = [_floor.floor_seconds(c["ops"], cost) for c in g["counts"]]
    res: dict = {
        "seats": args.seats, "k": args.k, "seed": args.seed, "cores": os.cpu_count(),
        "hands": g["hands"], "envelopes": g["envelopes"], "shuffles": g["shuffles"],
        "first_turn_s": round(g["first_turn_s"], 3),
        "first_draw_s": round(g["first_draw_s"], 3),
        "draw_to_card_ms": {"median": round(statistics.median(lat) * 1e3, 2) if lat else None,
                            "p95": round(_pct(lat, 0.95) * 1e3, 2) if lat else None,
                            "n": len(lat)},
        "between_hands_ms": {part: round(statistics.median(xs) * 1e3, 1) if xs else None
                             for part, xs in g["between_hands_s"].items()}
        | {"n": len(g["between_hands_s"]["gap"])},
        "game_s": round(g["game_s"], 2),
        "play_s": round(g["play_s"], 2),
        "cpu_s_each_peer": [round(c, 2) for c in g["cpu_s"]],
        "sys_s_each_peer": [round(c, 2) for c in g["sys_s"]],
        "cpu_s_per_peer_per_hand": [round(c / hands, 3) for c in g["cpu_s"]],
        "game_floor_s_per_peer": [round(f["mults"], 2) for f in game_floor],
        "game_floor_s_per_peer_per_hand": [round(f["mults"] / hands, 3) for f in game_floor],
        "cpu_over_game_floor": [round(c / f["mults"], 3) for c, f in zip(g["cpu_s"], game_floor, strict=True)],
        "cpu_over_game_floor_with_validation_and_signatures": [
            round(c / f["with_signatures"], 3) for c, f in zip(g["cpu_s"], game_floor, strict=True)],
        "primitive_us": {k2: round(v * 1e6, 2) for k2, v in cost.items()},
        "transcript": g["transcript"],
    }
    if not args.no_deck:
        d = _floor.deck_bench().run_hand(4 if args.seats == 4 else args.seats,
                                         40 if args.seats <= 4 else 80, args.k)
        per_hand = sum(res["cpu_s_per_peer_per_hand"]) / args.seats
        res["deck_floor"] = {
            "cards": d["cards"],
            "hand_ready_wall_s": d["wall_s"], "floor_s_per_seat": d["floor_s"],
            "cpu_s_per_seat": d["cpu_s_per_seat"], "open_card_ms": round(d["open_card_s"] * 1e3, 3),
        }
        res["vs_deck_floor"] = {
            "first_turn_over_hand_ready_wall": round(g["first_turn_s"] / d["wall_s"], 2),
            "draw_to_card_median_over_open_card": (round(statistics.median(lat) / d["open_card_s"], 1)
                                                   if lat else None),
            "cpu_per_peer_per_hand_over_floor_s": round(per_hand / d["floor_s"], 3),
            "cpu_per_peer_per_hand_over_deck_cpu": round(per_hand / d["cpu_s_per_seat"], 3),
        }
    if args.json:
        print(json.dumps(res))
        return 0
    print(f"game: {args.seats} seats, separate processes on loopback, k = {args.k}, "
          f"seed {args.seed}, {res['cores']} cores")
    print(f"  {res['hands']} hands, {res['envelopes']} envelopes, {res['shuffles']} shuffles "
          f"(re-shuffles of the stock included)")
    print(f"  host start -> first turn: {res['first_turn_s']:.3f} s "
          f"(first draw accepted by the host at {res['first_draw_s']:.3f} s)")
    dm = res["draw_to_card_ms"]
    print(f"  stock draw -> drawer sees the card: median {dm['median']} ms, p95 {dm['p95']} ms "
          f"(n = {dm['n']})")
    bh = res["between_hands_ms"]
    print(f"  between hands (medians, n = {bh['n']}): {bh['gap']} ms from a hand's last envelope "
          f"to the next first turn: keys {bh['keys']} ms, shuffle chain {bh['shuffles']} ms, "
          f"deal {bh['deal']} ms")
    print(f"  whole game: {res['game_s']:.2f} s (play from first turn to game end "
          f"{res['play_s']:.2f} s)")
    print(f"  CPU per peer: {res['cpu_s_each_peer']} s; per hand {res['cpu_s_per_peer_per_hand']} s")
    print(f"  this game's floor per peer (multiplications it must do): "
          f"{res['game_floor_s_per_peer']} s; per hand {res['game_floor_s_per_peer_per_hand']} s")
    print(f"  CPU / game floor: {res['cpu_over_game_floor']} "
          f"(with point validation and signatures: "
          f"{res['cpu_over_game_floor_with_validation_and_signatures']})")
    if "deck_floor" in res:
        df, vs = res["deck_floor"], res["vs_deck_floor"]
        print(f"  deck benchmark, 4 x {df['cards']} at k = {args.k}: hand ready (critical path) "
              f"{df['hand_ready_wall_s']} s, floor {df['floor_s_per_seat']} s/seat, deck CPU "
              f"{df['cpu_s_per_seat']} s/seat, open a card {df['open_card_ms']} ms")
        print(f"  vs deck floor: first turn / hand-ready wall {vs['first_turn_over_hand_ready_wall']}x; "
              f"draw->card / open-card {vs['draw_to_card_median_over_open_card']}x; CPU per peer "
              f"per hand / floor {vs['cpu_per_peer_per_hand_over_floor_s']}x "
              f"(/ deck CPU {vs['cpu_per_peer_per_hand_over_deck_cpu']}x)")
    if res["transcript"]:
        print(f"  transcript: {res['transcript']}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
