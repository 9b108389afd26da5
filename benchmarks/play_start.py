"""Benchmark of ``play``'s start: how its bot peers start (``--bot-start exec`` against
``fork``), old and new alternating in one run.

Usage: ``python benchmarks/play_start.py [--runs N] [--bots B] [--seed S] [--json]`` (or
``p2p-chinchon bench play_start ...``).

Each run is ``p2p-chinchon play --no-ui --bots B --seed S --bot-start MODE``, its output read
line by line as it comes, stopped (the process group killed) at the first turn. Per run:
seconds from the start to the seating (``seated:``), from the seating to the first turn (the
first ``draws`` line), and from the start to the first turn. The medians of each mode and the
ratio fork / exec of the medians; modes alternate (exec, fork, exec, ...), so a machine that
speeds up or slows down during the run weighs on both alike.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time


def one_run(mode: str, bots: int, seed: int, scratch: str, timeout: float = 120.0) -> dict:
    folder = tempfile.mkdtemp(dir=scratch)  # its own data folder: play names its folder by the second
    env = dict(os.environ, XDG_DATA_HOME=folder, XDG_CONFIG_HOME=os.path.join(folder, "cfg"), PYTHONUNBUFFERED="1")
    cmd = [sys.executable, "-m", "p2p_chinchon", "play", "--no-ui", "--bots", str(bots), "--seed", str(seed),
           "--bot-start", mode, "--transcript", os.path.join(folder, f"host-{mode}-{time.monotonic_ns()}.chn")]
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                            env=env, text=True, start_new_session=True)
    seated = first = None
    watchdog = threading.Timer(timeout, lambda: os.killpg(proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        assert proc.stdout is not None
        for line in proc.stdout:
            now = time.perf_counter() - t0
            if seated is None and line.startswith("seated:"):
                seated = now
            elif seated is not None and " draws " in line:
                first = now
                break
    finally:
        watchdog.cancel()
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()
    if seated is None or first is None:
        raise SystemExit(f"{mode}: no first turn in the output")
    return {"to_seating": seated, "seating_to_first_turn": first - seated, "to_first_turn": first}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="bench play_start", description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="runs of each mode (default 5)")
    ap.add_argument("--bots", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    runs: dict[str, list[dict]] = {"exec": [], "fork": []}
    with tempfile.TemporaryDirectory(prefix="bench-play-start-") as folder:
        for _ in range(args.runs):
            for mode in ("exec", "fork"):
                runs[mode].append(one_run(mode, args.bots, args.seed, folder))
    res: dict = {"runs": args.runs, "bots": args.bots, "load": os.getloadavg()[0]}
    for key in ("to_seating", "seating_to_first_turn", "to_first_turn"):
        med = {m: statistics.median(r[key] for r in runs[m]) for m in runs}
        res[key] = {"exec_s": round(med["exec"], 3), "fork_s": round(med["fork"], 3),
                    "ratio": round(med["fork"] / med["exec"], 3),
                    "exec_all": [round(r[key], 3) for r in runs["exec"]],
                    "fork_all": [round(r[key], 3) for r in runs["fork"]]}
    if args.json:
        print(json.dumps(res))
    else:
        print(f"play --no-ui --bots {args.bots}: {args.runs} runs of each, alternating; load {res['load']:.2f}")
        for key in ("to_seating", "seating_to_first_turn", "to_first_turn"):
            r = res[key]
            print(f"  {key:24s} exec {r['exec_s']:.3f} s  fork {r['fork_s']:.3f} s  fork/exec {r['ratio']:.2f}"
                  f"  (exec {r['exec_all']}, fork {r['fork_all']})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
