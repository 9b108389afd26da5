"""An independent bot seat for p2p-chinchon, written from docs/protocol.md, docs/rules.md and
protocol/ alone (it imports nothing of p2p_chinchon).

    python protocol/conformance/seat.py play --connect 127.0.0.1:PORT --transcript FILE
    python protocol/conformance/seat.py audit FILE
    python protocol/conformance/seat.py vectors
"""
from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey  # noqa: E402

import crypto as cr  # noqa: E402
import links  # noqa: E402
import table as tb  # noqa: E402
import wire  # noqa: E402


def log(msg: str) -> None:
    print(f"[seat {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


class Seat:
    def __init__(self, args):
        self.args = args
        self.sk = Ed25519PrivateKey.generate()
        self.key = links.pub_bytes(self.sk)
        self.cert = links.certificate(self.sk)
        self.links: dict[int, asyncio.StreamWriter] = {}
        self.inbox: asyncio.Queue = asyncio.Queue()
        self.pending: dict[int, bytes] = {}
        self.done = asyncio.Event()
        self.error: str | None = None
        self.tfile = open(args.transcript, "wb")
        # "Removal": votes held per (seq, prev, seat X) -> voter -> frame; our own positions;
        # a mid-game `leave` kept (not chained) per seat; when each peer was last heard
        self.votes: dict[tuple, dict[int, bytes]] = {}
        self.my_votes: set[tuple] = set()
        self.leaves: dict[int, bytes] = {}
        self.heard: dict[int, float] = {}

    # -- transcript ------------------------------------------------------------------------
    def record(self, e: wire.Envelope) -> None:
        self.tfile.write(e.frame)
        self.tfile.flush()
        os.fsync(self.tfile.fileno())

    # -- links -----------------------------------------------------------------------------
    async def send(self, seat: int, payload: bytes) -> None:
        w = self.links.get(seat)
        if w is None:
            return
        try:
            w.write(links.frame(payload))
            await w.drain()
        except (ConnectionError, OSError) as e:
            log(f"link to seat {seat}: {e}")
            if self.links.get(seat) is w:
                del self.links[seat]

    async def broadcast(self, e: wire.Envelope) -> None:
        for s in list(self.links):
            await self.send(s, b"E" + e.frame)

    async def serve_link(self, peer: int, r, w) -> None:
        old = self.links.get(peer)
        self.links[peer] = w
        if old is not None:
            old.close()
        log(f"mesh link with seat {peer} up")
        self.heard[peer] = time.monotonic()
        await self.send(peer, b"S" + len(self.t.chain).to_bytes(4, "big"))
        for key in self.my_votes:                      # our vote again to a seat whose link comes up
            if key[0] == len(self.t.chain) and key[1] == self.t.head:
                await self.send(peer, b"E" + self.votes[key][self.me])
        answered = set()
        try:
            while True:
                p = await links.read_frame(r)
                self.heard[peer] = time.monotonic()
                if not p:
                    continue
                if p[:1] == b"E":
                    await self.inbox.put(p[1:])
                elif p[:1] == b"S" and len(p) == 5:
                    idx = int.from_bytes(p[1:], "big")
                    if idx in answered:
                        continue
                    answered.add(idx)
                    for e in self.t.chain[idx:]:
                        await self.send(peer, b"E" + e.frame)
        except (asyncio.IncompleteReadError, ConnectionError, OSError, links.LinkError) as ex:
            log(f"mesh link with seat {peer} closed ({type(ex).__name__})")
        finally:
            if self.links.get(peer) is w:
                del self.links[peer]
            w.close()

    async def on_accept(self, r, w) -> None:
        try:
            peer = await links.accept_handshake(r, w, self.t.game, self.me, self.keys, self.sk, self.cert)
        except Exception as ex:  # noqa: BLE001
            log(f"refused a mesh handshake: {ex!r}")
            w.close()
            return
        await self.serve_link(peer, r, w)

    async def dial(self, j: int) -> None:
        host, port = self.t.players[j]["addr"].rsplit(":", 1)
        host = host.strip("[]")
        delay = 0.05
        while not self.done.is_set():
            try:
                r, w = await asyncio.wait_for(asyncio.open_connection(
                    host, int(port), ssl=links.client_context(), server_hostname=host), 10)
                await links.dial_handshake(r, w, self.t.game, self.me, j, self.keys, self.sk)
                delay = 0.05
                await self.serve_link(j, r, w)
            except Exception as ex:  # noqa: BLE001
                log(f"dial seat {j}: {ex!r}")
            await asyncio.sleep(delay)
            delay = min(2.0, delay * 2)

    async def heartbeat(self) -> None:
        while not self.done.is_set():
            for s in list(self.links):
                await self.send(s, b"H")
            await self.inbox.put(None)              # wakes the game loop: votes, removals, co-signing
            await asyncio.sleep(1)

    # -- the game --------------------------------------------------------------------------
    async def run(self) -> int:
        a = self.args
        with tempfile.TemporaryDirectory(prefix="conform-seat-") as work:
            ctx = links.server_context(self.sk, work)  # the key files are read here, then go
        server = await asyncio.start_server(self.on_accept, "127.0.0.1", 0, ssl=ctx)
        port = server.sockets[0].getsockname()[1]
        host, hport = a.connect.rsplit(":", 1)
        offer, seating, seat = await links.join(host, int(hport), self.sk, a.name, f"127.0.0.1:{port}", log)
        self.me = seat
        self.t = tb.Table(me=seat)
        self.t.exp = None
        for f in (offer, seating):
            e = wire.decode(f)
            self.t.apply(e)
            self.record(e)
        self.keys = [p["key"] for p in self.t.players]
        if self.keys[seat] != self.key:
            raise links.LinkError("the seating does not give us the seat the host said")
        log(f"seating: {[p['name'] for p in self.t.players]}, we are seat {seat}")
        self.toss_nonce = secrets.token_bytes(32)
        self.started = time.monotonic()             # a seat never heard is away from now on
        tasks = [asyncio.create_task(self.heartbeat())]
        tasks += [asyncio.create_task(self.dial(j)) for j in range(seat + 1, self.t.N)]
        try:
            await asyncio.wait_for(self.play(), a.timeout)
        except TimeoutError:
            self.error = f"timed out at envelope {len(self.t.chain)}, waiting for {self.t.exp}"
        # let the peers fetch what they miss, then close
        await asyncio.sleep(2.0)
        self.done.set()
        for t in tasks:
            t.cancel()
        server.close()
        for w in list(self.links.values()):
            w.close()
        self.tfile.close()
        if self.error:
            log(f"FAILED: {self.error}")
            return 1
        log(f"game over: winner seat {self.t.winner}, totals {self.t.totals}, {len(self.t.chain)} envelopes")
        return 0

    async def play(self) -> None:
        await self.act()
        while not self.t.over:
            f = await self.inbox.get()
            if f is None:                            # the clock: vote, start or co-sign a removal
                await self.consider_removal()
                await self.act()
                continue
            try:
                e = wire.decode(f)
            except wire.WireError as ex:
                log(f"dropped a frame that does not decode: {ex.code}")
                continue
            if e.game != self.t.game:
                continue
            if e.seat != self.me and (e.seat in getattr(self.t, "removed", {}) or e.seat in getattr(self.t, "left", ())
                                      or e.seat in self.leaves and e.seq >= wire.decode(self.leaves[e.seat]).seq):
                log(f"dropped a {e.kind} of seat {e.seat} at {e.seq}: that seat is out for good")
                continue                             # removed, or gone home: nothing it signs counts
            if e.kind == "away":                     # never chained
                await self.on_vote(e, f)
                continue
            if e.kind == "leave" and self.leave_unchained(e):
                continue
            n = len(self.t.chain)
            if e.seq < n:
                if self.t.chain[e.seq].frame != f and wire.verify_sig(e, self.keys[e.seat]) \
                        and self.t.chain[e.seq].seat == e.seat:
                    await self.fault(e.seat, "equivocation", "two signed envelopes for one seq",
                                     [self.t.chain[e.seq].frame, f])
                    return
                continue
            if e.seq > n:
                if e.seq - n <= 512 and len(self.pending) < 512:
                    self.pending[e.seq] = f
                continue
            await self.accept(e)
            while not self.t.over and len(self.t.chain) in self.pending:
                await self.accept(wire.decode(self.pending.pop(len(self.t.chain))))
            await self.act()
            drop = self.args.drop_links_at
            if drop and len(self.t.chain) >= drop[0]:
                drop.pop(0)
                log(f"probe: dropping every mesh link at envelope {len(self.t.chain)}")
                for w in list(self.links.values()):
                    w.transport.abort()

    async def accept(self, e: wire.Envelope) -> None:
        if e.seat >= self.t.N or not wire.verify_sig(e, self.keys[e.seat]):
            log(f"dropped envelope {e.seq}: bad signature")
            return
        try:
            self.t.apply(e)
        except tb.Violation as v:
            log(f"VIOLATION by seat {e.seat} at {e.seq} ({e.kind}): {v.rule}: {v.reason}")
            await self.fault(e.seat if v.seat < 0 else v.seat, v.rule, v.reason[:250], [e.frame])
            return
        self.record(e)
        if e.kind in ("fault", "leave"):
            self.error = f"the table stopped: {e.kind} from seat {e.seat}: {e.body}"
            log(self.error)

    async def fault(self, accused, rule, reason, evidence) -> None:
        self.error = f"we accuse seat {accused}: {rule}: {reason}"
        e = wire.make(self.sk, self.t.game, len(self.t.chain), self.me, self.t.head, "fault",
                      {"accused": accused, "rule": rule, "reason": reason, "evidence": evidence})
        self.t.apply(e)
        self.record(e)
        await self.broadcast(e)

    async def wait_fault(self) -> None:
        """after a probe cheat: record the peers' envelopes that follow (their fault) raw"""
        try:
            while True:
                f = await asyncio.wait_for(self.inbox.get(), 30)
                if f is None:
                    continue
                e = wire.decode(f)
                log(f"after our cheat: {e.kind} from seat {e.seat}: "
                    f"{ {k: v for k, v in e.body.items() if k != 'evidence'} }")
                if e.kind == "fault":
                    self.t.apply(e)
                    self.record(e)
                    self.fault_seen = e
                    break
        except TimeoutError:
            log("no fault within 30 s")
        self.t.over = True

    async def act(self) -> None:
        while not self.t.over and self.t.exp and self.t.exp[0] == self.me:
            d = self.decide()
            if d is None:                            # a removal we do not co-sign (yet): wait
                break
            kind, body = d
            e = wire.make(self.sk, self.t.game, len(self.t.chain), self.me, self.t.head, kind, body)
            try:
                self.t.apply(e)      # our own move goes through the same checks
            except tb.Violation as v:
                log(f"probe: our own table refuses our {kind} ({v.rule}); sending it anyway")
                await self.broadcast(e)      # not recorded: a refused envelope never enters the chain
                self.error = f"we broke a rule on purpose: {v.rule}"
                await self.wait_fault()
                return
            self.record(e)
            await self.broadcast(e)
            if kind in ("draw", "discard", "close", "game_end"):
                log(f"{kind} {body.get('source', body.get('slot', body.get('winner', '')))}")
        if self.t.over and getattr(self.t, "complete", False):
            self.done.set()

    # -- removal ("Removal (a seat gone for good)": the vote, when a node votes and signs) -------
    def away_for(self, s: int) -> float:
        """seconds seat s has been away from us (0 while it is heard: heartbeats every second)"""
        now = time.monotonic()
        last = self.heard.get(s, getattr(self, "started", now))
        if s in self.links and now - last < 3.5:
            return 0.0
        return now - last

    def away_long(self, s: int) -> bool:
        return self.away_for(s) >= max(self.t.rules.get("rejoin_wait", 120), 3.5)

    def in_play(self) -> bool:
        t = self.t
        return not t.over and t.exp is not None and t.phase not in ("offer", "seating", "agree", "toss")

    async def on_vote(self, e: wire.Envelope, f: bytes) -> None:
        """keep a validly signed `away` per (seq, prev, seat) and pass a new one on once"""
        t = self.t
        if not hasattr(t, "N") or e.seat >= t.N or not wire.verify_sig(e, self.keys[e.seat]) \
                or e.body["seat"] == e.seat or e.body["seat"] >= t.N:
            log(f"dropped an away vote of seat {e.seat}: bad signature or about itself")
            return
        n = len(t.chain)
        if e.seq < n or e.seq > n + 64:             # moot (behind our head), or too far ahead
            return
        key = (e.seq, e.prev, e.body["seat"])
        held = self.votes.setdefault(key, {})
        if e.seat in held:
            return
        held[e.seat] = f
        for s in list(self.links):
            if s != e.seat:
                await self.send(s, b"E" + f)
        if e.seq == n and e.prev == t.head:
            await self.consider_removal()
            await self.act()

    def leave_unchained(self, e: wire.Envelope) -> bool:
        """a mid-game `leave` of a seat the game goes on without is kept, not chained"""
        t = self.t
        if not self.in_play() or e.seat >= t.N or e.seat == self.me or not t.in_game[e.seat] \
                or e.seat in t.removed or not wire.verify_sig(e, self.keys[e.seat]):
            return False
        signers, _ = t.removal_signers(e.seat)
        if len(signers) < 2:
            return False
        if e.seat not in self.leaves:
            log(f"seat {e.seat} left: keeping its leave for its removal")
            self.leaves[e.seat] = e.frame
        return True

    async def consider_removal(self) -> None:
        """vote for the seat the table waits for when it has been away for rejoin_wait; start
        its removal when we hold a majority's votes and every signer before us is away too
        (or with its `leave` when we are its first present signer)"""
        t = self.t
        if not self.in_play():
            return
        assert t.exp is not None                     # in_play()
        X = t.exp[0]
        if X == self.me:
            return
        signers, n = t.removal_signers(X)
        if self.me not in signers or len(signers) < 2:
            return
        before = [s for s in signers if s < self.me]
        if X in self.leaves:
            if any(not self.away_for(s) for s in before):
                return                               # an earlier present signer starts it
            await self.start_removal(X, "left", [self.leaves[X]])
            return
        if not self.away_long(X) or 2 * len(signers) <= n:
            return                                   # not away long enough, or no majority: wait
        key = (len(t.chain), t.head, X)
        held = self.votes.setdefault(key, {})
        if self.me not in held:
            v = wire.make(self.sk, t.game, len(t.chain), self.me, t.head, "away", {"seat": X, "hand": t.hand_no})
            held[self.me] = v.frame
            self.my_votes.add(key)
            log(f"voting seat {X} away at envelope {len(t.chain)}")
            await self.broadcast(v)
        voters = [s for s in signers if s in held]
        if 2 * len(voters) > n and all(self.away_long(s) for s in before):
            voters = [self.me] + [s for s in voters if s != self.me]
            await self.start_removal(X, "absent", [held[s] for s in voters[:8]])

    async def start_removal(self, X: int, reason: str, proof: list[bytes]) -> None:
        t = self.t
        e = wire.make(self.sk, t.game, len(t.chain), self.me, t.head, "remove",
                      {"seat": X, "hand": t.hand_no, "reason": reason, "proof": proof})
        try:
            t.apply(e)
        except tb.Violation as v:
            log(f"our own table refuses our remove of seat {X}: {v.reason}")
            return
        log(f"removing seat {X} ({reason}, {len(proof)} proof frames)")
        self.record(e)
        await self.broadcast(e)

    # -- decisions ---------------------------------------------------------------------------
    def secret(self) -> int:
        """our secret of this hand, chosen at our key_commit"""
        assert self.t.h.x is not None
        return self.t.h.x

    def share(self, slot: int) -> bytes:
        h = self.t.h
        c1, c2 = h.slots[slot]
        return cr.dec_share(h.ctx[self.me], slot, c1, c2, self.secret(), h.Y[self.me])

    def decide(self):
        t = self.t
        assert t.exp is not None                     # asked only while the game goes on
        kinds = t.exp[1]
        me = self.me
        if "agree" in kinds:
            return "agree", {"rules_hash": t.rh, "seating_hash": t.sh,
                             "toss_commit": wire.toss_commit(t.game, me, self.toss_nonce)}
        if "toss" in kinds:
            return "toss", {"nonce": self.toss_nonce}
        if kinds == {"remove"}:                      # co-sign the removal being signed, or wait
            top = t.removing[-1]
            X = top["X"]
            if top["reason"] != "left" and not (self.away_long(X) or X in self.leaves):
                return None                          # a `left` removal: "the other signers sign at once"
            log(f"co-signing the removal of seat {X} ({top['reason']})")
            return "remove", {"seat": X, "hand": t.hand_no, "reason": top["reason"], "proof": []}
        if "game_end" in kinds:
            return "game_end", {"winner": 255 if t.winner is None else t.winner, "digest": t.head}
        h = t.h
        hand = t.hand_no
        if "key_commit" in kinds:
            h.x = cr.rand_scalar()
            h.knonce = secrets.token_bytes(32)
            return "key_commit", {"hand": hand, "commit": cr.key_commit(h.ctx[me], cr.base(h.x), h.knonce)}
        if "key_share" in kinds:
            return "key_share", {"hand": hand, "share": cr.key_share(h.ctx[me], self.secret()), "nonce": h.knonce}
        if "shuffle" in kinds:
            if t.rules["shuffle_proof"] == "terelius-wikstrom":
                D2, proof = cr.shuffle_prove(h.ctx[me], h.round, h.joint, h.shuffle_in)
            else:
                D2, proof = cr.cc_prove(h.ctx[me], h.round, t.k, h.joint, h.shuffle_in)
            return "shuffle", {"hand": hand, "round": h.round, "deck": cr.enc_deck(D2), "proof": proof}
        if "deal_shares" in kinds:
            want = sorted([k for s in h.A if s != me for k in h.hands[s]] + [h.upcard])
            return "deal_shares", {"hand": hand, "shares": [self.share(k) for k in want]}
        if "draw_share" in kinds:
            return "draw_share", {"hand": hand, "slot": h.draw_slot, "share": self.share(h.draw_slot)}
        if "draw" in kinds:
            return "draw", {"hand": hand, "source": self.draw_source()}
        if "discard" in kinds:
            if self.args.cheat == "discard-not-held":
                self.args.cheat = None
                k = h.stock[0]          # a slot we do not hold (the next stock card)
                log(f"probe: discarding slot {k}, which we do not hold")
                return "discard", {"hand": hand, "slot": k, "share": self.share(k)}
            return self.play_card()
        if "show" in kinds:
            return "show", {"hand": hand, "shares": [{"slot": k, "share": self.share(k)} for k in self.order(h.hands[me])]}
        if "secret" in kinds:
            return "secret", {"hand": hand, "secret": cr.sc(self.secret())}
        if "hand_digest" in kinds:
            return "hand_digest", {"hand": hand, "digest": t.my_digest(), "totals": list(t.totals)}
        if "reenter" in kinds:
            return "reenter", {"hand": hand, "accept": True}
        raise RuntimeError(f"nothing to send for {kinds}")

    def draw_source(self) -> str:
        """take the top of the pile when it lowers our best deadwood, else the stock"""
        t, h, me = self.t, self.t.h, self.me
        E = t.engine
        if not h.pile or not h.stock:
            return "stock" if h.stock else "discard"
        mine = [E.deck[h.faces[k]] for k in h.hands[me]]
        top = E.deck[h.faces[h.pile[-1]]]
        now = E.best(mine)[0]
        after = min(E.best([c for c in mine + [top] if c is not x])[0] for x in mine)
        return "discard" if after < now else "stock"

    def order(self, slots):
        return list(reversed(slots)) if self.args.share_order == "reverse" else list(slots)

    def play_card(self):
        t, h, me = self.t, self.t.h, self.me
        E = t.engine
        slots = h.hands[me]
        card = {k: E.deck[h.faces[k]] for k in slots}
        may_close = not t.rules["first_round_ban"] or all(s in h.finished_turn for s in h.A)
        if may_close:
            best = None
            for fd in slots:
                kept = [k for k in slots if k != fd]
                try:
                    score, _ = E.close_result([card[k] for k in kept])
                except Exception:  # noqa: BLE001  (not a legal close)
                    continue
                if best is None or score < best[0]:
                    best = (score, fd, kept)
            if best is not None:
                _, fd, kept = best
                return "close", {"hand": t.hand_no, "slot": fd,
                                 "shares": [{"slot": k, "share": self.share(k)} for k in self.order(kept)]}
        choice = None
        for k in slots:
            rest = [card[j] for j in slots if j != k]
            key = (E.best(rest)[0], -E.value(card[k]))
            if choice is None or key < choice[0]:
                choice = (key, k)
        assert choice is not None                    # we hold cards: slots is not empty
        k = choice[1]
        return "discard", {"hand": t.hand_no, "slot": k, "share": self.share(k)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="conformance-seat")
    sub = p.add_subparsers(dest="cmd", required=True)
    pp = sub.add_parser("play", help="join a p2p-chinchon table by address and play one seat")
    pp.add_argument("--connect", required=True, help="HOST:PORT of the host's lobby")
    pp.add_argument("--name", default="Conformance")
    pp.add_argument("--transcript", required=True)
    pp.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole game")
    pp.add_argument("--drop-links-at", type=int, action="append", default=[],
                    help="probe: abort every mesh link once the chain reaches this length (repeatable)")
    pp.add_argument("--cheat", choices=["discard-not-held"],
                    help="probe: break one rule on purpose (the seat's own table is bypassed)")
    pp.add_argument("--share-order", choices=["hand", "reverse"], default="hand",
                    help="order of the shares of close and show (probe: the document allows any)")
    pa = sub.add_parser("audit", help="replay a transcript with this implementation")
    pa.add_argument("file")
    sub.add_parser("vectors", help="check the value vectors of protocol/vectors/")
    a = p.parse_args(argv)
    if a.cmd == "audit":
        with open(a.file, "rb") as f:
            ok, summary = tb.audit(tb.split_frames(f.read()))
        print(summary)
        return 0 if ok else 1
    if a.cmd == "vectors":
        import vectors
        return 1 if vectors.main() else 0
    return asyncio.run(Seat(a).run())


if __name__ == "__main__":
    sys.exit(main())
