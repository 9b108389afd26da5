"""The transcript file and chain verification ("Transcript file"), for the `chain-*` vectors."""
from __future__ import annotations

import msgpack

import wire

MAX_FRAME = 1 << 20


def walk(data: bytes, pos: int) -> str | None:
    """"Transcript file", step 2: read the headers from pos in order, as far as the data goes,
    counting the bytes the object claims (each element still to come at least one byte);
    "unparseable" or "frame_too_large" for whichever of 0xc1 and a count above 1 MiB comes
    first, else None (a length field cut off by the end of the data claims nothing)"""
    start, pending = pos, 1
    lens = {0xC4: 1, 0xC5: 2, 0xC6: 4, 0xD9: 1, 0xDA: 2, 0xDB: 4}
    exts = {0xC7: 1, 0xC8: 2, 0xC9: 4}
    fixed = {0xCC: 1, 0xCD: 2, 0xCE: 4, 0xCF: 8, 0xD0: 1, 0xD1: 2, 0xD2: 4, 0xD3: 8, 0xCA: 4, 0xCB: 8,
             0xD4: 2, 0xD5: 3, 0xD6: 5, 0xD7: 9, 0xD8: 17}
    while pending and pos < len(data):
        if pos - start + pending > MAX_FRAME:
            return "frame_too_large"
        c, pending, pos = data[pos], pending - 1, pos + 1
        if c == 0xC1:
            return "unparseable"
        if 0x80 <= c <= 0x8F:
            pending += 2 * (c & 0x0F)
        elif 0x90 <= c <= 0x9F:
            pending += c & 0x0F
        elif 0xA0 <= c <= 0xBF:
            pos += c & 0x1F
        elif c in lens or c in exts or c in (0xDC, 0xDD, 0xDE, 0xDF):
            w = lens.get(c) or exts.get(c) or (2 if c in (0xDC, 0xDE) else 4)
            if pos + w > len(data):
                return None                     # the file ends inside a length field
            n = int.from_bytes(data[pos:pos + w], "big")
            if c in (0xDC, 0xDD, 0xDE, 0xDF):
                pending += n * (2 if c >= 0xDE else 1)
                pos += w
            else:
                pos += w + (c in exts) + n
        elif c in fixed:
            pos += fixed[c]
    return "frame_too_large" if pos - start + pending > MAX_FRAME else None


def cut(data: bytes):
    """(frames, torn_tail_bytes, (frame index, code) of bytes nothing after can be framed, or None),
    from the headers alone ("Transcript file", steps 1-4)"""
    frames: list[bytes] = []
    pos = 0
    while pos < len(data):
        if not any(data[pos:]):
            return frames, len(data) - pos, None
        why = walk(data, pos)
        if why:
            return frames, 0, (len(frames), why)
        u = msgpack.Unpacker(raw=True, strict_map_key=False, ext_hook=lambda c, d: None)
        u.feed(data[pos:])
        try:
            u.skip()
        except msgpack.OutOfData:
            if len(data) - pos >= MAX_FRAME:
                return frames, 0, (len(frames), "frame_too_large")
            if data[pos] != 0x98:   # only an envelope (fixarray 8) can be cut short by a crash
                return frames, 0, (len(frames), "malformed")
            return frames, len(data) - pos, None
        except Exception:  # noqa: BLE001  (0xc1 inside a frame, ...)
            return frames, 0, (len(frames), "unparseable")
        n = u.tell()
        frames.append(data[pos:pos + n])
        pos += n
    return frames, 0, None


def verify(data: bytes):
    """first violation as the vectors' verdict dict (without "transcript"), or ok"""
    frames, torn, unparseable = cut(data)
    envs: list[wire.Envelope] = []
    keys: list[bytes] | None = None
    game, host_key, seated = None, None, False
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
            assert keys is not None                 # seated
            if e.seat >= len(keys):
                return {"result": "ChainSeatError", "index": i, "seat": e.seat}
            key = keys[e.seat]
        if not wire.verify_sig(e, key):
            return {"result": "ChainSignatureError", "index": i, "seat": e.seat}
        envs.append(e)
    if unparseable is not None:
        return {"result": "CorruptFrameError", "index": unparseable[0], "seat": None, "code": unparseable[1]}
    return {"result": "ok", "envelopes": len(envs), "head": envs[-1].hash.hex() if envs else None,
            "torn_tail": torn, "_envs": envs, "_keys": keys}


def verdict(transcripts: list[bytes]):
    results = [verify(t) for t in transcripts]
    seen: dict[tuple[int, int], bytes] = {}
    for t in transcripts:
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
