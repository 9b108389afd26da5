"""The secrets file: what a seat must keep to rejoin its game, beside its transcript.

``<transcript>.secrets`` (:func:`secrets_path_for`), plain msgpack, readable by its owner only
(0600), replaced atomically (:func:`write_secrets`). The node writes it before any message that
depends on what changed in it is persisted or sent (``Node._save_secrets`` in :mod:`.node`),
and removes it once the game is over for the seat (nothing to rejoin). It holds (see
:func:`next_secrets`): every hand's key (a rejoin replays earlier hands too) and the toss
nonce, the seat's public identity key (``seat_key``: which seat wrote the transcript beside it,
read by ``commands/comeback.py``), for a seat whose identity lives nowhere else (bots) the
identity seed, and for a code-word table its transit relay (a rejoin meets at the same one).
``resume`` and ``comeback`` read it back (:func:`read_secrets`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgpack

# what the file holds (a msgpack map, see next_secrets): its values are msgpack's own
Secrets = dict[str, Any]


def next_secrets(kept: Secrets, snap: dict[str, Any], identity: Any, *, keep_identity: bool,
                 relay: str | None) -> Secrets:
    """What the secrets file holds after ``kept`` (what it holds now) once the table's
    ``seat_secrets()`` is ``snap``: this hand's key added to the earlier ones, this seat's public
    key (``seat_key``), the identity seed when ``keep_identity``, and the transit ``relay``
    ("host:port") of a code-word table. Equal to ``kept`` when there is nothing new to write."""
    new = dict(kept, toss_nonce=snap["toss_nonce"], keys=dict(kept.get("keys", {})))
    if "key" in snap:
        new["keys"][snap["hand"]] = {"hand": snap["hand"], "key": snap["key"], "key_nonce": snap["key_nonce"]}
    if "seat_key" not in new:  # whose seat wrote this transcript (public): commands/comeback.py
        new["seat_key"] = identity.public_bytes
    if keep_identity and "identity" not in new:
        new["identity"] = identity.seed()
    if relay is not None:  # a code-word table: a rejoin meets at the same relay
        new["relay"] = relay
    return new


def secrets_path_for(transcript: Path) -> Path:
    """Where a seat's secrets live beside its transcript: ``<transcript>.secrets``."""
    return transcript.with_name(transcript.name + ".secrets")


def write_secrets(path: Path, snap: Secrets) -> None:
    """Write ``snap`` (msgpack) to ``path`` readable by its owner only (0600), atomically
    (temporary file, fsync, rename). Raises OSError."""
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.fchmod(fd, 0o600)
        os.write(fd, msgpack.packb(snap, use_bin_type=True))
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)


def read_secrets(path: Path) -> Secrets:
    """The secrets :func:`write_secrets` saved; {} when there are none."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    saved: Secrets = msgpack.unpackb(data, raw=False, strict_map_key=False)
    return saved
