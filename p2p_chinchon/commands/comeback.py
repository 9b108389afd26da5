"""Come back by the command you typed.

A person whose laptop crashed mid-game runs again whatever they typed: ``host``, ``join``,
``join TABLE``, ``join --connect HOST:PORT``, with or without ``--transcript``. A running table
is no longer advertised and its lobby is closed, so those commands alone cannot reach it; and
the same ``host`` would open a new, empty lobby under the same name. Before any of them looks
for a table, :func:`find_comeback` looks in the transcript folder for an unfinished game of
this identity (a transcript with secrets beside it that this identity wrote, see
:func:`seat_key_of`, whose signed seating holds this identity's key, written within
:data:`RECENT` seconds; the local bots of ``play`` share the folder, and their transcripts are
theirs, not the person's): one such game is resumed; with
several, the ones matching what was typed (the table's name, the host's address) are
preferred, and if more than one is left the person is asked which (``resume`` lists them the
same way). ``--new`` skips the search.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

RECENT = 12 * 3600.0  # seconds: an unfinished game older than this is not offered by host/join


@dataclass(frozen=True)
class Unfinished:
    """An unfinished game of this identity: its transcript ``path``, the table ``name``, the
    players' ``names`` (seat order), this identity's ``seat``, ``hosts`` (the seats' IP
    addresses from the signed seating), ``envelopes`` signed so far and ``when`` (the file's
    mtime, s since the epoch)."""

    path: Path
    name: str
    names: tuple[str, ...]
    seat: int
    hosts: tuple[str, ...]
    envelopes: int
    when: float

    def line(self) -> str:
        stamp = time.strftime("%H:%M", time.localtime(self.when))
        return f"{self.name!r} with {', '.join(n for i, n in enumerate(self.names) if i != self.seat)} (last move {stamp}): {self.path}"


def seat_key_of(transcript: Path) -> bytes | None:
    """The identity key (32 bytes) of the seat that wrote ``transcript``, from the secrets
    beside it (:func:`~p2p_chinchon.net.node.secrets_path_for`, plain msgpack, no decryption):
    the ``seat_key`` they record, else the key of the identity seed a bot's secrets keep; None
    when they name no seat (a person's, saved before ``seat_key`` was kept: the person of this
    data folder, whose key lives in its identity file). Raises OSError, ValueError (no or
    unreadable secrets)."""
    from p2p_chinchon.identity import Identity
    from p2p_chinchon.net.node import read_secrets, secrets_path_for

    try:
        saved = read_secrets(secrets_path_for(transcript))
    except OSError:
        raise
    except Exception as exc:  # msgpack's errors are not all ValueErrors
        raise ValueError(f"unreadable secrets beside {transcript}: {exc}") from None
    if not isinstance(saved, dict) or not saved:
        raise ValueError(f"no saved secrets beside {transcript}")
    key, seed = saved.get("seat_key"), saved.get("identity")
    if isinstance(key, bytes):
        return key
    if isinstance(seed, bytes):
        return Identity.from_seed(seed).public_bytes
    return None


def written_by(transcript: Path, key: bytes) -> bool:
    """Whether the identity ``key`` (32 bytes) wrote ``transcript``, by :func:`seat_key_of`
    (secrets that name no seat count as this person's); False without readable secrets."""
    try:
        owner = seat_key_of(transcript)
    except (OSError, ValueError):
        return False
    return owner is None or owner == key


def not_yours(transcript: Path, key: bytes) -> str | None:
    """Why the person of identity ``key`` (32 bytes) may not resume ``transcript`` (one
    sentence naming the seat that wrote it, from its signed seating), or None: theirs, or
    without readable secrets (resuming then says what is wrong)."""
    from p2p_chinchon.transcript import load_transcript

    try:
        owner = seat_key_of(transcript)
    except (OSError, ValueError):
        return None
    if owner is None or owner == key:
        return None
    whose = "another seat"
    try:
        seating = next((e for e in load_transcript(transcript).envelopes if e.kind == "seating"), None)
    except OSError:
        seating = None
    for p in seating.body["players"] if seating is not None else ():
        if p["key"] == owner:
            whose = f"{p['name']}'s seat"
    return (f"{transcript} was written by {whose}, not by you: only your own games can be resumed "
            f"(p2p-chinchon resume without a path lists them)")


def unfinished_games(folder: Path, key: bytes | None, *, now: float | None = None,
                     recent: float | None = RECENT) -> list[Unfinished]:
    """Unfinished games under ``folder`` (transcripts ``*.chn`` with secrets beside them) that
    ``key`` (32 bytes) wrote (:func:`written_by`) and whose seating holds it (None: any
    seat's), newest first; with ``recent`` (s),
    only those written within that long before ``now``. Unreadable files are skipped."""
    from p2p_chinchon.net.lobby import parse_addr
    from p2p_chinchon.net.node import secrets_path_for
    from p2p_chinchon.transcript import load_transcript

    now = time.time() if now is None else now
    found = []
    for path in folder.rglob("*.chn") if folder.is_dir() else ():
        try:
            if not secrets_path_for(path).exists():
                continue
            if key is not None and not written_by(path, key):
                continue  # another seat's (a local bot's): its seating holds our key too
            when = path.stat().st_mtime
            if recent is not None and now - when > recent:
                continue
            envs = load_transcript(path).envelopes
        except OSError:
            continue
        offer = next((e for e in envs if e.kind == "offer"), None)
        seating = next((e for e in envs if e.kind == "seating"), None)
        if offer is None or seating is None:
            continue  # never seated: nothing to come back to
        players = seating.body["players"]
        keys = [p["key"] for p in players]
        if key is not None and key not in keys:
            continue
        hosts = []
        for p in players:
            try:
                hosts.append(parse_addr(p["addr"])[0])
            except ValueError:
                hosts.append("")
        found.append(Unfinished(path, offer.body.get("name", ""), tuple(p["name"] for p in players),
                                keys.index(key) if key is not None else 0, tuple(hosts), len(envs), when))
    return sorted(found, key=lambda g: -g.when)


def matching(games: Sequence[Unfinished], *, table: str | None = None,
             connect: str | None = None) -> list[Unfinished]:
    """The games that fit what was typed: the table's name, or a ``--connect`` address whose
    host is one of the seats' (the host's seating address carries its mesh port, not its
    lobby's, so only the host part is compared)."""
    from p2p_chinchon.net.lobby import parse_addr

    out = list(games)
    if table:
        out = [g for g in out if g.name == table]
    if connect:
        try:
            host = parse_addr(connect)[0]
        except ValueError:
            return out
        out = [g for g in out if host in g.hosts]
    return out


def choose(games: Sequence[Unfinished], *, ask: Callable[[str], str] | None,
           out: Callable[[str], None], command: str | None = None) -> Unfinished | None:
    """One of ``games`` to resume: the only one, or the one the person names by number when
    ``ask`` (reads a line after its prompt) is given; None when there are none, when the
    person answers Enter (a new table), or without ``ask`` (the list is printed for the
    person to run ``p2p-chinchon resume PATH``; its hint names ``command --new`` to start
    afresh, or host/join when ``command`` has no ``--new``, as ``resume``)."""
    if not games:
        return None
    if len(games) == 1:
        return games[0]
    out("unfinished games of yours:")
    for i, g in enumerate(games):
        out(f"  {i + 1}. {g.line()}")
    if ask is None:
        afresh = f"p2p-chinchon {command} --new" if command else "p2p-chinchon host --new or join --new"
        out(f"resume one with: p2p-chinchon resume PATH (or start afresh with {afresh})")
        return None
    while True:
        try:
            answer = ask(f"which one? 1-{len(games)}, or Enter for a new table: ").strip()
        except EOFError:
            return None
        if not answer:
            return None
        if answer.isdigit() and 1 <= int(answer) <= len(games):
            return games[int(answer) - 1]


def find_comeback(args: argparse.Namespace, command: str, *, table: str | None = None,
                  key: bytes | None = None) -> Path | None | int:
    """Before ``host``/``join`` (no ``--new``) looks for a table: the transcript of the
    unfinished game of this identity (``key``: a bot seat's, 32 bytes; None: the person's) to
    resume (printed on stderr), None to go on with the command as typed, or an exit code (2:
    several games and nobody at a terminal to pick one, or a bot seat; the list was printed)."""
    if getattr(args, "new", False) or (args.bot and key is None):
        return None
    from p2p_chinchon.commands._common import data_dir
    from p2p_chinchon.identity import load_or_create_identity

    if key is None:
        key = load_or_create_identity().public_bytes
    games = unfinished_games(data_dir() / "transcripts", key)
    if not games:
        return None
    fitting = matching(games, table=table, connect=getattr(args, "connect", None))
    if len(games) > 1 and fitting:
        games = fitting

    def say(text: str) -> None:
        print(text, file=sys.stderr, flush=True)

    ask = input if sys.stdin.isatty() and not args.bot else None
    picked = choose(games, ask=ask, out=say, command=command)
    if picked is None:
        return 2 if len(games) > 1 and ask is None else None
    say(f"p2p-chinchon {command}: you have an unfinished game: resuming {picked.line()} "
        f"(--new starts another)")
    return picked.path
