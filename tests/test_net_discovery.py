"""mDNS discovery: ad encoding (no network), and live zeroconf on private networks.

The live tests need root: one runs the whole API in a private loopback (``unshare -n``), under
plain ``trio.run`` and under trio guest mode on asyncio (how the UI runs it); another builds
three network namespaces on a bridge, advertises in one and browses from the other two.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import textwrap

import pytest

from netns import NetnsLab, netns_unavailable_reason, require_netns
from p2p_chinchon.net.discovery import (
    MAX_LABEL,
    MAX_TXT_ENTRY,
    PROTOCOL_VERSION,
    SERVICE_TYPE,
    TableAd,
    TableInfo,
    local_addresses,
    service_info,
    table_info_from_service,
)

FP = "MZXW-6YTB-OI3D-EMRT"


# ---------------------------------------------------------------- encoding (no network)


def test_txt_round_trip_through_service_info() -> None:
    ad = TableAd("Mesa de Ana", "fournier", 2, 4, FP)
    info = service_info(ad, 4242, ["192.168.1.20", "10.0.0.3"])
    table = table_info_from_service(info)
    assert table == TableInfo(
        name="Mesa de Ana",
        host="192.168.1.20",
        port=4242,
        preset="fournier",
        seats_taken=2,
        max_seats=4,
        fingerprint=FP,
        version=PROTOCOL_VERSION,
        addresses=("192.168.1.20", "10.0.0.3"),
        instance=f"Mesa de Ana [{FP}].{SERVICE_TYPE}",
    )
    assert table.seats_free == 2
    assert info.properties[b"seats"] == b"2/4" and info.properties[b"v"] == str(PROTOCOL_VERSION).encode()


@pytest.mark.parametrize("name", ["x" * 64, "ñ" * 64, "🂡" * 62, "a.b.c", "  spaced  "])
def test_instance_label_fits_and_keeps_fingerprint(name: str) -> None:
    ad = TableAd(name, "classic", 0, 8, FP + "-EXTRA-FINGERPRINT-CHARS")
    label = ad.instance_label()
    assert len(label.encode()) <= MAX_LABEL
    assert label.endswith(f" [{FP}]")
    assert "." not in label
    label.encode().decode()  # never cut inside a multi-byte character
    for key, value in ad.txt().items():
        assert len(key) + 1 + len(value) <= MAX_TXT_ENTRY


@pytest.mark.parametrize(
    "kwargs",
    [
        {"name": ""},
        {"name": "x" * 65},
        {"name": "tab\x00le"},
        {"name": "🂡" * 63},  # 63 characters but 252 bytes: over the TXT entry limit
        {"preset": "has space"},
        {"preset": ""},
        {"seats_taken": 5, "max_seats": 4},
        {"seats_taken": -1},
        {"max_seats": 0, "seats_taken": 0},
        {"max_seats": 256},
        {"fingerprint": "abc"},
        {"fingerprint": "bad/fp!"},
        {"version": -1},
        {"seats_taken": True},
    ],
)
def test_table_ad_rejects_bad_fields(kwargs: dict[str, object]) -> None:
    fields: dict[str, object] = {"name": "T", "preset": "classic", "seats_taken": 1, "max_seats": 4, "fingerprint": FP}
    fields.update(kwargs)
    with pytest.raises(ValueError):
        TableAd(**fields)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "props",
    [
        {},
        {b"v": b"1", b"name": b"T", b"preset": b"classic", b"seats": b"1-4", b"fp": FP.encode()},
        {b"v": b"x", b"name": b"T", b"preset": b"classic", b"seats": b"1/4", b"fp": FP.encode()},
        {b"v": b"1", b"name": b"\xff\xfe", b"preset": b"classic", b"seats": b"1/4", b"fp": FP.encode()},
        {b"v": b"1", b"name": b"T", b"preset": b"classic", b"seats": b"9/4", b"fp": FP.encode()},
        {b"v": b"1", b"name": None, b"preset": b"classic", b"seats": b"1/4", b"fp": FP.encode()},
    ],
)
def test_bad_txt_is_rejected(props: dict[str | bytes, str | bytes | None]) -> None:
    info = service_info(TableAd("T", "classic", 1, 4, FP), 4000, ["10.0.0.1"])
    info._set_properties(props)  # what a foreign or hostile responder could send
    with pytest.raises((ValueError, UnicodeDecodeError)):
        table_info_from_service(info)


def test_service_info_rejects_bad_port_and_address() -> None:
    ad = TableAd("T", "classic", 1, 4, FP)
    for port in (0, 65536, -5):
        with pytest.raises(ValueError):
            service_info(ad, port, ["10.0.0.1"])
    for addrs in ([], ["::1"], ["not-an-ip"]):
        with pytest.raises(ValueError):
            service_info(ad, 4000, addrs)


def test_local_addresses() -> None:
    addrs = local_addresses()
    assert addrs, "at least loopback"
    if any(not a.startswith("127.") for a in local_addresses(include_loopback=True)):
        assert not any(a.startswith("127.") for a in addrs)  # loopback only as a last resort
    assert any(a.startswith("127.") for a in local_addresses(include_loopback=True))


# ---------------------------------------------------------------- live, private loopback

SCENARIO = textwrap.dedent(
    """
    import asyncio, json, sys, trio
    from p2p_chinchon.net.discovery import TableAd, advertise, browse_tables, local_addresses

    async def scenario():
        out = {"addresses": local_addresses()}
        ad = TableAd("Mesa de Ana", "classic", 1, 4, "MZXW-6YTB-OI3D-EMRT")
        async with browse_tables() as browser:
            seen = []
            async with advertise(ad, 4321) as adv:
                out["instance"] = adv.instance
                with trio.fail_after(10):
                    async for tables in browser:
                        if tables:
                            seen.append([t.seats_taken for t in tables])
                            break
                await adv.update(3)
                with trio.fail_after(10):
                    async for tables in browser:
                        if tables and tables[0].seats_taken == 3:
                            out["updated"] = [vars_(t) for t in tables]
                            break
            with trio.fail_after(10):  # goodbye packets remove the table
                async for tables in browser:
                    if not tables:
                        out["removed"] = True
                        break
        out["seen"] = seen
        return out

    def vars_(t):
        return {f: getattr(t, f) for f in t.__dataclass_fields__}

    def guest():
        async def main():
            loop = asyncio.get_running_loop()
            done = loop.create_future()
            trio.lowlevel.start_guest_run(
                scenario,
                run_sync_soon_threadsafe=loop.call_soon_threadsafe,
                done_callback=done.set_result,
                host_uses_signal_set_wakeup_fd=True,
            )
            # the asyncio loop must stay responsive while zeroconf works
            ticks = 0
            while not done.done():
                await asyncio.sleep(0.01)
                ticks += 1
            out = (await done).unwrap()
            out["asyncio_ticks"] = ticks
            return out
        return asyncio.run(main())

    result = guest() if sys.argv[1] == "guest" else trio.run(scenario)
    print(json.dumps(result))
    """
)


def _require_unshare() -> None:
    reason = netns_unavailable_reason()
    if reason is None and shutil.which("unshare") is None:
        reason = "needs util-linux `unshare` for a private loopback"
    if reason is not None:
        pytest.skip(reason)


@pytest.mark.netns
@pytest.mark.parametrize("mode", ["trio", "guest"])
def test_advertise_browse_update_remove_on_private_loopback(mode: str) -> None:
    _require_unshare()
    cmd = f"ip link set lo up && exec {sys.executable} -c \"$SCENARIO\" {mode}"
    proc = subprocess.run(
        ["unshare", "-n", "sh", "-c", cmd],
        env={"SCENARIO": SCENARIO, "PATH": "/usr/sbin:/usr/bin:/sbin:/bin"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["addresses"] == ["127.0.0.1"]  # loopback only because it is the only one
    assert out["seen"] == [[1]]
    (table,) = out["updated"]
    assert table["name"] == "Mesa de Ana" and table["port"] == 4321
    assert table["host"] == "127.0.0.1" and table["preset"] == "classic"
    assert (table["seats_taken"], table["max_seats"]) == (3, 4)
    assert table["fingerprint"] == FP and table["version"] == PROTOCOL_VERSION
    assert table["instance"] == out["instance"]
    assert out["removed"] is True
    if mode == "guest":
        assert out["asyncio_ticks"] > 50  # asyncio kept running throughout (~2 s of probing)


# ---------------------------------------------------------------- live, three namespaces


@pytest.mark.netns
def test_discovery_across_namespaces() -> None:
    require_netns()
    with NetnsLab(3) as lab:
        adv = lab.popen(
            0,
            [sys.executable, "-m", "p2p_chinchon.net", "advertise", "--name", "Mesa del puente",
             "--preset", "fournier", "--seats", "2/6", "--fp", FP, "--port", "4555"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert adv.stdin is not None and adv.stdout is not None and adv.stderr is not None
        line = adv.stdout.readline()  # blocks until registered (or the process dies)
        assert line.startswith("registered "), adv.stderr.read() if adv.poll() is not None else line
        browsers = [
            lab.popen(i, [sys.executable, "-m", "p2p_chinchon.net", "browse", "--timeout", "3", "--json"],
                      stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for i in (1, 2)
        ]
        for i, b in zip((1, 2), browsers, strict=True):
            stdout, stderr = b.communicate(timeout=30)
            assert b.returncode == 0, stderr
            tables = json.loads(stdout)
            assert len(tables) == 1, f"host {i} saw {tables}"
            t = tables[0]
            assert (t["name"], t["preset"], t["seats_taken"], t["max_seats"]) == ("Mesa del puente", "fournier", 2, 6)
            assert (t["host"], t["port"], t["fingerprint"]) == (lab.addr(0), 4555, FP)
            assert t["addresses"] == [lab.addr(0)]  # loopback is not advertised
        adv.stdin.close()
        assert adv.wait(timeout=20) == 0
        assert adv.stdout.read().strip() == "closed"


def test_seat_record_round_trip_and_filtering():
    """A seat's mDNS record (find a seat whose address changed) names its game and
    seat; the locator keeps only records of its own game, and refuses nothing loudly."""
    from p2p_chinchon.net.discovery import SEAT_SERVICE_TYPE, SeatLocator, seat_service_info

    game, other = bytes(range(16)), bytes(16)
    info = seat_service_info(game, 2, 40669, ["10.77.0.42"])
    assert info.type == SEAT_SERVICE_TYPE and info.name.startswith(game.hex() + "-2.")
    loc = SeatLocator(game)
    loc._take(seat_service_info(other, 1, 5000, ["10.0.0.9"]))  # another game's seat
    loc._take(info)
    assert loc.lookup(2) == [("10.77.0.42", 40669)] and loc.lookup(1) == []
    bads: list[dict[str | bytes, str | bytes | None]] = [{b"game": b"zz", b"seat": b"1"},
                                                         {b"game": game.hex().encode(), b"seat": b"x"}, {}]
    for bad in bads:
        forged = seat_service_info(game, 1, 5000, ["10.0.0.9"])
        forged._set_properties(bad)
        loc._take(forged)
    assert loc.lookup(1) == []
    with pytest.raises(ValueError):
        seat_service_info(b"short", 0, 1, ["10.0.0.1"])
    with pytest.raises(ValueError):
        seat_service_info(game, 0, 0, ["10.0.0.1"])
