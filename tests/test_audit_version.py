"""A transcript of another protocol version (version 1: the Ed25519 deck; version 2: removal
without a majority's votes) gets a one-line ``unsupported`` verdict naming its version, never a
misreading as a corrupt or cheating file."""

from __future__ import annotations

import msgpack
import pytest

from harness.transcripts import build, script
from p2p_chinchon import PROTOCOL_VERSION
from p2p_chinchon.audit import audit_file, audit_frames
from p2p_chinchon.cli import main as cli_main


def _as_version(frame: bytes, v: int) -> bytes:
    arr = msgpack.unpackb(frame, raw=False)
    arr[0] = v
    return msgpack.packb(arr, use_bin_type=True)


@pytest.mark.parametrize("old", [1, 2])
def test_an_older_version_transcript_is_named_in_one_line(tmp_path, capsys, old):
    assert PROTOCOL_VERSION == 3
    frames = [_as_version(e.encode(), old) for e in build(script(2))]
    r = audit_frames(frames)
    assert r.verdict == "unsupported" and r.exit_code == 1
    assert f"protocol version {old}" in r.summary() and "\n" not in r.summary()
    path = tmp_path / "old.transcript"
    path.write_bytes(b"".join(frames))
    r = audit_file(path)
    assert r.verdict == "unsupported" and f"protocol version {old}" in r.detail
    assert cli_main(["audit", str(path)]) == 1
    out = capsys.readouterr().out.strip()
    assert out.count("\n") == 0 and f"version {old}" in out and "CORRUPT" not in out


def test_a_current_version_transcript_is_replayed_not_refused():
    frames = [e.encode() for e in build(script(2))]
    assert audit_frames(frames).verdict != "unsupported"
