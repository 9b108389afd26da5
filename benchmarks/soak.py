"""``p2p-chinchon bench soak``: whole bot games in a row, each seat its own process.

Usage: ``p2p-chinchon bench soak --games N [--seats S] [--faults] [--lossy] [--json] [--seed X]``.

Each game is ``S`` real peers on loopback (``p2p-chinchon host --bot`` and ``S - 1``
``join --bot``, default rules with ``--option limit=30`` so games stay short; the default
Terelius-Wikström shuffle proof). Figures, printed (or one JSON object with ``--json``):

- **games finished**: every peer exited 0 within ``--game-limit`` seconds.
- **desyncs**: games whose transcripts differ between seats, or do not ``audit`` ok (must be 0).
- **time lost to faults** (``--faults``): in each game one seat, chosen by the seeded plan, is
  killed with SIGKILL when its transcript holds the planned envelope (a kind and its count,
  e.g. the 2nd ``draw``), then started again with the same command after a pause of 0.5-3 s.
  The figure is the *stall*: the longest time after the kill during which no other seat's
  transcript grew (polled every 50 ms), i.e. the time the table made no progress; it includes
  the pause. ``game_s`` of each game is given too, to compare with a clean run's median.
- **peak memory per peer per game**: max RSS (``ru_maxrss`` from ``os.wait4``, of every
  process that played the seat in that game), first game against last; ``flat`` when no seat
  grew by more than 20 %.
- ``--lossy``: the last joiner sits behind :class:`Relay`, a userspace TCP relay that delays
  every chunk by 80 +- 20 ms and cuts each connection after a random number of chunks, so
  every link to it goes through the reconnect path now and then.

The plan (victims, points, pauses, relay cuts) comes from ``random.Random(--seed)``: the same
seed gives the same plan (nothing secret is drawn from it; the peers' own randomness is theirs).
Exit status 1 when a game did not finish, desynced, or memory was not flat.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import trio

CLI = [sys.executable, "-m", "p2p_chinchon"]
NAMES = ("Ana", "Bruno", "Carla", "Dora", "Elena", "Fede", "Gala", "Hugo")
RULES = ("--option", "limit=30")
POLL_S = 0.05
# (kind, how many of it the victim's transcript must hold): points spread over a hand, from the
# key set-up to the close; the counts can reach into a later hand
FAULT_POINTS = (("key_commit", 1), ("key_share", 2), ("shuffle", 1), ("shuffle", 2), ("deal_shares", 1),
                ("draw", 1), ("draw", 3), ("draw_share", 2), ("discard", 2), ("discard", 5),
                ("draw", 9), ("close", 1), ("show", 1), ("secret", 1), ("key_share", 5))
LOSSY_IP = "127.0.0.2"  # the relayed seat listens here; its seating address (127.0.0.1) is the relay's
FLAT_GROWTH = 1.2


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ------------------------------------------------------------------------------- the plan


@dataclass(frozen=True)
class Fault:
    """Kill seat ``victim`` (an index) once its transcript holds ``count`` envelopes of
    ``kind``; start it again ``pause_s`` seconds later."""

    victim: int
    kind: str
    count: int
    pause_s: float


def plan_faults(seed: str | int, games: int, seats: int) -> list[Fault]:
    """The seeded plan of ``--faults``: one :class:`Fault` per game (same seed, same plan)."""
    rng = random.Random(f"soak/faults/{seed}")
    out = []
    for _ in range(games):
        kind, count = rng.choice(FAULT_POINTS)
        out.append(Fault(rng.randrange(seats), kind, count, round(rng.uniform(0.5, 3.0), 2)))
    return out


def longest_stall(growth: list[float], since: float, end: float) -> float:
    """The longest stretch of ``[since, end]`` without a time in ``growth`` (sorted times at
    which some transcript grew), in seconds: the time lost after a fault at ``since``."""
    best, last = 0.0, since
    for t in growth:
        if t <= since:
            continue
        best, last = max(best, t - last), t
    return max(best, end - last)


def listening_ports(pid: int, ip: str) -> list[int]:
    """TCP ports process ``pid`` listens on at IPv4 ``ip`` (Linux: /proc/PID/fd and /proc/net/tcp)."""
    inodes = set()
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                target = os.readlink(f"/proc/{pid}/fd/{fd}")
            except OSError:
                continue
            if target.startswith("socket:["):
                inodes.add(target[8:-1])
    except OSError:
        return []
    want = "".join(f"{int(b):02X}" for b in reversed(ip.split(".")))  # little-endian hex
    ports = []
    with open("/proc/net/tcp") as f:
        next(f)
        for line in f:
            cols = line.split()
            local, state, inode = cols[1], cols[3], cols[9]
            addr, port = local.split(":")
            if state == "0A" and addr == want and inode in inodes:  # 0A: LISTEN
                ports.append(int(port, 16))
    return ports


# ------------------------------------------------------------------------------ the relay


class Relay:
    """A userspace TCP relay for a slow, flaky link: accepts on ``listen`` (host, port) and
    forwards each connection to ``target``. Every chunk read is sent on after ``delay_s`` +-
    ``jitter_s`` seconds, in order (a chunk never overtakes the one before it); each connection
    is cut (both sides closed) after a random number of chunks in ``cut_after`` (None: never).
    TCP cannot lose single packets in userspace, so loss shows up as these cuts, which force the
    mesh's reconnect path. Runs trio in its own thread: :meth:`start`, :meth:`stop`. Counters:
    ``connections``, ``cuts``, ``chunks``."""

    def __init__(self, listen: tuple[str, int], target: tuple[str, int], *, delay_s: float = 0.08,
                 jitter_s: float = 0.02, cut_after: tuple[int, int] | None = (40, 160), seed: str | int = 0) -> None:
        self.listen, self.target = listen, target
        self.delay_s, self.jitter_s, self.cut_after = delay_s, jitter_s, cut_after
        self.rng = random.Random(f"soak/relay/{seed}")
        self.connections = self.cuts = self.chunks = 0
        self._ready = threading.Event()
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._token = None
        self._cancel = None

    def start(self) -> Relay:
        """Listen, in a background thread; raises OSError if the listen address is taken."""
        self._thread = threading.Thread(target=self._run, name="relay", daemon=True)
        self._thread.start()
        self._ready.wait()
        if self._error is not None:
            raise self._error
        return self

    def stop(self) -> None:
        if self._thread is not None and self._thread.is_alive():
            try:  # thread-safe and non-blocking: callable from another trio loop too
                self._token.run_sync_soon(self._cancel.cancel)
            except trio.RunFinishedError:
                pass
            self._thread.join()

    def _run(self) -> None:
        try:
            trio.run(self._main)
        except BaseException as exc:  # noqa: BLE001 - told to start()'s caller
            self._error = exc
            self._ready.set()

    async def _main(self) -> None:
        listeners = await trio.open_tcp_listeners(self.listen[1], host=self.listen[0])
        self._token = trio.lowlevel.current_trio_token()
        try:
            with trio.CancelScope() as self._cancel:
                self._ready.set()
                async with trio.open_nursery() as nursery:
                    await trio.serve_listeners(self._handle, listeners, handler_nursery=nursery)
        finally:
            with trio.CancelScope(shield=True):
                for listener in listeners:
                    await trio.aclose_forcefully(listener)

    def _schedule(self, now: float, last_due: float) -> float:
        """When a chunk read at ``now`` goes out: its delay, and never before the previous one."""
        return max(now + self.rng.uniform(self.delay_s - self.jitter_s, self.delay_s + self.jitter_s), last_due)

    async def _handle(self, down) -> None:
        up = None
        try:
            try:
                up = await trio.open_tcp_stream(*self.target)
            except OSError:  # the seat is down (killed, restarting): the dialler sees a cut
                return
            self.connections += 1
            budget = [self.rng.randint(*self.cut_after) if self.cut_after else None]
            async with trio.open_nursery() as nursery:
                nursery.start_soon(self._pump, down, up, budget, nursery.cancel_scope)
                nursery.start_soon(self._pump, up, down, budget, nursery.cancel_scope)
        finally:
            with trio.CancelScope(shield=True):  # under the relay's cancellation too: close both
                for s in (down, up):
                    if s is not None:
                        await trio.aclose_forcefully(s)

    async def _pump(self, src, dst, budget: list, scope) -> None:
        """Copy ``src`` to ``dst`` chunk by chunk, each held until its due time; the first
        side to end (EOF, error, or the shared chunk ``budget`` spent) ends the connection."""
        errors = (trio.BrokenResourceError, trio.ClosedResourceError, OSError)
        send, recv = trio.open_memory_channel(float("inf"))

        async def writer() -> None:
            try:
                async for due, chunk in recv:
                    await trio.sleep_until(due)
                    await dst.send_all(chunk)
            except errors:
                scope.cancel()

        async with trio.open_nursery() as inner:
            inner.start_soon(writer)
            last_due = 0.0
            try:
                while chunk := await src.receive_some(65536):
                    self.chunks += 1
                    last_due = self._schedule(trio.current_time(), last_due)
                    send.send_nowait((last_due, chunk))
                    if budget[0] is not None:
                        budget[0] -= 1  # shared by both directions: one cut per connection
                        if budget[0] <= 0:
                            self.cuts += budget[0] == 0
                            break
            except errors:
                pass
            await send.aclose()  # what is queued still goes out, then the connection ends
        scope.cancel()


# ------------------------------------------------------------------------------- one game


@dataclass
class Seat:
    """One seat of a game: its command, its current process, and every process's figures."""

    name: str
    argv: list[str]
    proc: subprocess.Popen | None = None
    runs: int = 0
    exit_codes: list[int] = field(default_factory=list)
    max_rss_kib: int = 0

    @property
    def label(self) -> str:
        return self.name.lower()


class Game:
    """``seats`` bot peers on loopback in ``folder`` (one log and one transcript each):
    :meth:`start`, then :meth:`reap` while :meth:`running`; :meth:`kill` / :meth:`restart` a seat.
    With ``lossy`` the last joiner listens on :data:`LOSSY_IP` behind a :class:`Relay`."""

    def __init__(self, folder: Path, seats: int, *, lossy: bool = False, seed: str | int = 0,
                 cut_after: tuple[int, int] | None = (40, 160), delay_s: float = 0.08) -> None:
        self.folder, self.lossy, self.seed, self.cut_after = folder, lossy, seed, cut_after
        self.delay_s = delay_s
        folder.mkdir(parents=True, exist_ok=True)
        port = free_port()
        self.seats = [Seat(NAMES[0], ["host", "--bot", "--no-mdns", "--port", str(port), "--bind", "127.0.0.1",
                                      "--seats", str(seats), "--name", NAMES[0], *RULES])]
        for i in range(1, seats):
            bind = LOSSY_IP if lossy and i == seats - 1 else "127.0.0.1"
            self.seats.append(Seat(NAMES[i], ["join", "--bot", "--connect", f"127.0.0.1:{port}", "--bind", bind,
                                              "--name", NAMES[i]]))
        for s in self.seats:
            s.argv += ["--transcript", f"{s.label}.chn"]
        self.relay: Relay | None = None

    def transcript(self, i: int) -> Path:
        return self.folder / f"{self.seats[i].label}.chn"

    def log(self, i: int) -> str:
        path = self.folder / f"{self.seats[i].label}.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def _spawn(self, i: int) -> None:
        s = self.seats[i]
        s.runs += 1
        env = dict(os.environ, PYTHONUNBUFFERED="1")
        with open(self.folder / f"{s.label}.log", "ab") as log:  # the child keeps its own copy
            log.write(f"----- run {s.runs}: {' '.join(s.argv)}\n".encode())
            log.flush()
            s.proc = subprocess.Popen([*CLI, *s.argv], stdout=log, stderr=subprocess.STDOUT,
                                      stdin=subprocess.DEVNULL, cwd=self.folder, env=env)

    def start(self, limit: float = 120.0) -> None:
        """The host, then each joiner once the one before it sat down (seats in this order);
        the relayed seat's relay starts as soon as that seat listens."""
        self._spawn(0)
        for i in range(1, len(self.seats)):
            self._spawn(i)
            if self.lossy and i == len(self.seats) - 1:
                self._front_with_relay(i, limit)
            self._wait(lambda i=i: f"{NAMES[i]} sat down" in self.log(0), limit, f"{NAMES[i]} to sit down")

    def _front_with_relay(self, i: int, limit: float) -> None:
        pid = self.seats[i].proc.pid
        self._wait(lambda: listening_ports(pid, LOSSY_IP), limit, f"{NAMES[i]} to listen on {LOSSY_IP}")
        port = listening_ports(pid, LOSSY_IP)[0]
        self.relay = Relay(("127.0.0.1", port), (LOSSY_IP, port), cut_after=self.cut_after, seed=self.seed,
                           delay_s=self.delay_s, jitter_s=self.delay_s / 4).start()

    def _wait(self, cond, limit: float, what: str) -> None:
        end = time.monotonic() + limit
        while not cond():
            self.reap()
            if time.monotonic() > end or all(s.proc.returncode is not None for s in self.seats if s.proc):
                raise RuntimeError(f"gave up waiting for {what}")
            time.sleep(POLL_S)

    def reap(self) -> None:
        """Collect the exit code and max RSS of every seat process that ended."""
        for s in self.seats:
            p = s.proc
            if p is None or p.returncode is not None:
                continue
            pid, status, usage = os.wait4(p.pid, os.WNOHANG)
            if pid:
                p.returncode = os.waitstatus_to_exitcode(status)
                s.exit_codes.append(p.returncode)
                s.max_rss_kib = max(s.max_rss_kib, usage.ru_maxrss)  # KiB on Linux

    def running(self) -> bool:
        return any(s.proc is not None and s.proc.returncode is None for s in self.seats)

    def kill(self, i: int) -> None:
        p = self.seats[i].proc
        if p.returncode is None:
            p.send_signal(signal.SIGKILL)
            while p.returncode is None:
                self.reap()
                time.sleep(0.01)

    def restart(self, i: int) -> None:
        """The same command again (it resumes from its transcript and saved secrets)."""
        self._spawn(i)

    def close(self) -> None:
        for i, s in enumerate(self.seats):
            if s.proc is not None and s.proc.returncode is None:
                self.kill(i)
        if self.relay is not None:
            self.relay.stop()

    def sizes(self, skip: int | None = None) -> int:
        return sum(self.transcript(i).stat().st_size for i in range(len(self.seats))
                   if i != skip and self.transcript(i).exists())

    def check(self) -> dict:
        """Byte-identical transcripts that audit ok (or records one a prefix of another, each
        ending the game: no desync either), and each audit verdict."""
        from p2p_chinchon.audit import audit_file
        from p2p_chinchon.transcript import load_transcript

        data = [self.transcript(i).read_bytes() if self.transcript(i).exists() else b""
                for i in range(len(self.seats))]
        identical = all(d == data[0] for d in data) and bool(data[0])
        verdicts = {}
        for i, s in enumerate(self.seats):
            if not data[i]:
                verdicts[s.label] = "missing"
            elif identical and i:
                verdicts[s.label] = verdicts[self.seats[0].label]
            else:
                verdicts[s.label] = audit_file(self.transcript(i)).verdict
        # identical, or one record a prefix of another, each ending the game (docs/protocol.md
        # "Removal", the game's end: a seat's last game_end that the others ended the game without)
        prefixes = all(x.startswith(y) or y.startswith(x) for x in data for y in data)
        ok = prefixes and all(v == "ok" for v in verdicts.values())
        envelopes = len(load_transcript(self.transcript(0)).envelopes) if data[0] else 0
        return {"identical": identical, "verdicts": verdicts, "desync": not ok, "envelopes": envelopes}


def kinds_count(path: Path, kind: str) -> int:
    from p2p_chinchon.transcript import load_transcript

    if not path.exists():
        return 0
    return sum(1 for e in load_transcript(path).envelopes if e.kind == kind)


def play_one(folder: Path, seats: int, fault: Fault | None, *, lossy: bool, seed: str | int,
             limit: float, cut_after: tuple[int, int] | None = (40, 160), delay_s: float = 0.08) -> dict:
    """One whole game (and its fault, if any); returns its figures. ``cut_after``, ``delay_s``
    (jitter a quarter of it): the relay's (with ``lossy``), see :class:`Relay`."""
    game = Game(folder, seats, lossy=lossy, seed=seed, cut_after=cut_after, delay_s=delay_s)
    t0 = time.monotonic()
    out: dict = {"folder": str(folder)}
    killed_at = None
    try:
        game.start()
        restart_at = None
        growth: list[float] = []
        last_size = -1
        end = t0 + limit
        while game.running() and time.monotonic() < end:
            game.reap()
            now = time.monotonic()
            if fault is not None and killed_at is None and game.seats[fault.victim].proc.returncode is None \
                    and kinds_count(game.transcript(fault.victim), fault.kind) >= fault.count:
                game.kill(fault.victim)
                killed_at, restart_at = now, now + fault.pause_s
                out["fault"] = {"victim": game.seats[fault.victim].label, "point": f"{fault.kind} #{fault.count}",
                                "pause_s": fault.pause_s}
            if restart_at is not None and now >= restart_at:
                game.restart(fault.victim)
                restart_at = None
            size = game.sizes(skip=fault.victim if fault else None)
            if size != last_size:
                growth.append(now)
                last_size = size
            time.sleep(POLL_S)
        finished_at = time.monotonic()
        out["game_s"] = round(finished_at - t0, 2)
        out["timed_out"] = game.running()
        if killed_at is not None:
            out["fault"]["stall_s"] = round(longest_stall(growth, killed_at, finished_at), 2)
        elif fault is not None:
            out["fault"] = None  # the game ended before the planned point
    except (RuntimeError, OSError) as exc:  # a seat never sat down, the relay could not listen
        out["error"] = str(exc)
    finally:
        game.close()
    out["exit_codes"] = {s.label: s.exit_codes for s in game.seats}
    out["finished"] = not out.get("timed_out", True) and all(s.exit_codes and s.exit_codes[-1] == 0
                                                             for s in game.seats)
    out["max_rss_mib"] = {s.label: round(s.max_rss_kib / 1024, 1) for s in game.seats}
    if game.relay is not None:
        out["relay"] = {"connections": game.relay.connections, "cuts": game.relay.cuts, "chunks": game.relay.chunks}
    out.update(game.check())
    return out


# ------------------------------------------------------------------------------- the soak


def summarize(games: list[dict]) -> dict:
    """The soak's figures from each game's (see the module docstring)."""
    times = [g["game_s"] for g in games if "game_s" in g]
    per_env = [g["game_s"] / g["envelopes"] for g in games if g.get("envelopes") and "game_s" in g]
    faulted = [g["fault"] for g in games if g.get("fault")]
    first, last = games[0]["max_rss_mib"], games[-1]["max_rss_mib"]
    growth = max((last[k] / first[k] for k in first if first[k]), default=1.0)
    out = {
        "games": len(games), "finished": sum(g["finished"] for g in games),
        "desyncs": sum(g["desync"] for g in games),
        "game_s": {"median": statistics.median(times), "min": min(times), "max": max(times)} if times else None,
        # games differ in length (hands played): seconds per envelope compares runs fairly
        "ms_per_envelope_median": round(1000 * statistics.median(per_env), 1) if per_env else None,
        "faults": len(faulted),
        "stall_s": [f["stall_s"] for f in faulted],
        "time_lost_s": round(sum(f["stall_s"] for f in faulted), 2),
        "pause_s": [f["pause_s"] for f in faulted],
        "max_rss_mib_first": first, "max_rss_mib_last": last,
        "max_rss_growth": round(growth, 3), "memory_flat": growth <= FLAT_GROWTH,
    }
    relayed = [g["relay"] for g in games if "relay" in g]
    if relayed:
        out["relay_connections"] = sum(r["connections"] for r in relayed)
        out["relay_cuts"] = sum(r["cuts"] for r in relayed)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="p2p-chinchon bench soak", description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", type=int, default=5, metavar="N", help="games in a row (default 5)")
    ap.add_argument("--seats", type=int, default=3, metavar="S", help="peers per game, 2-8 (default 3)")
    ap.add_argument("--faults", action="store_true", help="kill a seat in each game (SIGKILL) and restart it")
    ap.add_argument("--lossy", action="store_true", help="the last joiner behind a slow relay that cuts links")
    ap.add_argument("--seed", default="1", help="seed of the fault plan and the relay (default 1)")
    ap.add_argument("--game-limit", type=float, default=600.0, metavar="S",
                    help="seconds before a game counts as unfinished (default 600)")
    ap.add_argument("--folder", type=Path, default=None, help="keep logs and transcripts here (default: a temp dir)")
    ap.add_argument("--json", action="store_true", help="print one JSON object")
    a = ap.parse_args(argv)
    if a.games < 1 or not 2 <= a.seats <= len(NAMES):
        ap.error(f"--games must be at least 1 and --seats 2-{len(NAMES)}")
    root = a.folder or Path(tempfile.mkdtemp(prefix="p2p-soak-"))
    plan = plan_faults(a.seed, a.games, a.seats) if a.faults else [None] * a.games
    games = []
    for g, fault in enumerate(plan):
        games.append(play_one(root / f"game{g + 1}", a.seats, fault, lossy=a.lossy,
                              seed=f"{a.seed}/{g}", limit=a.game_limit))
        if not a.json:
            r = games[-1]
            f = r.get("fault")
            what = (f" {f['victim']} killed at {f['point']}, back after {f['pause_s']} s, stall {f['stall_s']} s"
                    if f else "")
            print(f"game {g + 1}: {'finished' if r['finished'] else 'NOT finished'} in {r.get('game_s')} s "
                  f"{'(' + r['error'] + ') ' if 'error' in r else ''}"
                  f"({r['envelopes']} envelopes), "
                  f"{'DESYNC' if r['desync'] else 'transcripts identical, audit ok'};{what} "
                  f"max RSS MiB {r['max_rss_mib']}", flush=True)
    out = {"seats": a.seats, "faults_on": a.faults, "lossy": a.lossy, "seed": a.seed, "folder": str(root),
           **summarize(games), "per_game": games}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"soak: {out['finished']}/{out['games']} games finished, {out['desyncs']} desyncs; "
              f"game time median {out['game_s']['median']} s ({out['ms_per_envelope_median']} ms per envelope)"
              if out["game_s"] else "")
        if a.faults:
            print(f"  faults: {out['faults']} kills, time lost (stall after the kill, pause included) "
                  f"{out['time_lost_s']} s in all: {out['stall_s']} (pauses {out['pause_s']})")
        print(f"  peak memory per peer, MiB: first game {out['max_rss_mib_first']}, last game "
              f"{out['max_rss_mib_last']}: {'flat' if out['memory_flat'] else 'GROWING'} "
              f"(x{out['max_rss_growth']})")
        if "relay_cuts" in out:
            print(f"  relay: {out['relay_connections']} connections, {out['relay_cuts']} cuts")
        print(f"  logs and transcripts: {root}")
    good = out["finished"] == out["games"] and out["desyncs"] == 0 and out["memory_flat"]
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
