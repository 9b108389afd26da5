"""An evening's running tally: the games this laptop saw finish among the
same players (the same identity keys), kept locally in ``<data folder>/evening.json``.

Each finished game is recorded once (by its game id, whichever seat process of this laptop
reports it first): when it ended, the players' key fingerprints and names, the final totals
and the winner. :func:`evening` sums the games among one set of fingerprints that ended within
:data:`EVENING` seconds of the newest; the exit summary prints it (``tonight: Ana 2 wins, ...``).
Nothing here is signed or sent: it is a convenience, and each game's transcript stays the proof.
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

EVENING = 12 * 3600.0  # seconds: games further apart than this are another evening
KEEP = 200  # games kept in the file (the oldest go first)


@dataclass(frozen=True)
class Standing:
    """One player's evening: ``name`` (the latest), ``fingerprint``, ``games`` played,
    ``wins``, and ``points`` (the sum of their final totals)."""

    name: str
    fingerprint: str
    games: int
    wins: int
    points: int


def record(path: Path, game: str, when: float, fingerprints: list[str], names: list[str],
           totals: list[int], winner: int | None) -> bool:
    """Add one finished game (``game``: its id in hex) to the file at ``path`` unless it is
    there already; True when added. I/O errors propagate (callers ignore them)."""
    games = _load(path)
    if any(g.get("game") == game for g in games):
        return False
    games.append({"game": game, "when": when, "keys": fingerprints, "names": names,
                  "totals": totals, "winner": winner})
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp.write_text(json.dumps(games[-KEEP:], ensure_ascii=False))
    os.replace(tmp, path)
    return True


def evening(path: Path, fingerprints: list[str], now: float | None = None) -> list[Standing]:
    """The standings of the games among exactly these ``fingerprints`` (any seat order) that
    ended within :data:`EVENING` of ``now`` (default: the clock), most wins first; empty when
    the file holds none."""
    now = time.time() if now is None else now
    want = sorted(fingerprints)
    mine = [g for g in _load(path) if sorted(g.get("keys", [])) == want and now - g.get("when", 0) <= EVENING]
    table: dict[str, list[Any]] = {fp: [fp, fp, 0, 0, 0] for fp in fingerprints}
    for g in mine:
        for i, fp in enumerate(g["keys"]):
            row = table[fp]
            row[0] = g["names"][i] if i < len(g["names"]) else fp
            row[2] += 1
            row[3] += 1 if g.get("winner") == i else 0
            row[4] += g["totals"][i] if i < len(g["totals"]) else 0
    if not mine:
        return []
    return sorted((Standing(n, fp, games, wins, pts) for n, fp, games, wins, pts in table.values()),
                  key=lambda s: (-s.wins, s.points, s.name))


def _load(path: Path) -> list[dict[str, Any]]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return []
    return data if isinstance(data, list) else []


def tally_path() -> Path:
    from p2p_chinchon.commands._common import data_dir

    return data_dir() / "evening.json"


def after_game(result: Any) -> list[Standing]:
    """Record a finished game from its node ``result`` (its transcript gives the game id and the
    seats' keys) and return this evening's standings among its players; empty for a game that
    did not finish with a winner, or when anything cannot be read or written."""
    if result is None or result.winner is None or result.transcript is None:
        return []
    try:
        from p2p_chinchon.identity import fingerprint
        from p2p_chinchon.transcript import load_transcript

        envs = load_transcript(result.transcript).envelopes
        seating = next(e for e in envs if e.kind == "seating")
        fps = [fingerprint(p["key"]) for p in seating.body["players"]]
        path = tally_path()
        record(path, envs[0].game.hex(), time.time(), fps, list(result.names), list(result.totals),
               result.winner)
        return evening(path, fps)
    except (OSError, StopIteration, ValueError, KeyError, IndexError):
        return []


def wins_tonight(fingerprints: list[str]) -> dict[str, tuple[int, int]]:
    """``{fingerprint: (wins, games)}`` of this evening's finished games among exactly these
    players (the score sheet's "tonight" row); empty when there are none or on any error."""
    try:
        return {st.fingerprint: (st.wins, st.games) for st in evening(tally_path(), list(fingerprints))}
    except (OSError, ValueError, KeyError, TypeError):
        return {}
