#!/usr/bin/env python3
"""Write the vectors for the values docs/protocol.md defines byte by byte.

    python protocol/make_spec_vectors.py            # rewrites the files below
    python protocol/make_spec_vectors.py --check    # exit 1 naming each file that would change

One file per vector, ``{name, layer, description, input, verdict, trace}`` (protocol/README.md):
``verdict`` is what a correct implementation computes from ``input`` (tests/test_vectors.py
checks it against this code), ``trace`` holds the intermediate bytes of the computation (the
exact hash inputs, the packed maps), for a second implementation to find where it differs.

Layers: ``rules_hash``, ``seating_hash``, ``toss`` (commitments and first dealer),
``hand_digest``, ``card_point`` (hash to the group), ``key_share`` (commitment and Schnorr
proof), ``dleq`` (a decryption share), ``lobby`` (the frames of one join, as the running lobby
sends them inside TLS 1.3 over loopback) and ``mesh`` (the frames of one link handshake inside
TLS). The TLS records are not in the vectors (RFC 8446; not reproducible): the certificates
(deterministic from the identity key) and their SHA-256 are, as the signed texts bind them.

Every value comes from the running code: the hashes from ``p2p_chinchon.table``, the first
dealer, the hand digests and the final decks from replaying real transcripts through the table,
the lobby and handshake bytes from the real lobby and mesh functions over loopback and memory
streams (the host's challenge and the mesh nonces from seeded streams). The traces are rebuilt
here from the document's definitions and checked against those values before anything is
written, so a trace that does not match the code cannot be written. Output is deterministic.
"""

from __future__ import annotations

import functools
import hashlib
import json
import struct
import sys
from pathlib import Path
from typing import Any

import msgpack

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "protocol"))
sys.path.insert(0, str(ROOT))

import make_game_vectors  # noqa: E402
import make_vectors  # noqa: E402
from make_vectors import blob, write_or_check  # noqa: E402
from p2p_chinchon import deck, table as tbl, wire  # noqa: E402
from p2p_chinchon.engine import make_rules  # noqa: E402
from p2p_chinchon.identity import Identity, fingerprint  # noqa: E402
from p2p_chinchon.rng import SeededRng  # noqa: E402

OUT = ROOT / "protocol" / "vectors"
LAYERS = ("rules_hash", "seating_hash", "toss", "hand_digest", "card_point", "key_share", "dleq",
          "lobby", "mesh", "showdown", "relay")


def framed(*parts: bytes) -> bytes:
    """The document's hash framing: ``u32be len(p) || p`` for each part."""
    return b"".join(struct.pack(">I", len(p)) + p for p in parts)


def packb(obj: Any) -> bytes:
    return msgpack.packb(obj, use_bin_type=True)


def vec(layer: str, name: str, desc: str, inp: dict, verdict: dict, trace: dict | None = None) -> dict:
    out = {"name": f"{layer.replace('_', '-')}-{name}", "layer": layer, "description": desc,
           "input": inp, "verdict": verdict}
    if trace:
        out["trace"] = trace
    return out


def checked_sha256(hash_input: bytes, expected: bytes) -> None:
    """A trace's hash input must hash to the code's value."""
    assert hashlib.sha256(hash_input).digest() == expected, "trace does not match the code"


# --- lobby hashes -------------------------------------------------------------------------------


def rules_vectors() -> list[dict]:
    out = []
    cases = [
        ("classic", "the classic preset as offered by default (k = 64)", make_rules("classic")),
        ("online-k40", "the online preset (a str wild_card, spanish suits) with k = 40",
         make_rules("online", {"shuffle_proof_rounds": 40})),
        ("fournier-options", "fournier with options (two jokers, 52 cards, limit 70, k = 128)",
         make_rules("fournier", {"jokers": 2, "deck": 52, "limit": 70, "shuffle_proof_rounds": 128})),
    ]
    for name, desc, rules in cases:
        wire_rules = rules.to_wire()
        k = rules.shuffle_proof_rounds
        h = tbl.rules_hash(wire_rules, k)
        packed = packb([[key, wire_rules[key]] for key in sorted(wire_rules, key=str.encode)])
        hash_input = framed(b"p2p-chinchon/rules/v1", packed, struct.pack(">H", k))
        checked_sha256(hash_input, h)
        out.append(vec("rules_hash", name, desc, {"rules": wire_rules, "proof_rounds": k},
                       {"hash": h.hex()}, {"packed_rules": blob(packed), "hash_input": blob(hash_input)}))
    return out


def seating_vectors() -> list[dict]:
    out = []
    base = make_vectors.BASE
    for name, env, desc in [
        ("3-seats", base[1], "the seating of the chain vectors (three players, LAN addresses)"),
    ]:
        players = env.body["players"]
        h = tbl.seating_hash(players)
        packed = packb([[p["name"], p["key"], p["addr"]] for p in players])
        hash_input = framed(b"p2p-chinchon/seating/v1", packed)
        checked_sha256(hash_input, h)
        # the agree envelopes of that chain carry this hash
        assert all(e.body["seating_hash"] == h for e in base if e.kind == "agree")
        inp = {"players": [{"name": p["name"], "key": blob(p["key"]), "addr": p["addr"]} for p in players]}
        out.append(vec("seating_hash", name, desc, inp, {"hash": h.hex()},
                       {"packed_players": blob(packed), "hash_input": blob(hash_input)}))
    # names outside ASCII and an IPv6 address: str is UTF-8, the order is the seating's
    ids = [Identity.generate(SeededRng(f"seating {i}")) for i in range(2)]
    players = [{"name": "Ñandú", "key": ids[0].public_bytes, "addr": "[fe80::1]:7300"},
               {"name": "Zoë", "key": ids[1].public_bytes, "addr": "10.0.0.7:41234"}]
    h = tbl.seating_hash(players)
    packed = packb([[p["name"], p["key"], p["addr"]] for p in players])
    hash_input = framed(b"p2p-chinchon/seating/v1", packed)
    checked_sha256(hash_input, h)
    inp = {"players": [{"name": p["name"], "key": blob(p["key"]), "addr": p["addr"]} for p in players]}
    out.append(vec("seating_hash", "utf8-ipv6", "two players, non-ASCII names and an IPv6 address",
                   inp, {"hash": h.hex()}, {"packed_players": blob(packed), "hash_input": blob(hash_input)}))
    return out


def toss_vectors() -> list[dict]:
    """From the chain vectors' real lobbies, replayed through the table: its first dealer."""
    out = []
    chains = [("3-seats", make_vectors.BASE),
              ("2-seats", make_vectors.chain(make_vectors.lobby_script(make_vectors.SEATS[:2], SeededRng("two seats"))))]
    for n in (5, 8):  # more seats: more of the dealer hash's value shows through "mod N"
        ids = [Identity.generate(SeededRng(f"toss {n} seats {i}")) for i in range(n)]
        chains.append((f"{n}-seats", make_vectors.chain(make_vectors.lobby_script(ids, SeededRng(f"toss {n}")), keys=ids)))
    for name, envs in chains:
        t = tbl.Table.observer()
        for e in envs:
            t.replay(e.encode())
            if t.flow.engine is not None:
                break
        game = envs[0].game
        n = len(t.lobby.players)
        nonces = [t.lobby.toss_nonces[s] for s in range(n)]
        commits = [tbl.toss_commitment(game, s, nonces[s]) for s in range(n)]
        assert commits == [t.lobby.toss_commits[s] for s in range(n)]
        commit_inputs = [framed(b"p2p-chinchon/toss/v1", game, bytes([s]), nonces[s]) for s in range(n)]
        for ci, c in zip(commit_inputs, commits, strict=True):
            checked_sha256(ci, c)
        dealer_input = framed(b"p2p-chinchon/first-dealer/v1", game, *nonces)
        dealer_hash = hashlib.sha256(dealer_input).digest()
        first = t.flow.game().dealer
        assert int.from_bytes(dealer_hash, "big") % n == first
        out.append(vec("toss", name, f"the coin toss of a {n}-seat lobby: commitments and the first dealer",
                       {"game": blob(game), "nonces": [blob(x) for x in nonces]},
                       {"commits": [c.hex() for c in commits], "first_dealer": first},
                       {"commit_inputs": [blob(x) for x in commit_inputs], "dealer_hash_input": blob(dealer_input),
                        "dealer_hash": dealer_hash.hex()}))
    return out


# --- hand digest ---------------------------------------------------------------------------------


def hand_digest_vectors() -> list[dict]:
    """Every hand of the two game vectors' games, replayed through an observer table: the
    inputs the digest covers, and the digest both seats signed."""
    out = []
    games = [("2-seats", make_game_vectors.play()[0]),
             ("restock", make_game_vectors.play(make_game_vectors.RESTOCK_SEED, limit=5, close_max_unmatched=0)[0])]
    for gname, frames in games:
        t = tbl.Table.observer()
        for frame in frames:
            env = wire.decode_envelope(frame)
            if env.kind == "hand_digest" and env.seat == t.hand.crypto().seats[0]:
                hc = t.hand.crypto()
                secrets = [hc.secrets[s] for s in hc.seats]
                final = [deck.decrypt_with_secrets(ct, secrets, t.hand.points) for ct in t.hand.cts]
                totals = list(env.body["totals"])
                hand = env.body["hand"]
                head = env.prev  # the hash of the hand's last secret envelope
                hash_input = framed(b"p2p-chinchon/hand-digest/v1", t.lobby.game, struct.pack(">H", hand), head,
                                    packb(totals), packb(final))
                checked_sha256(hash_input, env.body["digest"])
                assert t.chain.envelopes[-1].kind == "secret"
                n_slots = len(final)
                out.append(vec("hand_digest", f"{gname}-hand-{hand}",
                               f"hand {hand} of the game of game-ok-{gname}: {n_slots} slots in the final deck",
                               {"game": blob(t.lobby.game), "hand": hand, "head": blob(head), "totals": totals,
                                "final_deck": final},
                               {"digest": env.body["digest"].hex()},
                               {"packed_totals": blob(packb(totals)), "packed_final_deck": blob(packb(final)),
                                "hash_input": blob(hash_input)}))
            t.replay(frame)
    return out


# --- the deck -------------------------------------------------------------------------------------


def _ctx_hash_input(label: bytes, ctx: deck.Context, *parts: bytes) -> bytes:
    return deck.DOMAIN + label + b"\x00" + framed(ctx.encode(), *parts)


def showdown_verdict(inp: dict) -> dict:
    """What the engine makes of a closed hand (``tests/test_vectors.py`` runs this too)."""
    from p2p_chinchon.engine import Card, Rules
    from p2p_chinchon.engine.melds import close_result
    from p2p_chinchon.engine.scoring import score_showdown

    rules = Rules.from_wire(inp["rules"])

    def cards(xs: list) -> list:
        return [Card(*x) for x in xs]

    closed = close_result(cards(inp["closer"]), rules)
    if closed is None:
        return {"result": "illegal"}
    sd = score_showdown(rules, cards(inp["closer"]), [cards(h) for h in inp["hands"]], n_players=inp["players"])
    return {"result": "ok", "score": closed.score, "chinchon": closed.chinchon, "wild_run": closed.wild_chinchon,
            "clean": closed.clean, "game_won": sd.game_won,
            "closer_melds": sorted(sorted([c.rank, c.suit, c.copy] for c in m.cards) for m in closed.arrangement.melds),
            "penalties": list(sd.penalties)}


def showdown_vectors() -> list[dict]:
    """Closed hands scored by the engine ("What the engine computes"): the melds a closer shows
    and whether its close is clean after a chinchón or a wild seven-run, a natural wild card in
    its own place, a meld that is both a set and a run, lay-off after a clean close. Cards are
    [rank, suit, copy] ("Cards and card indices")."""
    from p2p_chinchon.engine import make_rules

    out = []
    D, H, S, C = 0, 1, 2, 3

    def run(suit: int, ranks: tuple) -> list:
        return [[r, suit, 0] for r in ranks]

    def case(name: str, desc: str, preset: str, options: dict, closer: list, hands: list) -> None:
        rules = make_rules(preset, options)
        inp = {"rules": rules.to_wire(), "players": 1 + len(hands), "closer": closer, "hands": hands}
        out.append(vec("showdown", name, desc, inp, showdown_verdict(inp)))

    seven = (1, 2, 3, 4, 5, 6, 7)
    other = run(S, (1, 2, 3)) + [[10, H, 0], [11, C, 0], [4, C, 0], [12, S, 0]]
    case("chinchon", "classic: 1-7 of hearts, natural: a chinchón, one meld shown (the seven-card run), clean, "
         "the game won; the other seat's J♥ may not be laid off on it (lay_off_after_clean = others: not on the "
         "closer's melds)", "classic", {}, run(H, seven), [other])
    case("natural-wild-in-its-place", "online (the 1 of oros wild): 1-7 of oros is a seven-run with one wild card "
         "standing in its own place, not a chinchón: -25 beats the clean close's -10; one meld shown; clean, so "
         "nobody lays off (lay_off_after_clean = none)", "online", {},
         run(D, seven), [run(C, (1, 2, 3)) + [[10, D, 0], [11, H, 0], [4, H, 0], [12, S, 0]]])
    case("wild-run", "classic with jokers: 1-6 of clubs and a joker is a wild seven-run worth -50, "
         "better than the clean close's -10: one meld shown, clean", "classic", {"jokers": 2},
         run(C, (1, 2, 3, 4, 5, 6)) + [[0, 0, 0]], [run(S, (1, 2, 3)) + [[10, H, 0], [11, D, 0], [4, D, 0], [12, S, 0]]])
    case("set-or-run", "classic with jokers (two per meld, one natural): the closer's 5♦ with both jokers is a "
         "set and a run at once: it takes the other seat's 5♥ (a set of fives) or its 6♦ (a run), not both; "
         "the seat lays off the 6♦, which saves more", "classic", {"jokers": 2, "min_real_per_meld": 1, "lay_off_after_clean": "same"},
         [[5, D, 0], [0, 0, 0], [0, 1, 0], [1, C, 0], [2, C, 0], [3, C, 0], [4, C, 0]],
         [[[5, H, 0], [6, D, 0], [10, S, 0], [11, S, 0], [12, H, 0], [1, H, 0], [2, S, 0]]])
    return out


def card_point_vectors() -> list[dict]:
    out = []
    points = deck.card_points(80)
    for i in (0, 1, 39, 79):
        hash_input = deck.DOMAIN + b"card\x00" + struct.pack(">H", i)
        digest = hashlib.sha512(hash_input).digest()  # crypto_core_ristretto255_from_hash's input
        assert deck.GROUP.hash_to_point(hash_input) == points[i]
        out.append(vec("card_point", str(i), f"the point of card index {i}", {"index": i},
                       {"point": points[i].hex()},
                       {"hash_input": blob(hash_input), "sha512": blob(digest)}))
    return out


def key_share_vectors() -> list[dict]:
    g = deck.GROUP
    r = SeededRng("spec vectors: key share")
    ctx = deck.Context(r.token_bytes(16), 3, 1)
    kp = deck.KeyPair.generate(r)
    commit = kp.commitment(ctx)
    share = deck.make_key_share(ctx, kp, r)
    assert deck.verify_key_share(ctx, share, commit, kp.nonce) == kp.public
    y, e, z = share[:32], g.scalar_from_bytes(share[32:64]), g.scalar_from_bytes(share[64:])
    a = g.sub(g.mul_base(z), g.mul(e, y))
    commit_input = _ctx_hash_input(b"key-commit", ctx, y, kp.nonce)
    challenge_input = _ctx_hash_input(b"key-share", ctx, y, a)
    assert hashlib.sha512(commit_input).digest()[:32] == commit
    assert int.from_bytes(hashlib.sha512(challenge_input).digest(), "little") % deck.L == e
    inp = {"game": blob(ctx.game_id), "hand": ctx.hand, "seat": ctx.seat, "commit": blob(commit),
           "share": blob(share), "nonce": blob(kp.nonce)}
    trace = {"ctx": blob(ctx.encode()), "commit_input": blob(commit_input), "A": blob(a),
             "challenge_input": blob(challenge_input)}
    out = [vec("key_share", "ok", "seat 1's key share for hand 3: opens its commitment, Schnorr proof verifies",
               inp, {"result": "ok", "public": y.hex()}, trace)]
    out.append(vec("key_share", "other-seat", "the same key share checked as seat 2's: the proof is bound to "
                   "the author's seat (and the commitment too)", {**inp, "seat": 2},
                   {"result": "DeckError", "step": "key_share"}))
    return out


def dleq_vectors() -> list[dict]:
    g = deck.GROUP
    r = SeededRng("spec vectors: dleq")
    game = r.token_bytes(16)
    keys = [deck.KeyPair.generate(r) for _ in range(3)]
    joint = deck.joint_key([k.public for k in keys])
    slot, card = 17, 5
    m = deck.card_points(40)[card]
    rr = g.random_scalar(r)
    ct = deck.Ciphertext(g.mul_base(rr), g.add(m, g.mul(rr, joint)))
    ctx = deck.Context(game, 2, 1)
    share = deck.decryption_share(ctx, keys[1], ct, slot, r)
    d = deck.verify_decryption_share(ctx, keys[1].public, ct, slot, share)
    e, z = g.scalar_from_bytes(share[32:64]), g.scalar_from_bytes(share[64:])
    a = g.sub(g.mul_base(z), g.mul(e, keys[1].public))
    b = g.sub(g.mul(z, ct.c1), g.mul(e, d))
    challenge_input = _ctx_hash_input(b"dec-share", ctx, struct.pack(">I", slot), ct.c1, ct.c2, keys[1].public, d, a, b)
    assert int.from_bytes(hashlib.sha512(challenge_input).digest(), "little") % deck.L == e
    others = [deck.own_share(keys[i], ct) for i in (0, 2)]
    assert deck.open_card(ct, [d, *others], deck.card_points(40)) == card
    inp = {"game": blob(game), "hand": 2, "seat": 1, "slot": slot, "c1": blob(ct.c1), "c2": blob(ct.c2),
           "public": blob(keys[1].public), "share": blob(share)}
    trace = {"ctx": blob(ctx.encode()), "A": blob(a), "B": blob(b), "challenge_input": blob(challenge_input),
             "joint_key": blob(joint), "other_shares": [blob(x) for x in others], "card_index": card}
    out = [vec("dleq", "ok", "seat 1's decryption share of slot 17 (card index 5 under a 3-seat joint key)",
               inp, {"result": "ok", "d": d.hex()}, trace)]
    out.append(vec("dleq", "other-slot", "the same share presented for slot 18: the proof binds the slot",
                   {**inp, "slot": 18}, {"result": "DeckError", "step": "share"}))
    bad_e = bytearray(share)
    bad_e[32] ^= 1
    out.append(vec("dleq", "bad-challenge", "the share with one bit of e flipped",
                   {**inp, "share": blob(bytes(bad_e))}, {"result": "DeckError", "step": "share"}))
    return out


# --- lobby and mesh bytes (protocol version 2: frame payloads inside TLS 1.3) -----------------------


def cert_der(identity: Identity) -> bytes:
    """An identity's self-signed certificate (DER), as its TLS server presents it."""
    import ssl

    return ssl.PEM_cert_to_DER_cert(identity.certificate.decode("ascii"))


CANDIDATES = ["203.0.113.7:7301", "192.168.1.11:7301"]  # the joiner's: advertised, then private


def lobby_vectors() -> list[dict]:
    """One joiner sits down at a two-seat table: the real host_lobby and join_lobby over TLS on
    loopback, the host's challenge from a seeded stream; every frame payload either side sends
    inside TLS is recorded in order (the TLS records themselves are RFC 8446's, not ours)."""
    import trio

    from p2p_chinchon.net import framing, lobby as lob, node as nd, tls

    r = SeededRng("spec vectors: lobby")
    host_id, joiner_id = Identity.generate(r), Identity.generate(r)
    other_host = Identity.generate(r)  # another table's host: its certificate for the replay vector
    rules = make_rules("classic")
    host = tbl.Table.create(host_id, SeededRng("spec vectors: host table"), name="Mesa de Ana", rules=rules,
                            max_seats=2, addr="192.168.1.10:7300")
    host.lobby.set_host_name("Ana")
    log: list[tuple[str, bytes]] = []
    real_send, real_serve = framing.Link.send, lob.serve_lobby

    async def send(self: Any, payload: bytes) -> None:
        # the lobby's links are TLS streams: the server side is the host
        log.append(("host" if self.stream.server_side else "joiner", bytes(payload)))
        await real_send(self, payload)

    seen: list[tuple[bytes, bytes]] = []

    async def run() -> tuple[bytes, bytes]:
        listeners = await trio.open_tcp_listeners(0, host="127.0.0.1")
        port = listeners[0].socket.getsockname()[1]

        def check(offer: bytes, key: bytes) -> None:
            seen.append((offer, key))
            tbl.Table.joining(joiner_id, SeededRng("j"), offer)

        async with trio.open_nursery() as nursery:
            nursery.start_soon(functools.partial(nd.host_lobby, host, listeners, seats=2))
            got = await nd.join_lobby(joiner_id, "127.0.0.1", port, name="Beto", listen_port=7301,
                                      candidates=CANDIDATES, check_offer=check,
                                      expect_fingerprint=fingerprint(host_id.public_bytes))
        return got

    challenges = SeededRng("spec vectors: lobby challenges")
    framing.Link.send = send  # type: ignore[method-assign]
    lob.serve_lobby = functools.partial(real_serve, rng=challenges)
    try:
        offer, seating = trio.run(run)
    finally:
        framing.Link.send, lob.serve_lobby = real_send, real_serve  # type: ignore[method-assign]
    assert [who for who, _ in log] == ["host", "joiner", "host", "joiner", "host", "host"], log
    challenge, join, offer_msg, sit, seat_msg, seating_msg = (data for _, data in log)
    assert msgpack.unpackb(offer_msg) == {"offer": offer} and msgpack.unpackb(seating_msg) == {"seating": seating}
    host_der = cert_der(host_id)
    cert = tls.cert_fingerprint(host_der)
    assert cert == tls.server_context(host_id)[1] and seen == [(offer, host_id.public_bytes)]
    req = msgpack.unpackb(join)
    assert req["v"] == 3 and len(challenge) == 32 and req["addrs"] == CANDIDATES
    signed = (b"p2p-chinchon/join/v3\x00" + packb([req["name"], req["key"], req["addr"], req["addrs"]]) + challenge
              + hashlib.sha256(host_der).digest())
    assert signed == lob.JoinRequest.signed_bytes(req["name"], req["key"], req["addr"], req["addrs"], challenge, cert)
    joiner_id.private_key.public_key().verify(req["sig"], signed)
    seated = wire.decode_envelope(seating).body["players"]
    assert seated[1]["addr"] == "127.0.0.1:7301" and seated[1]["addrs"] == CANDIDATES and sit == b"sit"
    inp = {"host_key": blob(host_id.public_bytes), "host_certificate": blob(host_der), "cert_hash": cert.hex(),
           "messages": [{"from": who, "payload": blob(data)} for who, data in log]}
    verdict = {"result": "ok", "name": req["name"], "key": req["key"].hex(), "addr": req["addr"],
               "seat": msgpack.unpackb(seat_msg)["seat"], "offer_hash": hashlib.sha256(offer).hexdigest(),
               "seated_addr": seated[1]["addr"], "seated_addrs": seated[1]["addrs"]}
    out = [vec("lobby", "join", "inside TLS (the host is the server and presents host_certificate): the host's "
               "32-byte challenge, the joiner's v3 join request (mesh listener on port 7301, two candidate "
               "addresses: an advertised one, then a private one) signed over the challenge and "
               "SHA-256(host_certificate), {offer}, sit, {seat}, {seating}; the host, which sees the joiner from "
               "127.0.0.1, writes 127.0.0.1:7301 as its addr and the candidates, in order, as its addrs", inp, verdict,
               {"join_signed_bytes": blob(signed)})]
    forged = msgpack.unpackb(join)
    forged["addr"] = "0.0.0.0:7302"
    bad = dict(inp, messages=[log_entry(log[0]), {"from": "joiner", "payload": blob(packb(forged))}])
    out.append(vec("lobby", "bad-join-signature", "a join request whose addr was changed after signing: the host "
                   "closes the link without an answer", bad, {"result": "BadJoinRequest"}))
    replay = dict(inp, messages=[{"from": "host", "payload": blob(challenges.token_bytes(32))}, log_entry(log[1])])
    out.append(vec("lobby", "replayed-join", "the recorded join request replayed on a new connection to the same "
                   "host, which sent another challenge: the signature covers the first challenge only",
                   replay, {"result": "BadJoinRequest"}))
    other_der = cert_der(other_host)
    relayed = dict(inp, host_key=blob(other_host.public_bytes), host_certificate=blob(other_der),
                   cert_hash=tls.cert_fingerprint(other_der).hex(), messages=[log_entry(log[0]), log_entry(log[1])])
    out.append(vec("lobby", "other-certificate", "the join request relayed, with the same challenge, to another "
                   "host (another certificate): the signature covers the first host's certificate hash",
                   relayed, {"result": "BadJoinRequest"}))
    return out


def log_entry(entry: tuple[str, bytes]) -> dict:
    return {"from": entry[0], "payload": blob(entry[1])}


def mesh_vectors() -> list[dict]:
    """Seat 0 dials seat 2: the real dial_handshake and accept_handshake over a memory stream
    pair standing for the TLS channel (the acceptor is the TLS server: its certificate's hash is
    what both signatures cover), nonces from a seeded stream; the frames each side wrote inside
    TLS, length prefixes included."""
    import trio
    import trio.testing

    from p2p_chinchon.net import mesh, tls
    from p2p_chinchon.net.framing import FrameReader

    r = SeededRng("spec vectors: mesh")
    ids = [Identity.generate(r) for _ in range(3)]
    game = r.token_bytes(16)
    acceptor_der = cert_der(ids[2])
    cert = tls.cert_fingerprint(acceptor_der)
    assert cert == tls.server_context(ids[2])[1]
    wrote: dict[str, bytearray] = {"dialler": bytearray(), "acceptor": bytearray()}

    class Recording(trio.abc.Stream):
        def __init__(self, inner: Any, who: str) -> None:
            self.inner, self.who = inner, who

        async def send_all(self, data: bytes | bytearray | memoryview) -> None:
            wrote[self.who] += data
            await self.inner.send_all(data)

        async def wait_send_all_might_not_block(self) -> None:
            await self.inner.wait_send_all_might_not_block()

        async def receive_some(self, max_bytes: int | None = None) -> bytes:
            return await self.inner.receive_some(max_bytes)

        async def aclose(self) -> None:
            await self.inner.aclose()

    async def run() -> int:
        a, b = trio.testing.memory_stream_pair()
        da, ab = Recording(a, "dialler"), Recording(b, "acceptor")
        pub = [i.private_key.public_key() for i in ids]
        result: list[int] = []

        async def acceptor() -> None:
            result.append(await mesh.accept_handshake(ab, FrameReader(ab), game_id=game, seat=2,
                                                      sign=ids[2].private_key.sign, keys={0: pub[0], 1: pub[1]},
                                                      cert=cert))

        async with trio.open_nursery() as nursery:
            nursery.start_soon(acceptor)
            await mesh.dial_handshake(da, FrameReader(da), game_id=game, seat=0, peer_seat=2,
                                      sign=ids[0].private_key.sign, peer_key=pub[2], cert=cert)
        return result[0]

    # mesh's own reference to the secrets module, replaced for byte-reproducible nonces
    real_secrets = mesh.secrets  # type: ignore[attr-defined]
    mesh.secrets = SeededRng("spec vectors: mesh nonces")  # type: ignore[attr-defined,assignment]
    try:
        peer = trio.run(run)
    finally:
        mesh.secrets = real_secrets  # type: ignore[attr-defined]
    assert peer == 0
    d2a, a2d = bytes(wrote["dialler"]), bytes(wrote["acceptor"])
    n_d, n_a = d2a[4 + 29:4 + 61], a2d[4 + 29:4 + 61]

    def auth(signer: int, verifier: int, x: bytes, y: bytes, c: bytes) -> bytes:
        return b"p2p-chinchon/mesh-auth/v2\x00" + game + struct.pack(">HH", signer, verifier) + x + y + c

    auth_acceptor, auth_dialler = auth(2, 0, n_a, n_d, cert), auth(0, 2, n_d, n_a, cert)
    ids[2].private_key.public_key().verify(a2d[4 + 61 + 4:4 + 61 + 4 + 64], auth_acceptor)
    ids[0].private_key.public_key().verify(d2a[4 + 61 + 4:], auth_dialler)
    inp = {"game": blob(game), "dialler": 0, "acceptor": 2,
           "keys": [blob(i.public_bytes) for i in ids],
           "acceptor_certificate": blob(acceptor_der), "cert_hash": cert.hex(),
           "dialler_wrote": blob(d2a), "acceptor_wrote": blob(a2d)}
    trace = {"dialler_nonce": blob(n_d), "acceptor_nonce": blob(n_a), "acceptor_signs": blob(auth_acceptor),
             "dialler_signs": blob(auth_dialler)}
    out = [vec("mesh", "handshake", "inside TLS, where seat 2 (the acceptor) is the server and presents "
               "acceptor_certificate: seat 0 dials seat 2: HELLO; HELLO and signature; signature; ok (the frames "
               "each side wrote inside TLS, 4-byte length prefixes included); both signatures cover the "
               "certificate's SHA-256", inp, {"result": "ok", "dialler": 0, "acceptor": 2}, trace)]
    # a reflected signature: the dialler sends back the acceptor's own signature
    reflected = d2a[: 4 + 61] + a2d[4 + 61:4 + 61 + 4 + 64]
    out.append(vec("mesh", "reflected-signature", "the dialler answers with the acceptor's own signature: it "
                   "covers (2, 0, n_a, n_d), not (0, 2, n_d, n_a), and does not verify under seat 0's key",
                   {**inp, "dialler_wrote": blob(reflected)}, {"result": "HandshakeError"}))
    # a relay: the dialler's TLS server was someone else (seat 1's certificate), so its AUTH names that one
    relay_cert = tls.cert_fingerprint(cert_der(ids[1]))
    relay_auth = auth(0, 2, n_d, n_a, relay_cert)
    relayed = d2a[: 4 + 61] + struct.pack(">I", 64) + ids[0].private_key.sign(relay_auth)
    out.append(vec("mesh", "other-certificate", "the dialler's AUTH names another certificate (seat 1's, as a "
                   "relay in the middle would present): the acceptor checks it against its own certificate's "
                   "hash and refuses", {**inp, "dialler_wrote": blob(relayed)}, {"result": "HandshakeError"},
                   {"dialler_signs": blob(relay_auth)}))
    return out


P25519 = 2**255 - 19
ED_D = -121665 * pow(121666, -1, P25519) % P25519
ORDER_8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")  # RFC 8032 torsion


def _ed_decode(key: bytes) -> tuple[int, int]:
    """An Edwards25519 point from its 32-byte encoding (RFC 8032 5.1.3); AssertionError if none."""
    y = int.from_bytes(key, "little") & ((1 << 255) - 1)
    x2 = (y * y - 1) * pow(ED_D * y * y + 1, -1, P25519) % P25519
    x = pow(x2, (P25519 + 3) // 8, P25519)
    if (x * x - x2) % P25519:
        x = x * pow(2, (P25519 - 1) // 4, P25519) % P25519
    assert (x * x - x2) % P25519 == 0
    return (P25519 - x if x & 1 != key[31] >> 7 else x), y


def _ed_add_encoded(a: bytes, b: bytes) -> bytes:
    """The encoding of the sum of two encoded Edwards25519 points (affine formulas)."""
    (x1, y1), (x2, y2) = _ed_decode(a), _ed_decode(b)
    t = ED_D * x1 * x2 * y1 * y2 % P25519
    x = (x1 * y2 + x2 * y1) * pow(1 + t, -1, P25519) % P25519
    y = (y1 * y2 + x1 * x2) * pow(1 - t, -1, P25519) % P25519
    return (y | (x & 1) << 255).to_bytes(32, "little")


def relay_vectors() -> list[dict]:
    """Code-word tables (docs/protocol.md "Code words and the transit relay"): the mesh relay
    token of a pair of seats from their identity keys, the lobby token from the wormhole key,
    the handshake lines, and a peer key with no X25519 form refused."""
    from p2p_chinchon.net import relay, rendezvous as rz

    r = SeededRng("spec vectors: relay")
    ids = [Identity.generate(r) for _ in range(3)]
    game = r.token_bytes(16)
    out = []
    a, b_ = 2, 0
    shared = relay.pair_secret(ids[a], ids[b_].public_bytes)
    assert shared == relay.pair_secret(ids[b_], ids[a].public_bytes)
    token = rz.mesh_token(shared, game, a, b_)
    inp = {"game": blob(game), "seat": a, "seed": blob(ids[a].seed()), "key": blob(ids[a].public_bytes),
           "peer": b_, "peer_key": blob(ids[b_].public_bytes)}
    out.append(vec("relay", "mesh-token", "seat 2 (its Ed25519 seed given) and seat 0 of a game: both identity "
                   "keys mapped to Curve25519, their X25519 secret, the pair's HKDF token and each side's "
                   "handshake line", inp,
                   {"result": "ok", "x25519": shared.hex(), "token": token,
                    "line": rz.relay_request(token, rz.relay_side(a)).decode(),
                    "peer_line": rz.relay_request(token, rz.relay_side(b_)).decode()},
                   {"hkdf_info": blob(rz.MESH_INFO + struct.pack(">HH", b_, a))}))
    low = bytes([1]) + bytes(31)  # the Ed25519 identity point: small order, no usable X25519 key
    out.append(vec("relay", "low-order-key", "a peer 'identity key' of small order (the neutral point): no "
                   "shared secret is derived, the link is refused", {**inp, "peer_key": blob(low)},
                   {"result": "refused"}))
    mixed = _ed_add_encoded(ids[b_].public_bytes, ORDER_8)
    out.append(vec("relay", "mixed-order-key", "seat 0's key plus a point of order 8: a point of the curve, not "
                   "of small order, but outside the prime-order subgroup: no X25519 form, refused",
                   {**inp, "peer_key": blob(mixed)}, {"result": "refused"}))
    out.append(vec("relay", "not-a-point-key", "a peer key whose y (2) has no x on the curve: refused",
                   {**inp, "peer_key": blob((2).to_bytes(32, "little"))}, {"result": "refused"}))
    odd = (P25519 + 9).to_bytes(32, "little")  # y = 9 written as 9 + p: a point of order 2L
    odd_shared = relay.pair_secret(ids[a], odd)
    odd_token = rz.mesh_token(odd_shared, game, a, b_)
    out.append(vec("relay", "non-canonical-key", "a peer key whose y is written as 9 + p (not reduced): read mod "
                   "p, as libsodium does, it is a point of order 2L (L times it is (0, -1)), which libsodium "
                   "maps, and it has a token",
                   {**inp, "peer_key": blob(odd)},
                   {"result": "ok", "x25519": odd_shared.hex(), "token": odd_token,
                    "line": rz.relay_request(odd_token, rz.relay_side(a)).decode(),
                    "peer_line": rz.relay_request(odd_token, rz.relay_side(b_)).decode()}))
    key = r.token_bytes(32)
    ltok = rz.lobby_token(key)
    out.append(vec("relay", "lobby-token", "a code-word lobby link: the token is the hex of the wormhole's "
                   "derived key; the host's and the joiner's handshake lines", {"key": blob(key)},
                   {"result": "ok", "token": ltok,
                    "host_line": rz.relay_request(ltok, rz.relay_side(0, lobby_host=True)).decode(),
                    "joiner_line": rz.relay_request(ltok, rz.relay_side(1)).decode()}))
    return out


# --------------------------------------------------------------------------------------------------


def build() -> list[dict]:
    return (rules_vectors() + seating_vectors() + toss_vectors() + hand_digest_vectors() + card_point_vectors()
            + key_share_vectors() + dleq_vectors() + lobby_vectors() + mesh_vectors() + showdown_vectors()
            + relay_vectors())


def owns(path: Path) -> bool:
    return path.name.startswith(tuple(f"{layer.replace('_', '-')}-" for layer in LAYERS))


def all_files() -> dict[Path, str]:
    """Every vector file this script writes: path -> text (deterministic)."""
    files = {}
    for v in build():
        assert v["layer"] in LAYERS
        files[OUT / f"{v['name']}.json"] = json.dumps(v, indent=2, ensure_ascii=False) + "\n"
    return files


def main(argv: list[str]) -> int:
    return write_or_check(all_files(), owns, argv)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
