"""The host's lobby decisions without trio or sockets (p2p_chinchon.net.admission): a real
host table, join requests built by hand, the Admission's answers checked step by step."""

from __future__ import annotations

import msgpack
import pytest

from p2p_chinchon import table as tbl
from p2p_chinchon.engine import make_rules
from p2p_chinchon.identity import Identity
from p2p_chinchon.net import lobby as lob
from p2p_chinchon.net.admission import SIT, TABLE_FULL, Admission
from p2p_chinchon.rng import SeededRng

HOST = Identity.generate()


def lobby(seats: int) -> Admission:
    """A fresh host table for ``seats`` (Ana, the host, in seat 0 at 127.0.0.1:1)."""
    table = tbl.Table.create(HOST, SeededRng("host"), name="Mesa de Ana", rules=make_rules("classic", {}),
                             max_seats=seats, addr="127.0.0.1:1", proof_rounds=4)
    table.lobby.set_host_name("Ana")
    return Admission(table, seats)


def request(name: str, key: bytes | None = None, *, port: int = 4000,
            candidates: tuple[str, ...] = ()) -> lob.JoinRequest:
    """A join request as serve_lobby hands it on (the signature is checked there, not here)."""
    key = key if key is not None else Identity.generate().public_bytes
    return lob.JoinRequest(name, key, lob.format_addr("0.0.0.0", port), b"\0" * 64, candidates)


def sit(adm: Admission, req: lob.JoinRequest, seen: str = "10.0.0.9:4000") -> int:
    """Seat ``req`` and send its {seat}: its seat."""
    seat = adm.take(req, seen)
    assert isinstance(seat, int)
    adm.seat_sent()
    return seat


def names(message: bytes | None) -> list[str]:
    assert message is not None
    return [p["name"] for p in msgpack.unpackb(message)["lobby"]]


def test_a_request_is_offered_the_table_until_it_is_full() -> None:
    adm = lobby(2)
    assert adm.free() == 1 and adm.on_request() is None
    sit(adm, request("Beto"))
    assert adm.free() == 0 and adm.on_request() == TABLE_FULL


def test_the_answer_to_the_offer() -> None:
    adm = lobby(3)
    beto = request("Beto")
    assert adm.on_answer(SIT, beto.public_key) == (True, None)
    # anything but "sit", or a closed link, declines: no refusal is sent
    assert adm.on_answer(b"no", beto.public_key) == (False, None)
    assert adm.on_answer(None, beto.public_key) == (False, None)
    # the host's own key never gets as far as the host's person
    go_on, refusal = adm.on_answer(SIT, HOST.public_bytes)
    assert not go_on and refusal is not None and "host's own identity key" in refusal
    sit(adm, beto)
    sit(adm, request("Carla"))
    # a table that filled while the joiner read the offer: full first, whoever the key is
    assert adm.on_answer(SIT, request("Dora").public_key) == (False, TABLE_FULL)
    assert adm.on_answer(SIT, HOST.public_bytes) == (False, TABLE_FULL)
    assert adm.on_answer(b"no", HOST.public_bytes) == (False, None)


def test_the_persons_answer() -> None:
    adm = lobby(2)
    assert adm.on_decision(None) is None
    assert adm.on_decision("the host did not let you sit down") == "the host did not let you sit down"
    sit(adm, request("Beto"))
    # a yes to a table that filled while the person was asked
    assert adm.on_decision(None) == TABLE_FULL
    assert adm.on_decision("no") == "no"


def test_the_seating_waits_for_every_seat_and_every_seat_message() -> None:
    adm = lobby(3)
    assert not adm.may_sign()
    first = adm.take(request("Beto"), "10.0.0.2:4000")
    second = adm.take(request("Carla"), "10.0.0.3:4000")
    assert (first, second) == (1, 2) and adm.free() == 0 and adm.seat_sends == 2
    assert not adm.may_sign()  # full, but a {seat} may yet fail and free its seat
    adm.seat_sent()
    assert not adm.may_sign()
    adm.seat_sent()
    assert adm.may_sign()


def test_a_seat_the_table_refuses_is_a_refusal_not_a_seat() -> None:
    adm = lobby(3)
    refusal = adm.take(request("Ana bis", HOST.public_bytes), "10.0.0.2:4000")
    assert isinstance(refusal, str) and "host's own identity key" in refusal
    refusal = adm.take(request("Beto"), "h" * 70 + ":4000")  # too long for the seating
    assert refusal == "the joiner's address is too long"
    assert adm.seat_sends == 0 and adm.free() == 2


def test_a_joiner_that_leaves_frees_its_seat() -> None:
    adm = lobby(3)
    beto, carla = request("Beto"), request("Carla")
    sit(adm, beto)
    sit(adm, carla)
    assert adm.free() == 0
    adm.leave(beto.public_key)
    assert adm.free() == 1 and not adm.may_sign()
    assert names(adm.lobby_message()) == ["Ana", "Carla"]  # the seats after it move up one
    assert adm.on_request() is None


def test_where_a_joiner_is_seen_from() -> None:
    req = request("Beto", port=4100, candidates=("192.0.2.7:4100", "10.1.1.1:4100"))
    assert Admission.placed("10.0.0.5", req) == ("10.0.0.5:4100", "10.0.0.5")
    assert Admission.placed("fe80::1", req) == ("[fe80::1]:4100", "fe80::1")
    # through the relay: its first candidate stands for where it came from
    assert Admission.placed(None, req) == ("192.0.2.7:4100", lob.RELAYED)
    assert Admission.placed(None, request("Carla", port=4200)) == ("127.0.0.1:4200", lob.RELAYED)


def test_how_many_came_from_an_address_and_may_wait_for_the_person() -> None:
    adm = lobby(5)
    assert adm.prompt_cap() == 8  # 2 per free seat
    sit(adm, request("Beto"), "10.0.0.5:4000")
    sit(adm, request("Carla"), "10.0.0.5:4001")
    sit(adm, request("Dora"), "10.0.0.6:4000")
    assert adm.came_from("10.0.0.5") == 2 and adm.came_from("10.0.0.6") == 1
    assert adm.came_from("127.0.0.1") == 0  # the host's own seat is not counted
    assert adm.prompt_cap() == 2
    sit(adm, request("Eli"), "10.0.0.7:4000")
    assert adm.prompt_cap() == 1  # at least one, even full


def test_lobby_updates_go_out_only_when_the_seats_changed() -> None:
    adm = lobby(3)
    beto = request("Beto")
    sit(adm, beto)
    sent = adm.first_sent()
    assert sent is None  # a seat free: Beto is sent the seats so far
    sent = adm.update(sent)
    assert names(sent) == ["Ana", "Beto"]
    assert adm.update(sent) is None  # nothing changed: nothing to send
    carla = request("Carla")
    sit(adm, carla)
    adm.leave(carla.public_key)
    assert adm.update(sent) is None  # Carla came and went between two looks: the same seats
    sit(adm, request("Dora"))
    sent = adm.update(sent)
    assert names(sent) == ["Ana", "Beto", "Dora"]
    # the table is full: the last joiner gets the seating at once, no update before it
    assert adm.first_sent() == adm.lobby_message()
    assert adm.update(adm.first_sent()) is None


def test_the_seating_is_signed_and_every_joiner_counted() -> None:
    adm = lobby(3)
    sit(adm, request("Beto"))
    assert adm.heard_end(refused=True) is False  # refused before any stop: not one of the table
    assert adm.told == 0
    sit(adm, request("Carla"))
    adm.sign()
    assert adm.stop is None
    assert [p.name for p in adm.table.lobby.players] == ["Ana", "Beto", "Carla"]
    assert adm.heard_end(refused=False) and not adm.all_told()
    assert adm.heard_end(refused=False) and adm.all_told()


def test_a_table_that_cannot_sign_refuses_every_joiner() -> None:
    adm = lobby(2)
    adm.seats = 1  # nobody to wait for: only the host, and a seating needs two players
    assert adm.may_sign()
    adm.sign()
    assert adm.stop == "the host could not start the table: a table needs at least two players"
    assert adm.heard_end(refused=True) and adm.told == 1


@pytest.mark.parametrize("answer", [b"sit ", b"SIT", b"", b"\x92sit"])
def test_only_the_exact_sit_accepts_the_offer(answer: bytes) -> None:
    assert lobby(2).on_answer(answer, request("Beto").public_key) == (False, None)
