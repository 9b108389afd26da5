"""Fault scenarios (docs/reliability.md), measured: three bot peers on loopback, one of them hit.

Usage: ``python benchmarks/faults.py SCENARIO [--rejoin-wait S]`` with SCENARIO one of
``none`` (baseline), ``kill-restart`` (SIGKILL Carla after her first draw, run the same command
again 5 s later), ``kill`` (SIGKILL for good), ``stop-30`` / ``stop-130`` (SIGSTOP Carla for 30
or 130 s, then SIGCONT).

Prints one JSON object: the game's wall time, each process's exit code, whether the three
transcripts are byte-identical, each audit verdict, and when (seconds after the fault) the
other seats' status lines first said "Carla disconnected" and "Carla is back" (their logs are
polled every 0.1 s, so these are upper bounds). Every process is a real peer
(``p2p-chinchon host/join --bot``), k = 4 proof rounds, ``limit=40``.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CLI = [sys.executable, "-m", "p2p_chinchon"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["none", "kill-restart", "kill", "stop-30", "stop-130"])
    ap.add_argument("--rejoin-wait", type=int, default=120)
    args = ap.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="p2p-faults-"))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    rules = ["--proof-rounds", "4", "--option", "limit=40", "--option", f"rejoin_wait={args.rejoin_wait}"]
    join = ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--bind", "127.0.0.1", "--min-proof-rounds", "4"]
    cmds = {
        "h": ["host", "--bot", "--no-mdns", "--port", str(port), "--bind", "127.0.0.1", "--seats", "3",
              "--transcript", "h.chn", *rules],
        "b": [*join, "--name", "Bruno", "--transcript", "b.chn"],
        "c": [*join, "--name", "Carla", "--transcript", "c.chn"],
    }
    env = dict(os.environ, PYTHONUNBUFFERED="1")

    def start(label: str, name: str) -> subprocess.Popen:
        with open(folder / f"{label}.log", "ab") as log:
            return subprocess.Popen([*CLI, *cmds[name]], stdout=log, stderr=subprocess.STDOUT,
                                    stdin=subprocess.DEVNULL, cwd=folder, env=env)

    t0 = time.monotonic()
    procs = {"h": start("h", "h")}
    time.sleep(1.0)
    procs["b"], procs["c"] = start("b", "b"), start("c", "c")
    seen: dict[str, float] = {}
    fault_at = None

    def poll() -> None:
        for n in ("h", "b"):
            text = (folder / f"{n}.log").read_text(errors="replace")
            for key in ("Carla disconnected", "Carla is back"):
                if fault_at is not None and f"{n}: {key}" not in seen and key in text:
                    seen[f"{n}: {key}"] = round(time.monotonic() - fault_at, 1)

    if args.scenario != "none":
        while b"Carla draws" not in (folder / "h.log").read_bytes():
            time.sleep(0.05)
        fault_at = time.monotonic()
        if args.scenario.startswith("kill"):
            procs["c"].send_signal(signal.SIGKILL)
            procs["c"].wait()
            if args.scenario == "kill-restart":
                end = time.monotonic() + 5
                while time.monotonic() < end:
                    poll()
                    time.sleep(0.1)
                procs["c"] = start("c2", "c")
        else:
            procs["c"].send_signal(signal.SIGSTOP)
            end = time.monotonic() + int(args.scenario.split("-")[1])
            while time.monotonic() < end:
                poll()
                time.sleep(0.1)
            procs["c"].send_signal(signal.SIGCONT)
    codes = {}
    while len(codes) < len(procs):
        poll()
        for n, p in procs.items():
            if n not in codes and p.poll() is not None:
                codes[n] = p.returncode
        time.sleep(0.1)
    game_s = round(time.monotonic() - t0, 1)
    data = {n: (folder / f"{n}.chn").read_bytes() for n in "hbc" if (folder / f"{n}.chn").exists()}
    verdicts = {}
    for n in data:
        out = subprocess.run([*CLI, "audit", str(folder / f"{n}.chn")], capture_output=True, text=True)
        verdicts[n] = out.stdout.strip().splitlines()[-1] if out.stdout.strip() else out.stderr.strip()
    print(json.dumps({
        "scenario": args.scenario, "game_s": game_s, "exit_codes": codes,
        "identical": len(set(data.values())) == 1 and len(data) == 3,
        "audit_last_line": verdicts, "status_after_fault_s": seen, "folder": str(folder),
    }, indent=1, ensure_ascii=False))


if __name__ == "__main__":
    main()
