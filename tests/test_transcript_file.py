"""Transcript files: append + fsync, torn tails, damaged frames, the msgpack framing."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import msgpack
import pytest
from hypothesis import given, settings, strategies as st

from p2p_chinchon.identity import Identity
from p2p_chinchon.rng import SeededRng
from p2p_chinchon.transcript import (
    ChainLinkError,
    ChainSignatureError,
    CorruptFrameError,
    Transcript,
    TranscriptError,
    TranscriptWriter,
    load_transcript,
    parse_transcript,
    split_frames,
    verify_loaded,
)
from p2p_chinchon.wire import MAX_FRAME, ZERO_HASH, Envelope, WireError, make_envelope

RNG = SeededRng("test_transcript_file")
SEATS = [Identity.generate(RNG) for _ in range(2)]
GAME = RNG.token_bytes(16)


def build(n: int) -> list[Envelope]:
    steps: list[tuple[int, str, dict[str, Any]]] = [
        (0, "offer", {"name": "t", "rules": {"a": 1}, "max_seats": 2, "app": "p2p-chinchon", "nonce": bytes(32),
                      "proof_rounds": 64, "host_key": SEATS[0].public_bytes}),
        (0, "seating", {"players": [{"name": f"p{i}", "key": s.public_bytes, "addr": "", "addrs": []} for i, s in enumerate(SEATS)]}),
    ]
    while len(steps) < n:
        seat = len(steps) % 2
        steps.append((seat, "draw_share", {"hand": 0, "slot": len(steps), "share": RNG.token_bytes(96)}))
    envs, prev = [], ZERO_HASH
    for i, (seat, kind, body) in enumerate(steps[:n]):
        env = make_envelope(SEATS[seat].private_key, game=GAME, seq=i, seat=seat, prev=prev, kind=kind, body=body)
        envs.append(env)
        prev = env.hash()
    return envs


CHAIN = build(6)
DATA = b"".join(e.encode() for e in CHAIN)


def test_write_and_load(tmp_path: Path) -> None:
    path = tmp_path / "game.chinchon"
    with TranscriptWriter(path) as w:
        offsets = [w.append(e) for e in CHAIN]
        assert w.size == len(DATA)
    assert w.closed
    assert offsets[0] == 0 and offsets[1] == len(CHAIN[0].encode())
    assert path.read_bytes() == DATA  # the file format is the plain concatenation of frames
    result = load_transcript(path)
    assert result.ok and result.envelopes == CHAIN and result.torn_tail is None
    assert result.frames == [e.encode() for e in CHAIN] and result.complete_bytes == len(DATA)
    assert verify_loaded(result).head == CHAIN[-1].hash()


def _record_fsyncs(monkeypatch) -> list[int]:
    """The size of the file at each fsync from now on."""
    synced: list[int] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.fstat(fd).st_size)
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    return synced


def test_each_append_is_on_disk_and_fsynced_before_returning(tmp_path: Path, monkeypatch) -> None:
    synced = _record_fsyncs(monkeypatch)
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        synced.clear()  # ignore the directory fsync at creation
        for i, e in enumerate(CHAIN):
            w.append(e)
            # fsync ran on the file once, with the whole frame already written
            assert synced[-1] == sum(len(x.encode()) for x in CHAIN[: i + 1])
            assert len(synced) == i + 1
            # and another reader sees it now, without close()
            assert load_transcript(path).envelopes == CHAIN[: i + 1]


def test_frames_appended_unsynced_take_one_fsync(tmp_path: Path, monkeypatch) -> None:
    """A node persists the envelopes of one table call together: every frame written, then
    one fsync covering them all (before any of them is sent)."""
    synced = _record_fsyncs(monkeypatch)
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        synced.clear()
        for e in CHAIN[:3]:
            w.append(e, sync=False)
        assert synced == []
        w.sync()
        assert synced == [sum(len(x.encode()) for x in CHAIN[:3])]
    assert load_transcript(path).envelopes == CHAIN[:3]


def test_a_failed_sync_breaks_the_writer(tmp_path: Path, monkeypatch) -> None:
    with TranscriptWriter(tmp_path / "t") as w:
        w.append(CHAIN[0], sync=False)

        def fail(fd: int) -> None:
            raise OSError(5, "I/O error")

        monkeypatch.setattr(os, "fsync", fail)
        with pytest.raises(OSError):
            w.sync()
        monkeypatch.undo()
        with pytest.raises(TranscriptError, match="broken"):
            w.append(CHAIN[1])


def test_reopen_appends_after_existing_frames(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        for e in CHAIN[:3]:
            w.append(e)
    with TranscriptWriter(path) as w:
        assert w.recovered.envelopes == CHAIN[:3] and w.recovered.ok
        for e in CHAIN[3:]:
            w.append(e.encode())  # raw frames are accepted once they decode
    assert load_transcript(path).envelopes == CHAIN


def test_torn_tail_is_reported_then_truncated_by_the_writer(tmp_path: Path) -> None:
    path = tmp_path / "t"
    cut = CHAIN[4].encode()[:50]
    path.write_bytes(b"".join(e.encode() for e in CHAIN[:4]) + cut)
    result = load_transcript(path)
    assert result.envelopes == CHAIN[:4] and result.torn_tail == cut and not result.errors and not result.ok
    assert verify_loaded(result).length == 4  # a torn tail is not a chain error
    with TranscriptWriter(path) as w:
        assert w.recovered.torn_tail == cut
        w.append(CHAIN[4])
        w.append(CHAIN[5])
    again = load_transcript(path)
    assert again.ok and again.envelopes == CHAIN


def test_every_truncation_point_recovers_the_complete_frames() -> None:
    ends = []
    pos = 0
    for e in CHAIN:
        pos += len(e.encode())
        ends.append(pos)
    for cut in range(len(DATA) + 1):
        result = parse_transcript(DATA[:cut])
        complete = sum(1 for end in ends if end <= cut)
        assert result.envelopes == CHAIN[:complete], cut
        assert not result.errors
        last = ends[complete - 1] if complete else 0
        assert result.complete_bytes == last
        assert result.torn_tail == (DATA[last:cut] or None)


def test_zero_filled_tail_is_a_torn_tail() -> None:
    result = parse_transcript(DATA + bytes(1000))
    assert result.envelopes == CHAIN and result.torn_tail == bytes(1000) and not result.errors


def test_damaged_middle_frames_are_skipped_and_named() -> None:
    frames = [e.encode() for e in CHAIN]
    damaged = bytearray(frames[2])
    damaged[frames[2].index(CHAIN[2].body["share"]) + 10] ^= 0xFF  # still decodes; signature broken
    frames[2] = bytes(damaged)
    frames[3] = frames[3].replace(b"\xa4slot", b"\xa4slop")  # no longer decodes
    result = parse_transcript(b"".join(frames))
    assert len(result.frames) == 6 and result.torn_tail is None
    assert [(e.index, e.code) for e in result.errors] == [(3, "unknown_field")]
    assert result.errors[0].offset == sum(len(f) for f in frames[:3])
    assert len(result.envelopes) == 5 and result.envelopes[3] == CHAIN[4]
    with pytest.raises(ChainSignatureError) as info:  # the first problem, at its own index
        verify_loaded(result)
    assert (info.value.index, info.value.seat) == (2, CHAIN[2].seat)
    with pytest.raises(CorruptFrameError) as info2:
        verify_loaded(parse_transcript(b"".join(frames[:2] + frames[3:])))
    assert (info2.value.index, info2.value.seat, info2.value.code) == (2, None, "unknown_field")


def test_unparseable_bytes_stop_the_loader_and_the_writer(tmp_path: Path) -> None:
    data = DATA[: len(CHAIN[0].encode())] + b"\xc1" + DATA
    result = parse_transcript(data)
    assert result.envelopes == CHAIN[:1] and result.torn_tail is None
    assert [(e.index, e.code) for e in result.errors] == [(None, "unparseable")]
    with pytest.raises(CorruptFrameError) as info:
        verify_loaded(result)
    assert (info.value.index, info.value.code) == (1, "unparseable")
    path = tmp_path / "t"
    path.write_bytes(data)
    with pytest.raises(TranscriptError):
        TranscriptWriter(path)
    assert path.read_bytes() == data  # evidence kept


def test_a_header_claiming_more_than_a_frame_is_damage_not_a_torn_tail(tmp_path: Path) -> None:
    first = len(CHAIN[0].encode())
    for inserted, code in ((b"\xc6\xff\xff\xff\xff", "frame_too_large"), (b"\xdd\x00\x20\x00\x00", "frame_too_large"),
                           (b"\xc5\xff\xff", "malformed")):
        data = DATA[:first] + inserted + DATA[first:]
        result = parse_transcript(data)
        assert result.envelopes == CHAIN[:1] and result.torn_tail is None, inserted
        assert [(e.index, e.offset, e.code) for e in result.errors] == [(None, first, code)]
        with pytest.raises(CorruptFrameError) as info:
            verify_loaded(result)
        assert (info.value.index, info.value.code) == (1, code)
        path = tmp_path / "t"
        path.write_bytes(data)
        with pytest.raises(TranscriptError):  # a writer never appends after such bytes
            TranscriptWriter(path)
    result = parse_transcript(DATA + b"\x98\xc6\x00\x10\x00\x00" + bytes(MAX_FRAME))
    assert result.torn_tail is None and [e.code for e in result.errors] == ["frame_too_large"]


def test_writer_is_exclusive(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path):
        with pytest.raises(TranscriptError, match="another process"):
            TranscriptWriter(path)
    with TranscriptWriter(path):  # released on close
        pass


def test_closed_writer_and_invalid_frames(tmp_path: Path) -> None:
    path = tmp_path / "t"
    w = TranscriptWriter(path)
    with pytest.raises(WireError):
        w.append(b"\x01\x02")
    w.close()
    w.close()  # idempotent
    with pytest.raises(TranscriptError):
        w.append(CHAIN[0])
    assert path.read_bytes() == b""


def test_failed_write_leaves_no_partial_frame(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "t"
    real_write = os.write
    with TranscriptWriter(path) as w:
        w.append(CHAIN[0])

        def half_then_fail(fd: int, data) -> int:
            real_write(fd, bytes(data[: len(data) // 2]))
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(os, "write", half_then_fail)
        with pytest.raises(OSError):
            w.append(CHAIN[1])
        monkeypatch.setattr(os, "write", real_write)
        assert path.read_bytes() == CHAIN[0].encode()
        w.append(CHAIN[1])
    assert load_transcript(path).envelopes == CHAIN[:2]


def test_short_writes_are_completed(tmp_path: Path, monkeypatch) -> None:
    real_write = os.write
    monkeypatch.setattr(os, "write", lambda fd, data: real_write(fd, bytes(data[:7])))
    with TranscriptWriter(tmp_path / "t") as w:
        for e in CHAIN:
            w.append(e)
    monkeypatch.setattr(os, "write", real_write)
    assert load_transcript(tmp_path / "t").envelopes == CHAIN


def test_transcript_writes_through_only_what_it_accepts(tmp_path: Path) -> None:
    path = tmp_path / "t"
    with TranscriptWriter(path) as w:
        t = Transcript(writer=w)
        t.append(CHAIN[0])
        t.append(CHAIN[1])
        with pytest.raises(ChainLinkError):
            t.append(make_envelope(SEATS[0].private_key, game=GAME, seq=2, seat=0, prev=bytes(32), kind="leave",
                                   body={"reason": ""}))
    assert load_transcript(path).envelopes == CHAIN[:2]


def test_missing_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        load_transcript(tmp_path / "nope")


# --- the header-only msgpack framer against msgpack's own parser --------------------------------

leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(allow_nan=False), st.text(max_size=40),
    st.binary(max_size=300), st.builds(msgpack.ExtType, st.integers(0, 127), st.binary(max_size=20)),
)
values = st.recursive(leaves, lambda inner: st.one_of(
    st.lists(inner, max_size=20), st.dictionaries(st.text(max_size=5), inner, max_size=20)), max_leaves=15)


@settings(max_examples=100, deadline=None)
@given(st.lists(values, min_size=1, max_size=4), st.data())
def test_split_frames_agrees_with_msgpack(objs: list, data: st.DataObject) -> None:
    packed = [msgpack.packb(o, use_bin_type=True) for o in objs]
    stream = b"".join(packed)
    frames, torn, stop = split_frames(stream)
    if stream and stream.strip(b"\x00") == b"":
        return  # all-zero streams are a zero-filled tail by design
    expected = []
    pos = 0
    for p in packed:
        if p.strip(b"\x00") == b"" and not stream[pos:].strip(b"\x00"):
            break
        expected.append((pos, p))
        pos += len(p)
    assert frames == expected and stop is None
    cut = data.draw(st.integers(0, len(stream)))
    frames, torn, stop = split_frames(stream[:cut])
    assert stop is None
    assert b"".join(f for _, f in frames) + (torn or b"") == stream[:cut]


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=600))
def test_loader_never_raises_on_garbage(data: bytes) -> None:
    result = parse_transcript(DATA[:200] + data)
    total = sum(len(f) for f in result.frames)
    assert total == result.complete_bytes
    assert result.complete_bytes + len(result.torn_tail or b"") <= len(DATA[:200] + data)
