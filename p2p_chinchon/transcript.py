"""Hash-chained transcript of signed envelopes: in memory, on disk, loading and verification.

File format (``docs/protocol.md`` "Transcript file"): the concatenation of envelope frames
(:meth:`p2p_chinchon.wire.Envelope.encode`), in seq order, nothing else: each frame is one
msgpack array, so the file is a plain msgpack stream. Boundaries come from the msgpack headers
alone, so a frame whose content is damaged is still skipped over and reported, and a frame cut
short by a crash (a *torn tail*) is told apart from a damaged one. Zero bytes at the end (left by
some filesystems after a crash) count as part of the torn tail.

Chain rules (:func:`verify_chain`, first violation wins, by envelope index):

* envelope ``i`` decodes strictly (else :class:`CorruptFrameError`);
* it has the game id of envelope 0 (or of ``game=``) (else :class:`ChainGameError`, e.g. a replay
  from another game);
* its ``seq`` is ``i`` (:class:`ChainSeqError`) and its ``prev`` is the hash of envelope
  ``i - 1``, zeros for ``i == 0`` (:class:`ChainLinkError`);
* envelope 0 is an ``offer``; up to and including the first ``seating``, only seat 0 (the host) speaks, and its envelopes
  are checked under the offer's ``host_key`` (or, for an offer without one, the seating's
  ``players[0].key``); the seating must give seat 0 that same key; after the seating, seat ``s``
  must exist and its key is ``players[s].key`` (:class:`ChainSeatError`);
* its signature verifies under that key (:class:`ChainSignatureError`).

A node appends only envelopes it has verified, so in a node's transcript every chain error means
the *file* was damaged or edited afterwards; what a cheating seat leaves is validly signed and
well chained (equivocation, :func:`find_equivocation`; illegal moves and bad proofs, found by the
table replay in ``audit``).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from p2p_chinchon import PROTOCOL_VERSION
from p2p_chinchon._fs import fsync_dir as _fsync_dir
from p2p_chinchon.wire import (
    MAX_FRAME,
    ZERO_HASH,
    Envelope,
    SignatureError,
    WireError,
    decode_envelope,
    load_public_key,
    verify_envelope,
)

try:  # advisory lock so two processes never append to one transcript
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "ChainError",
    "ChainGameError",
    "ChainInfo",
    "ChainLinkError",
    "ChainSeatError",
    "ChainSeqError",
    "ChainSignatureError",
    "CorruptFrameError",
    "Equivocation",
    "LoadError",
    "LoadResult",
    "Transcript",
    "TranscriptError",
    "TranscriptWriter",
    "find_equivocation",
    "load_transcript",
    "parse_transcript",
    "seat_keys",
    "signed_by",
    "split_frames",
    "verify_chain",
    "verify_loaded",
]


# --- errors -----------------------------------------------------------------------------------


class TranscriptError(Exception):
    """A transcript file cannot be opened for appending (locked, or garbage that is not a torn
    tail), or the writer is closed/broken."""


class ChainError(ValueError):
    """The first envelope that breaks the chain rules.

    ``index``: position in the sequence checked (0-based); ``seat``: the envelope's claimed seat,
    ``None`` when the frame does not decode; ``reason``: a sentence. Subclasses say which rule.
    """

    def __init__(self, index: int, seat: int | None, reason: str) -> None:
        super().__init__(f"envelope {index} (seat {'?' if seat is None else seat}): {reason}")
        self.index = index
        self.seat = seat
        self.reason = reason


class CorruptFrameError(ChainError):
    """The frame does not decode (``code`` is the :class:`~p2p_chinchon.wire.WireError` code)."""

    def __init__(self, index: int, seat: int | None, reason: str, code: str = "malformed") -> None:
        super().__init__(index, seat, reason)
        self.code = code


class ChainSignatureError(ChainError):
    """The signature does not verify under the seat's key from the seating."""


class ChainLinkError(ChainError):
    """``prev`` is not the hash of the previous envelope."""


class ChainSeqError(ChainError):
    """``seq`` is not the envelope's index (gap, repeat or reorder)."""


class ChainGameError(ChainError):
    """Another game id than the chain's (an envelope replayed from another game)."""


class ChainSeatError(ChainError):
    """A seat that cannot speak here: not in the seating, or not the host before the seating."""


# --- in-memory chain --------------------------------------------------------------------------


def _check_link(env: Envelope, index: int, game: bytes | None, head: bytes) -> None:
    if env.v != PROTOCOL_VERSION:  # Envelope already enforces it; kept for clarity of the rule
        raise CorruptFrameError(index, env.seat, f"protocol version {env.v}", "version")
    if game is not None and env.game != game:
        raise ChainGameError(index, env.seat, f"game id {env.game.hex()} is not this game's {game.hex()}")
    if env.seq != index:
        raise ChainSeqError(index, env.seat, f"seq {env.seq} where {index} was expected")
    if env.prev != head:
        raise ChainLinkError(index, env.seat, f"prev {env.prev.hex()[:16]}.. is not the hash of envelope {index - 1}")


class Transcript:
    """The chain as a list of envelopes, checked as it grows.

    :meth:`append` checks game id, seq continuity and the ``prev`` link (raising the
    :class:`ChainError` subclasses, leaving the transcript unchanged) and, given a public key,
    the signature; it then writes the frame through ``writer`` (fsync) before keeping it in
    memory, so nothing is acted on that is not on disk. Signature keys are the caller's business
    (the table knows the seating); :func:`verify_chain` checks a finished chain in full.
    ``envelopes`` given at construction are checked but not written (they are already on disk,
    e.g. from :attr:`TranscriptWriter.recovered`).
    """

    def __init__(self, envelopes: Iterable[Envelope] = (), *, writer: TranscriptWriter | None = None) -> None:
        self._envs: list[Envelope] = []
        self._writer = None
        for env in envelopes:
            self.append(env)
        self._writer = writer

    @property
    def head(self) -> bytes:
        """Hash of the last envelope (32 zero bytes when empty): the next envelope's ``prev``."""
        return self._envs[-1].hash() if self._envs else ZERO_HASH

    @property
    def game(self) -> bytes | None:
        return self._envs[0].game if self._envs else None

    @property
    def next_seq(self) -> int:
        return len(self._envs)

    @property
    def envelopes(self) -> tuple[Envelope, ...]:
        return tuple(self._envs)

    def frames(self) -> list[bytes]:
        return [e.encode() for e in self._envs]

    def __len__(self) -> int:
        return len(self._envs)

    def __iter__(self) -> Iterator[Envelope]:
        return iter(tuple(self._envs))

    def __getitem__(self, i: int) -> Envelope:
        return self._envs[i]

    def append(self, env: Envelope, public_key: bytes | None = None) -> bytes:
        """Check and add ``env``; returns the new head. Raises ChainError (any subclass),
        ``TypeError`` for a non-Envelope, ``OSError``/TranscriptError from the writer."""
        if not isinstance(env, Envelope):
            raise TypeError(f"Transcript.append needs an Envelope, got {type(env).__name__}")
        index = len(self._envs)
        _check_link(env, index, self.game, self.head)
        if public_key is not None:
            try:
                verify_envelope(env, public_key)
            except SignatureError as exc:
                raise ChainSignatureError(index, env.seat, exc.reason) from None
        if self._writer is not None:
            self._writer.append(env)
        self._envs.append(env)
        return env.hash()


# --- verification -----------------------------------------------------------------------------


@dataclass(frozen=True)
class ChainInfo:
    """Result of :func:`verify_chain` on a chain with no violation.

    ``unverified``: indexes whose signature could not be checked because no seating (and no
    ``keys=``) names the key — only possible for a chain that ends before its seating.
    """

    game: bytes | None
    length: int
    head: bytes
    seat_keys: tuple[bytes, ...] | None
    seating_index: int | None
    unverified: tuple[int, ...] = ()
    hashes: tuple[bytes, ...] = field(default=(), repr=False)

    @property
    def fully_verified(self) -> bool:
        return not self.unverified


def _decode_item(item: Envelope | bytes, index: int) -> Envelope:
    if isinstance(item, Envelope):
        return item
    try:
        return decode_envelope(item)
    except WireError as exc:
        raise CorruptFrameError(index, None, exc.reason, exc.code) from None


def _host_key(first: Envelope | CorruptFrameError) -> bytes | None:
    """The key that signs the lobby: the offer's ``host_key`` (if the offer carries one)."""
    if isinstance(first, Envelope) and first.kind == "offer":
        key = first.body.get("host_key")
        if isinstance(key, bytes):
            return key
    return None


def seat_keys(seating: Envelope) -> tuple[bytes, ...]:
    """The seat keys named by a ``seating`` envelope (index = seat). ValueError for other kinds."""
    if seating.kind != "seating":
        raise ValueError(f"seat_keys needs a seating envelope, got {seating.kind!r}")
    return tuple(p["key"] for p in seating.body["players"])


def verify_chain(
    envelopes: Iterable[Envelope | bytes],
    *,
    keys: Sequence[bytes] | None = None,
    game: bytes | None = None,
) -> ChainInfo:
    """Check a whole chain from seq 0 (see the module docstring for the rules).

    ``envelopes``: Envelope objects or raw frames (e.g. :attr:`LoadResult.frames`, so a frame
    that does not decode is reported at its own index). ``keys``: seat public keys (32 bytes
    each) to use instead of the chain's seating; ``game``: the expected game id.
    Raises the first :class:`ChainError` by index; returns :class:`ChainInfo`.
    """
    items = list(envelopes)
    decoded: list[Envelope | CorruptFrameError] = []
    for i, item in enumerate(items):
        try:
            decoded.append(_decode_item(item, i))
        except CorruptFrameError as exc:
            decoded.append(exc)
    seating_index = next((i for i, e in enumerate(decoded) if isinstance(e, Envelope) and e.kind == "seating"), None)
    seated = seat_keys(decoded[seating_index]) if seating_index is not None else None  # type: ignore[arg-type]
    host_key = _host_key(decoded[0]) if decoded else None
    if host_key is None and seated is not None:
        host_key = seated[0]
    loaded: dict[bytes, object] = {}
    head = ZERO_HASH
    hashes: list[bytes] = []
    unverified: list[int] = []
    for i, env in enumerate(decoded):
        if isinstance(env, CorruptFrameError):
            raise env
        if game is None:
            game = env.game
        _check_link(env, i, game, head)
        lobby = seating_index is None or i <= seating_index
        if lobby and env.seat != 0:
            raise ChainSeatError(i, env.seat, "only the host (seat 0) speaks before and in the seating")
        if i == 0 and env.kind != "offer":
            raise ChainSeatError(0, env.seat, f"a chain starts with the host's offer, not a {env.kind}")
        key: bytes | None
        if keys is not None:
            if env.seat >= len(keys):
                raise ChainSeatError(i, env.seat, f"seat {env.seat} is not among the {len(keys)} keys given")
            key = keys[env.seat]
        elif lobby:
            key = host_key
        else:
            assert seated is not None
            if env.seat >= len(seated):
                raise ChainSeatError(i, env.seat, f"seat {env.seat} is not in the seating of {len(seated)}")
            key = seated[env.seat]
        if key is None:
            unverified.append(i)
        else:
            try:
                if key not in loaded:
                    loaded[key] = load_public_key(key)
                verify_envelope(env, loaded[key])  # type: ignore[arg-type]
            except SignatureError as exc:
                raise ChainSignatureError(i, env.seat, exc.reason) from None
        if i == seating_index and keys is None and seated is not None and seated[0] != host_key:
            raise ChainSeatError(i, 0, "the seating gives seat 0 another key than the offer's host_key")
        head = env.hash()
        hashes.append(head)
    if keys is None:
        keys = seated
    return ChainInfo(
        game=game,
        length=len(items),
        head=head,
        seat_keys=tuple(keys) if keys is not None else None,
        seating_index=seating_index,
        unverified=tuple(unverified),
        hashes=tuple(hashes),
    )


# --- equivocation -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Equivocation:
    """Proof of cheating: two validly signed envelopes of one game with the same (seat, seq) and
    different signed content. ``evidence`` is both frames, ready for a ``fault`` body."""

    seat: int
    seq: int
    game: bytes
    first: Envelope
    second: Envelope

    @property
    def evidence(self) -> tuple[bytes, bytes]:
        return (self.first.encode(), self.second.encode())


def find_equivocation(
    *streams: Iterable[Envelope | bytes],
    keys: Sequence[bytes] | None = None,
) -> Equivocation | None:
    """First equivocation among all envelopes of ``streams`` (e.g. my transcript and what a
    peer sent), or None. Frames that do not decode, envelopes whose signature does not verify,
    and exact duplicates are ignored: only a pair the seat itself signed is proof.

    ``keys``: seat public keys; by default those of the first ``seating`` seen that is signed by
    the host (the ``host_key`` of an offer that verifies under it), else by its own
    ``players[0].key``; with no seating, only the host's key.
    """
    envs: list[Envelope] = []
    for stream in streams:
        for item in stream:
            if isinstance(item, Envelope):
                envs.append(item)
            else:
                try:
                    envs.append(decode_envelope(item))
                except WireError:
                    continue
    if keys is None:
        keys = _keys_from(envs)
    if keys is None:
        return None
    seen: dict[tuple[bytes, int, int], Envelope] = {}
    for e in envs:
        if e.seat >= len(keys) or not _valid(e, keys[e.seat]):
            continue
        slot = (e.game, e.seat, e.seq)
        other = seen.get(slot)
        if other is None:
            seen[slot] = e
        elif other.signed_bytes() != e.signed_bytes():
            return Equivocation(e.seat, e.seq, e.game, other, e)
    return None


def _keys_from(envs: list[Envelope]) -> tuple[bytes, ...] | None:
    """Seat keys from the first self-consistent offer (signed by its ``host_key``) and the first
    seating signed by that host (or by its own ``players[0].key`` if there is no such offer)."""
    host = next((k for e in envs if e.kind == "offer" and (k := _host_key(e)) is not None and _valid(e, k)), None)
    for e in envs:
        if e.kind == "seating":
            candidate = seat_keys(e)
            if _valid(e, host if host is not None else candidate[0]):
                return candidate
    return (host,) if host is not None else None


def signed_by(env: Envelope, keys: Sequence[bytes]) -> bool:
    """True if ``env`` is validly signed by the seat it names, under ``keys`` (index = seat)."""
    return env.seat < len(keys) and _valid(env, keys[env.seat])


def _valid(env: Envelope, key: bytes) -> bool:
    try:
        verify_envelope(env, key)
        return True
    except SignatureError:
        return False


# --- file format ------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadError:
    """A problem in a transcript file. ``index``: frame index (None for unparseable bytes);
    ``offset``: byte offset in the file; ``code``: WireError code or ``"unparseable"``."""

    index: int | None
    offset: int
    code: str
    reason: str


@dataclass(frozen=True)
class LoadResult:
    """Everything recoverable from a transcript file.

    ``frames``: every complete msgpack object in file order (including ones that do not decode);
    ``envelopes``: those that decode (so ``envelopes[i]`` is ``frames[i]`` only when ``errors``
    is empty); ``torn_tail``: the incomplete last frame (a crash mid-write), or None;
    ``errors``: frames that do not decode and unparseable bytes; ``complete_bytes``: offset just
    after the last complete frame (where an appender truncates a torn tail).
    """

    envelopes: list[Envelope]
    torn_tail: bytes | None
    errors: list[LoadError]
    frames: list[bytes]
    complete_bytes: int

    @property
    def ok(self) -> bool:
        """No errors and no torn tail."""
        return not self.errors and self.torn_tail is None


class _Unparseable(Exception):
    pass


class _TooLarge(Exception):
    pass


def _object_end(data: bytes, pos: int, limit: int = MAX_FRAME) -> int | None:
    """End offset of the msgpack object starting at ``pos``, from headers only; None if the data
    ends first. Raises _Unparseable on the reserved byte 0xc1, _TooLarge when the headers
    read so far claim more than ``limit`` bytes (every element takes at least one byte), so a
    damaged or inserted header is never taken for a frame cut short."""
    n = len(data)
    start = pos
    pending = 1
    while pending:
        if pos - start + pending > limit:
            raise _TooLarge(pos - start + pending)
        if pos >= n:
            return None
        b = data[pos]
        pending -= 1
        if b <= 0x7F or b >= 0xE0 or b in (0xC0, 0xC2, 0xC3):
            pos += 1
        elif b <= 0x8F:
            pending += 2 * (b & 0x0F)
            pos += 1
        elif b <= 0x9F:
            pending += b & 0x0F
            pos += 1
        elif b <= 0xBF:
            pos += 1 + (b & 0x1F)
        elif b == 0xC1:
            raise _Unparseable(pos)
        elif b in _LEN_PREFIXED:  # bin / str / ext 8,16,32: header, length, [type], payload
            width, extra = _LEN_PREFIXED[b]
            if pos + 1 + width > n:
                return None
            length = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
            pos += 1 + width + extra + length
        elif b in _FIXED:
            pos += _FIXED[b]
        elif b in (0xDC, 0xDD, 0xDE, 0xDF):  # array16/32, map16/32
            width = 2 if b in (0xDC, 0xDE) else 4
            if pos + 1 + width > n:
                return None
            count = int.from_bytes(data[pos + 1 : pos + 1 + width], "big")
            pending += count * (2 if b >= 0xDE else 1)
            pos += 1 + width
        else:  # pragma: no cover - every byte value is covered above
            raise _Unparseable(pos)
    if pos - start > limit:
        raise _TooLarge(pos - start)
    return pos if pos <= n else None


_LEN_PREFIXED = {0xC4: (1, 0), 0xC5: (2, 0), 0xC6: (4, 0), 0xC7: (1, 1), 0xC8: (2, 1), 0xC9: (4, 1),
                 0xD9: (1, 0), 0xDA: (2, 0), 0xDB: (4, 0)}  # fmt: skip
_FIXED = {0xCA: 5, 0xCB: 9, 0xCC: 2, 0xCD: 3, 0xCE: 5, 0xCF: 9, 0xD0: 2, 0xD1: 3, 0xD2: 5, 0xD3: 9,
          0xD4: 3, 0xD5: 4, 0xD6: 6, 0xD7: 10, 0xD8: 18}  # fmt: skip


def split_frames(data: bytes) -> tuple[list[tuple[int, bytes]], bytes | None, LoadError | None]:
    """Cut a msgpack stream into ``(offset, frame)`` pairs; also the torn tail (or None) and the
    error that stopped parsing (unparseable bytes, or None). Never raises on content."""
    frames: list[tuple[int, bytes]] = []
    pos = 0
    n = len(data)
    while pos < n:
        if data[pos] == 0 and not data[pos:].strip(b"\x00"):
            return frames, data[pos:], None  # zero-filled tail after a crash
        try:
            end = _object_end(data, pos)
        except _Unparseable as exc:
            bad = exc.args[0]
            return frames, None, LoadError(None, pos, "unparseable", f"invalid msgpack byte 0xc1 at offset {bad}; {n - pos} bytes from offset {pos} skipped")
        except _TooLarge as exc:
            return frames, None, LoadError(None, pos, "frame_too_large", (
                f"the headers at offset {pos} claim at least {exc.args[0]} bytes, more than a frame "
                f"may be ({MAX_FRAME}); {n - pos} bytes from offset {pos} skipped"))
        if end is None and n - pos >= MAX_FRAME:  # more bytes than any frame: not one frame cut short
            return frames, None, LoadError(None, pos, "frame_too_large", (
                f"{n - pos} bytes from offset {pos} do not end a frame; a frame is at most {MAX_FRAME}"))
        if end is None:
            return frames, data[pos:], None
        frames.append((pos, data[pos:end]))
        pos = end
    return frames, None, None


ENVELOPE_HEADER = 0x98  # msgpack fixarray of 8: the first byte of every envelope frame


def parse_transcript(data: bytes) -> LoadResult:
    """:func:`load_transcript` on bytes already in memory. Never raises on content."""
    data = bytes(data)
    pieces, torn, stop = split_frames(data)
    envelopes: list[Envelope] = []
    errors: list[LoadError] = []
    for index, (offset, frame) in enumerate(pieces):
        try:
            envelopes.append(decode_envelope(frame))
        except WireError as exc:
            errors.append(LoadError(index, offset, exc.code, exc.reason))
    if torn is not None and torn[0] != ENVELOPE_HEADER and torn.strip(b"\x00"):
        # a crash cuts an envelope, whose frame starts with its array header: anything else
        # is damage (e.g. bytes inserted before well-formed frames), not a torn tail
        errors.append(LoadError(None, len(data) - len(torn), "malformed", (
            f"{len(torn)} bytes from offset {len(data) - len(torn)} start with 0x{torn[0]:02x}, "
            f"not an envelope's array header (0x{ENVELOPE_HEADER:02x}): not a frame cut short")))
        torn = None
    if stop is not None:
        errors.append(stop)
    complete = pieces[-1][0] + len(pieces[-1][1]) if pieces else 0
    return LoadResult(envelopes, torn, errors, [f for _, f in pieces], complete)


def verify_loaded(
    result: LoadResult,
    *,
    keys: Sequence[bytes] | None = None,
    game: bytes | None = None,
) -> ChainInfo:
    """:func:`verify_chain` over a loaded file's frames, so a frame that does not decode is a
    :class:`CorruptFrameError` at its own index; unparseable bytes after the last complete frame
    are a CorruptFrameError (code ``"unparseable"``) at index ``len(result.frames)``. A torn tail
    is not an error (a crash mid-write): the chain is what came before it.
    """
    info = verify_chain(result.frames, keys=keys, game=game)
    for err in result.errors:
        if err.index is None:
            raise CorruptFrameError(len(result.frames), None, err.reason, err.code)
    return info


def load_transcript(path: str | os.PathLike[str]) -> LoadResult:
    """Read a transcript file: every complete envelope, the torn tail, the damaged frames.

    Content problems never raise (they are in the result); ``OSError`` if the file cannot be
    read.
    """
    with open(path, "rb") as f:
        return parse_transcript(f.read())


class TranscriptWriter:
    """Append-only transcript file: :meth:`append` returns only once the frame is on disk.

    Opening an existing file reads it (:attr:`recovered`), truncates a torn tail so new frames
    do not follow half a frame, and takes an exclusive advisory lock. Raises
    :class:`TranscriptError` if another process holds the lock or if the file has bytes that
    are not msgpack (which are kept for inspection, not overwritten). ``fsync=False`` is for
    benchmarks only. With ``game`` (the 16-byte game id), an existing file of another game is
    refused (TranscriptError): a new game never appends to an old one's transcript. Usable as
    a context manager.
    """

    def __init__(self, path: str | os.PathLike[str], *, fsync: bool = True, game: bytes | None = None) -> None:
        self.path = Path(path)
        self._fsync = fsync
        self._broken: str | None = None
        created = not self.path.exists()
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            if fcntl is not None:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    raise TranscriptError(f"{self.path} is being written by another process") from None
            data = _read_all(fd)
            self.recovered = parse_transcript(data)
            if any(e.index is None for e in self.recovered.errors):  # bytes no frame delimits
                raise TranscriptError(f"{self.path}: not a transcript past offset {self.recovered.complete_bytes}; refusing to append")
            first = self.recovered.envelopes[0] if self.recovered.envelopes else None
            if game is not None and first is not None and first.game != game:
                raise TranscriptError(f"{self.path} is the transcript of another game; refusing to append "
                                      "(choose another --transcript path)")
            if self.recovered.torn_tail is not None:
                os.ftruncate(fd, self.recovered.complete_bytes)
                os.fsync(fd)
        except BaseException:
            os.close(fd)
            raise
        self._fd: int | None = fd
        self._size = self.recovered.complete_bytes
        if created and fsync:
            _fsync_dir(self.path.parent)

    @property
    def closed(self) -> bool:
        return self._fd is None

    @property
    def size(self) -> int:
        """Bytes in the file (all complete frames)."""
        return self._size

    def append(self, env: Envelope | bytes, *, sync: bool = True) -> int:
        """Write one frame and fsync; returns the frame's offset. Raw bytes are decoded first
        (WireError if not a valid envelope), so only well-formed frames reach the file.
        ``sync=False``: the frame is durable only after the next :meth:`sync` (several frames,
        one fsync). Raises TranscriptError if closed or broken by an earlier failed write,
        OSError on I/O."""
        fd = self._open_fd()
        frame = (env if isinstance(env, Envelope) else decode_envelope(env)).encode()
        offset = self._size
        try:
            view = memoryview(frame)
            while view:
                written = os.write(fd, view)
                view = view[written:]
            if self._fsync and sync:
                os.fsync(fd)
        except OSError as exc:
            # Cut the partial frame so later appends do not follow garbage.
            try:
                os.ftruncate(fd, offset)
            except OSError:
                self._broken = str(exc)
            raise
        self._size = offset + len(frame)
        return offset

    def sync(self) -> None:
        """fsync the frames appended with ``sync=False``. A failure breaks the writer (what
        reached the disk is unknown). Raises TranscriptError or OSError as :meth:`append`."""
        fd = self._open_fd()
        if self._fsync:
            try:
                os.fsync(fd)
            except OSError as exc:
                self._broken = str(exc)
                raise

    def _open_fd(self) -> int:
        """The file's descriptor; TranscriptError if the writer is closed or broken."""
        if self._fd is None:
            raise TranscriptError("transcript writer is closed")
        if self._broken is not None:
            raise TranscriptError(f"transcript writer is broken: {self._broken}")
        return self._fd

    def close(self) -> None:
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing releases the flock

    def __enter__(self) -> TranscriptWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:  # pragma: no cover - safety net
        if getattr(self, "_fd", None) is not None:
            self.close()


def _read_all(fd: int) -> bytes:
    chunks: list[bytes] = []
    offset = 0
    while True:
        chunk = os.pread(fd, 1 << 20, offset)
        if not chunk:
            return b"".join(chunks)
        chunks.append(chunk)
        offset += len(chunk)
