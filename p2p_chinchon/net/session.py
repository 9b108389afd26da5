"""Host or join a table and play it to the end: lobby, (mDNS), seating, mesh, game.

These are the trio entry points behind ``host``, ``join`` and ``play``; the table logic is all
in the sans-I/O :class:`~p2p_chinchon.table.Table`.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any, Callable

import trio

from p2p_chinchon import table as tbl
from p2p_chinchon.identity import fingerprint
from p2p_chinchon.net import node as nd
from p2p_chinchon.net.lobby import format_addr

log = logging.getLogger(__name__)

CUT_AND_CHOOSE_MIN_ROUNDS = 64
"""Fewest cut-and-choose rounds a joiner accepts by default (issue 9): a shuffler forges a
k-round proof by grinding about 2^k Fiat-Shamir challenges."""


def weak_proofs(rules: Any, proof_rounds: int, min_proof_rounds: int | None = None) -> str | None:
    """Why a table's shuffle proofs are too weak to sit at, or None. The bar depends on the
    proof system the rules name (``rules.shuffle_proof``; cut-and-choose when absent): only
    cut-and-choose is measured in rounds, ``min_proof_rounds`` (default
    :data:`CUT_AND_CHOOSE_MIN_ROUNDS`) of them."""
    system = getattr(rules, "shuffle_proof", None) or "cut-and-choose"
    if system != "cut-and-choose":
        return None
    need = CUT_AND_CHOOSE_MIN_ROUNDS if min_proof_rounds is None else min_proof_rounds
    if proof_rounds < need:
        return (f"the table's cut-and-choose shuffle proofs use k = {proof_rounds} rounds; "
                f"this seat requires at least {need}")
    return None


async def host_game(
    *,
    identity: Any,
    rng: Any,
    rules: Any,
    seats: int,
    name: str,
    player_name: str,
    decide: nd.Decider | None,
    on_update: Callable[..., Any] | None = None,
    transcript_path: Path | None = None,
    timeouts: nd.Timeouts | None = None,
    proof_rounds: int | None = None,
    bind: str = "0.0.0.0",
    port: int = 0,
    advertise: bool = True,
    on_listening: Callable[[int], Any] | None = None,
    node_ready: Callable[[nd.Node], Any] | None = None,
    auto_agree: bool = True,
    table_ready: Callable[[tbl.Table], Any] | None = None,
    defer_proofs: bool = True,
    on_reject: Callable[[str], Any] | None = None,
    approve: Callable[[Any, str], Any] | None = None,
) -> nd.NodeResult:
    """Open a table, wait for ``seats`` players, then play. ``on_listening(port)`` is called
    once the lobby accepts joiners (``play`` starts its bot peers then). ``approve(request,
    source_ip) -> bool`` (async) asks the host's person before each joiner is seated (name
    and fingerprint); None seats the first comers (``--open``: bots, demos, tests)."""
    listeners = await trio.open_tcp_listeners(port, host=bind)
    lobby_port = listeners[0].socket.getsockname()[1]
    table = tbl.Table.create(
        identity, rng, name=name, rules=rules, max_seats=seats,
        addr=format_addr("127.0.0.1" if bind in ("127.0.0.1", "localhost") else bind, lobby_port),
        proof_rounds=proof_rounds, auto_agree=auto_agree, defer_proofs=defer_proofs,
    )
    table.set_host_name(player_name)
    if table_ready is not None:
        table_ready(table)
    if on_update is not None:
        on_update(table.view())

    async def lobby() -> None:
        def seated(t: tbl.Table, seat: int) -> None:
            t._log(f"{t.pending_players[seat].name} sat down ({len(t.pending_players)}/{seats})")
            if on_update is not None:
                on_update(t.view())
            if ad is not None:
                nursery.start_soon(ad.update, len(t.pending_players))

        await nd.host_lobby(table, listeners, seats=seats, on_seated=seated, approve=approve)

    ad = None
    async with trio.open_nursery() as nursery:
        if advertise:
            from p2p_chinchon.net import discovery

            info = discovery.TableAd(
                name=name, preset=_preset_name(rules), seats_taken=1, max_seats=seats,
                fingerprint=identity.fingerprint,
            )
            try:
                ad = await nursery.start(_advertise, discovery, info, lobby_port)
            except Exception as exc:  # mDNS is a convenience: --connect still works
                log.warning("could not advertise the table by mDNS: %s", exc)
                ad = None
        if on_listening is not None:
            on_listening(lobby_port)
        await lobby()
        nursery.cancel_scope.cancel()  # stop advertising: the table is full
    return await nd.run_seat(
        table, None, decide=decide, on_update=on_update, transcript_path=transcript_path,
        timeouts=timeouts, node_ready=node_ready, on_reject=on_reject,
    )


async def _advertise(discovery: Any, info: Any, port: int, task_status: Any = trio.TASK_STATUS_IGNORED) -> None:
    async with discovery.advertise(info, port) as ad:
        task_status.started(ad)
        await trio.sleep_forever()


def _preset_name(rules: Any) -> str:
    return getattr(rules, "preset", None) or getattr(rules, "name", None) or "custom"


async def join_game(
    *,
    identity: Any,
    rng: Any,
    host: str,
    port: int,
    player_name: str,
    decide: nd.Decider | None,
    on_update: Callable[..., Any] | None = None,
    transcript_path: Path | Callable[[tbl.Table], Path] | None = None,
    timeouts: nd.Timeouts | None = None,
    auto_agree: bool = False,
    bind: str = "0.0.0.0",
    node_ready: Callable[[nd.Node], Any] | None = None,
    table_cls: type = tbl.Table,
    defer_proofs: bool = True,
    min_proof_rounds: int | None = None,
    expect_fingerprint: str | None = None,
    on_reject: Callable[[str], Any] | None = None,
) -> nd.NodeResult:
    """Sit down at ``host:port`` and play. Our mesh listener is opened first: its port goes in
    the join request; the host fills in the address it sees us from. ``expect_fingerprint``
    pins the host's key (mDNS); ``min_proof_rounds``: see :func:`weak_proofs`."""
    listeners = await trio.open_tcp_listeners(0, host=bind)
    listen_port = listeners[0].socket.getsockname()[1]
    box: list[tbl.Table] = []

    def check_offer(offer: bytes, tls_key: bytes) -> None:
        """Refuse before sitting down: a bad or weak offer, or an offer signed by another key
        than the one whose TLS certificate we pinned (someone relaying another host's offer)."""
        t = table_cls.joining(identity, rng, offer, auto_agree=auto_agree, defer_proofs=defer_proofs,
                              min_proof_rounds=1)  # judged below, by the rules' proof system
        weak = weak_proofs(t.rules, t.proof_rounds, min_proof_rounds)
        if weak is not None:  # the same error the table gives for its own bar
            raise tbl.ProtocolViolation(0, "weak_proofs", weak, 0)
        if t.offer_key != tls_key:
            raise tbl.IntentError(f"the table's host key is {fingerprint(t.offer_key)}, but the lobby's "
                                  f"TLS certificate is {fingerprint(tls_key)}: refusing to sit down")
        box.append(t)
        if on_update is not None:  # show the table (name, rules) from the moment we connect
            on_update(t.view())

    try:
        _offer, seating = await nd.join_lobby(identity, host, port, name=player_name, listen_port=listen_port,
                                              check_offer=check_offer, expect_fingerprint=expect_fingerprint)
        table = box[0]
        table.receive(seating, 0)
        if table.me is None:
            raise tbl.IntentError("the host's seating does not include us")
    except BaseException:  # refused or failed before the mesh owns the listener: close it
        with trio.CancelScope(shield=True):
            for lst in listeners:
                await trio.aclose_forcefully(lst)
        raise
    path = transcript_path(table) if callable(transcript_path) else transcript_path
    return await nd.run_seat(
        table, listeners, decide=decide, on_update=on_update, transcript_path=path,
        timeouts=timeouts, node_ready=node_ready, on_reject=on_reject,
    )
