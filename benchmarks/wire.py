"""Benchmark of the wire and transcript layers: sign, encode, strict decode, verify, load a file.

Usage: ``python benchmarks/wire.py [--n 2000] [--json]``

Measures, per envelope, for a small turn message (``draw_share``, 96-byte share) and for a
40-card ``shuffle`` with a 256 KiB proof: ``make_envelope`` (schema check + Ed25519 sign),
``decode_envelope`` (strict parse + schema + canonical re-encode), ``verify_envelope`` (Ed25519
verify) and SHA-256 hashing. Then a transcript of ``--n`` small envelopes: append with fsync
(per append), append without fsync, ``load_transcript`` and ``verify_chain``. Times are
``time.perf_counter`` wall seconds, best of 3 rounds, in a temporary folder.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from p2p_chinchon.identity import Identity  # noqa: E402
from p2p_chinchon.rng import SeededRng  # noqa: E402
from p2p_chinchon.transcript import TranscriptWriter, load_transcript, verify_chain  # noqa: E402
from p2p_chinchon.wire import ZERO_HASH, decode_envelope, make_envelope, verify_envelope  # noqa: E402


def best(fn, rounds: int = 3) -> float:
    times = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return min(times)


def per_envelope(ident: Identity, kind: str, body: dict, n: int) -> dict:
    key = ident.private_key
    kw = dict(game=bytes(16), seq=5, seat=0, prev=ZERO_HASH, kind=kind, body=body)
    env = make_envelope(key, **kw)
    frame = env.encode()
    return {
        "frame_bytes": len(frame),
        "make_us": best(lambda: [make_envelope(key, **kw) for _ in range(n)]) / n * 1e6,
        "decode_us": best(lambda: [decode_envelope(frame) for _ in range(n)]) / n * 1e6,
        "verify_us": best(lambda: [verify_envelope(env, ident.public_bytes) for _ in range(n)]) / n * 1e6,
    }


def transcript_numbers(n: int) -> dict:
    rng = SeededRng("bench")
    seats = [Identity.generate(rng) for _ in range(4)]
    envs = []
    prev = ZERO_HASH
    steps = [(0, "offer", {"name": "b", "rules": {}, "max_seats": 4, "app": "p2p-chinchon", "nonce": bytes(32),
                        "proof_rounds": 64, "host_key": seats[0].public_bytes}),
             (0, "seating", {"players": [{"name": str(i), "key": s.public_bytes, "addr": "", "addrs": []} for i, s in enumerate(seats)]})]
    while len(steps) < n:
        steps.append((len(steps) % 4, "draw_share", {"hand": 0, "slot": len(steps) % 256, "share": rng.token_bytes(96)}))
    for i, (seat, kind, body) in enumerate(steps):
        env = make_envelope(seats[seat].private_key, game=bytes(16), seq=i, seat=seat, prev=prev, kind=kind, body=body)
        envs.append(env)
        prev = env.hash()
    out = {"envelopes": n}
    with tempfile.TemporaryDirectory() as d:
        for fsync in (True, False):
            path = Path(d) / f"t{fsync}"
            count = min(n, 300) if fsync else n  # fsync is slow on some disks; sample it

            def write(path=path, count=count, fsync=fsync) -> None:
                path.unlink(missing_ok=True)
                with TranscriptWriter(path, fsync=fsync) as w:
                    for e in envs[:count]:
                        w.append(e)

            out["append_fsync_us" if fsync else "append_nofsync_us"] = best(write) / count * 1e6
        path = Path(d) / "tFalse"
        out["load_us"] = best(lambda: load_transcript(path)) / n * 1e6
        loaded = load_transcript(path)
        out["verify_chain_us"] = best(lambda: verify_chain(loaded.frames)) / n * 1e6
        out["verify_chain_per_s"] = 1e6 / out["verify_chain_us"]
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=2000, help="envelopes in the transcript test")
    ap.add_argument("--json", action="store_true")
    args = ap.parse_args(argv)
    rng = SeededRng("bench wire")
    ident = Identity.generate(rng)
    result = {
        "draw_share": per_envelope(ident, "draw_share", {"hand": 0, "slot": 3, "share": rng.token_bytes(96)}, 2000),
        "shuffle_40_256k": per_envelope(
            ident, "shuffle", {"hand": 0, "round": 0, "deck": rng.token_bytes(40 * 64), "proof": rng.token_bytes(256 * 1024)}, 200),
        "transcript": transcript_numbers(args.n),
    }
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        for name, numbers in result.items():
            print(name)
            for k, v in numbers.items():
                print(f"  {k:22} {v:12.1f}" if isinstance(v, float) else f"  {k:22} {v:12}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
