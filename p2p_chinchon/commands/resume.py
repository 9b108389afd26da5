"""``p2p-chinchon resume [TRANSCRIPT]``: come back to a game after a crash or a dropped network.

Reloads this seat's identity, its transcript and the per-hand secrets saved beside it
(``TRANSCRIPT.secrets``), reaches the other seats at the addresses in the signed seating, catches
up envelope by envelope and plays on. Without a path: this identity's unfinished game in the default
transcript folder, or the one the person picks when there are several (a bot: the newest). Running the same ``host`` / ``join`` command again does the same.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from p2p_chinchon.commands import _common as C


def add_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("transcript", nargs="?", type=Path, default=None, help="the game's transcript (default: the newest unfinished one)")
    p.add_argument("--bind", default="0.0.0.0", help="address to accept peers on (default all)")
    p.add_argument("--no-mdns", action="store_true", help="reach the others only at their seating addresses "
                   "(default: also find a seat whose address changed by mDNS)")
    C.add_advertise_argument(p, "you (in this seat's mDNS record; the port is the seating's)")
    p.add_argument("--seed", default=None, help="reproducible randomness (NOT secret: tests only)")
    C.add_play_arguments(p)


def newest_unfinished(folder: Path) -> Path | None:
    """The most recently written transcript under ``folder`` that has saved secrets beside it."""
    from p2p_chinchon.net.node import secrets_path_for

    found = [t for t in folder.rglob("*.chn") if secrets_path_for(t).exists()]
    return max(found, key=lambda t: t.stat().st_mtime, default=None)


def _pick(args: argparse.Namespace) -> Path | None | int:
    """Without a path, a person's unfinished games (of this identity, any age): the only one,
    or the one they pick from the list; an exit code when nobody can pick."""
    from p2p_chinchon.commands.comeback import choose, unfinished_games
    from p2p_chinchon.identity import load_or_create_identity

    games = unfinished_games(C.data_dir() / "transcripts", load_or_create_identity().public_bytes, recent=None)
    if not games:
        return None
    ask = input if sys.stdin.isatty() else None
    picked = choose(games, ask=ask, out=lambda text: print(text, file=sys.stderr, flush=True))
    if picked is None:
        return 2 if ask is None else 0
    return picked.path


def run(args: argparse.Namespace) -> int:
    if not C.check_advertise(args, "resume"):
        return 2
    path = args.transcript
    if path is None and not args.bot:
        path = _pick(args)
        if isinstance(path, int):
            return path
    elif path is None:
        path = newest_unfinished(C.data_dir() / "transcripts")
    if path is None or not path.exists():
        print("p2p-chinchon resume: no unfinished game found" + (f" at {path}" if path else ""), file=sys.stderr)
        return 2
    return C.resume(args, path, not args.bot, "resume")
