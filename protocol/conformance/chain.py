"""The transcript file and chain verification ("Transcript file"), for the `chain-*` vectors."""
from __future__ import annotations

import hashlib

import msgpack

import wire


def cut(data: bytes):
    """(frames, torn_tail_bytes, unparseable_at_frame_index or None), from the headers alone"""
    frames, pos = [], 0
    while pos < len(data):
        if data[pos] == 0xC1:
            return frames, 0, len(frames)
        if not any(data[pos:]):
            return frames, len(data) - pos, None
        u = msgpack.Unpacker(raw=True, strict_map_key=False, ext_hook=lambda c, d: None)
        u.feed(data[pos:])
        try:
            u.skip()
        except msgpack.OutOfData:
            return frames, len(data) - pos, None
        except Exception:  # noqa: BLE001  (0xc1 inside a frame, ...)
            return frames, 0, len(frames)
        n = u.tell()
        frames.append(data[pos:pos + n])
        pos += n
    return frames, 0, None


def verify(data: bytes):
    """first violation as the vectors' verdict dict (without "transcript"), or ok"""
    frames, torn, unparseable = cut(data)
    envs, game, keys, host_key, seated = [], None, None, None, False
    for i, f in enumerate(frames):
        try:
            e = wire.decode(f)
        except wire.WireError as ex:
            return {"result": "CorruptFrameError", "index": i, "seat": None, "code": ex.code}
        if i == 0:
            game = e.game
            host_key = e.body.get("host_key") if e.kind == "offer" else None
        if e.game != game:
            return {"result": "ChainGameError", "index": i, "seat": e.seat}
        if e.seq != i:
            return {"result": "ChainSeqError", "index": i, "seat": e.seat}
        if e.prev != (envs[-1].hash if envs else bytes(32)):
            return {"result": "ChainLinkError", "index": i, "seat": e.seat}
        if not seated:
            if e.seat != 0 or host_key is None:
                return {"result": "ChainSeatError", "index": i, "seat": e.seat}
            key = host_key
            if e.kind == "seating":
                if e.body["players"][0]["key"] != host_key:
                    return {"result": "ChainSeatError", "index": i, "seat": e.seat}
                seated, keys = True, [p["key"] for p in e.body["players"]]
        else:
            if e.seat >= len(keys):
                return {"result": "ChainSeatError", "index": i, "seat": e.seat}
            key = keys[e.seat]
        if not wire.verify_sig(e, key):
            return {"result": "ChainSignatureError", "index": i, "seat": e.seat}
        envs.append(e)
    if unparseable is not None:
        return {"result": "CorruptFrameError", "index": unparseable, "seat": None, "code": "unparseable"}
    return {"result": "ok", "envelopes": len(envs), "head": envs[-1].hash.hex() if envs else None,
            "torn_tail": torn, "_envs": envs, "_keys": keys}


def verdict(transcripts: list[bytes]):
    results = [verify(t) for t in transcripts]
    seen = {}
    for t, r in zip(transcripts, results):
        frames, _, _ = cut(t)
        keys = None
        for f in frames:
            try:
                e = wire.decode(f)
            except wire.WireError:
                continue
            if e.kind == "seating" and keys is None:
                keys = [p["key"] for p in e.body["players"]]
                continue
            if keys is None or e.seat >= len(keys) or not wire.verify_sig(e, keys[e.seat]):
                continue
            k = (e.seat, e.seq)
            if k in seen and seen[k] != e.signed_bytes():
                return {"result": "Equivocation", "seat": e.seat, "seq": e.seq}
            seen[k] = e.signed_bytes()
    for i, r in enumerate(results):
        if r["result"] != "ok":
            return {**r, "transcript": i}
    r = results[0]
    return {k: v for k, v in r.items() if not k.startswith("_")}
