"""A seat's mDNS record follows its addresses (docs/reliability.md "Addresses that change"):
advertised again when this machine's addresses change, and again after mDNS failed, with the
reason in words. The advertiser is a fake here; trio's MockClock keeps every time explicit."""

from __future__ import annotations

import logging
from contextlib import asynccontextmanager

import trio
import trio.testing

from harness import Net
from p2p_chinchon.net import discovery, node as nd


def test_the_record_is_advertised_again_when_the_addresses_change_or_mdns_fails(monkeypatch, caplog):
    net = Net(2, seed=3)
    assert net.run(net.expects("draw"))
    t = net.tables[1]
    made: list[tuple[float, list[str] | None]] = []
    addresses = [["10.0.0.5"]]
    fail = [OSError(), RuntimeError("")]  # errors whose own text is empty

    @asynccontextmanager
    async def advertise(game, seat, port, *, locator=None, sign=None, addresses=None):
        made.append((trio.current_time(), addresses))
        if len(made) in (2, 3):
            raise fail[len(made) - 2]
        yield locator

    monkeypatch.setattr(discovery, "advertise_seat", advertise)

    async def main() -> None:
        start = trio.current_time()
        async with trio.open_nursery() as nursery:
            # no locator: advertise_seat is replaced
            nursery.start_soon(nd._seat_mdns, t, 4242, None, ("203.0.113.7",), lambda: addresses[0])  # type: ignore[arg-type]
            # the test's clock reads fall between the watcher's looks (every MDNS_WATCH s from 0),
            # never on one: two wake-ups at one instant run in either order
            await trio.sleep(4.5 * nd.MDNS_WATCH)
            assert len(made) == 1, "the same addresses: advertised once"
            addresses[0] = ["10.0.0.9"]  # a new Wi-Fi
            await trio.sleep(2 * nd.MDNS_WATCH)
            # again at the next look (it fails), and again MDNS_WATCH s later (it fails too)
            assert len(made) == 3, made
            assert made[1][0] - start <= 4.5 * nd.MDNS_WATCH + nd.MDNS_WATCH
            await trio.sleep(2 * nd.MDNS_WATCH + 1.0)
            assert len(made) == 4, made  # then it holds
            assert made[3][1] == ["203.0.113.7", "10.0.0.9"]
            nursery.cancel_scope.cancel()

    with caplog.at_level(logging.INFO, logger="p2p_chinchon.net.node"):
        trio.run(main, clock=trio.testing.MockClock(autojump_threshold=0))
    lines = [r.getMessage() for r in caplog.records]
    assert any("addresses changed (10.0.0.5, now 10.0.0.9)" in m for m in lines), lines
    off = [m for m in lines if m.startswith("mDNS for this seat is off: ")]
    assert len(off) == 2 and "OSError (it gave no reason)" in off[0] and "RuntimeError" in off[1], off
    assert all(not m.startswith("mDNS for this seat is off:  ") for m in off)
