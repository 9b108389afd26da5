"""The schema: protocol/schema.json is the dump of wire.SCHEMA, and the contract's kinds."""

from __future__ import annotations

import json
from pathlib import Path

from p2p_chinchon import PROTOCOL_VERSION
from p2p_chinchon.wire import ENVELOPE_FIELDS, KINDS, MAX_FRAME, SCHEMA, schema_json

ROOT = Path(__file__).resolve().parent.parent

# The message kinds and body fields other modules are written against (the wire contract, plus
# the offer's proof_rounds and host_key added by table.py).
CONTRACT = {
    "offer": {"name", "rules", "max_seats", "app", "nonce", "proof_rounds", "host_key"},
    "seating": {"players"},
    "agree": {"rules_hash", "seating_hash", "toss_commit"},
    "toss": {"nonce"},
    "key_commit": {"hand", "commit"},
    "key_share": {"hand", "share", "nonce"},
    "shuffle": {"hand", "round", "deck", "proof"},
    "deal_shares": {"hand", "shares"},
    "draw": {"hand", "source"},
    "draw_share": {"hand", "slot", "share"},
    "discard": {"hand", "slot", "share"},
    "close": {"hand", "slot", "shares"},
    "show": {"hand", "shares"},
    "secret": {"hand", "secret"},
    "hand_digest": {"hand", "digest", "totals"},
    "reenter": {"hand", "accept"},
    "game_end": {"winner", "digest"},
    "fault": {"accused", "rule", "reason", "evidence"},
    "leave": {"reason"},
    "remove": {"seat", "hand", "reason", "proof"},
    "away": {"seat", "hand"},
}


def test_protocol_schema_json_is_the_dump_of_the_code() -> None:
    text = (ROOT / "protocol" / "schema.json").read_text("utf-8")
    assert json.loads(text) == json.loads(json.dumps(SCHEMA))
    assert text == schema_json(), "regenerate with: python protocol/make_vectors.py"


def test_kinds_and_fields_match_the_contract() -> None:
    assert KINDS == set(CONTRACT)
    for kind, fields in CONTRACT.items():
        assert set(SCHEMA["kinds"][kind]["fields"]) == fields, kind


def test_envelope_fields_and_caps() -> None:
    assert [f["name"] for f in SCHEMA["envelope"]] == ["v", "game", "seq", "seat", "prev", "kind", "body", "sig"]
    assert [n for n, _ in ENVELOPE_FIELDS] == [f["name"] for f in SCHEMA["envelope"]]
    assert SCHEMA["protocol_version"] == PROTOCOL_VERSION
    assert SCHEMA["caps"]["frame_bytes"] == MAX_FRAME == 1 << 20


def _walk(spec: dict, path: str, refs: set[str]) -> None:
    if "ref" in spec:
        assert set(spec) == {"ref"}, path
        assert spec["ref"] in SCHEMA["types"], f"{path}: unknown ref {spec['ref']}"
        refs.add(spec["ref"])
        return
    t = spec["type"]
    allowed = {
        "int": {"type", "min", "max"},
        "bool": {"type"},
        "nil": {"type"},
        "str": {"type", "max_bytes", "enum"},
        "bin": {"type", "len", "min", "max", "multiple_of"},
        "list": {"type", "items", "max_items", "min_items"},
        "map": {"type", "fields"},
        "dict": {"type", "keys", "values", "max_items"},
        "one_of": {"type", "types"},
    }
    assert t in allowed, f"{path}: unknown type {t}"
    assert set(spec) <= allowed[t], f"{path}: unexpected keys {set(spec) - allowed[t]}"
    if t == "int":
        assert spec["min"] <= spec["max"]
    elif t == "str":
        assert spec["max_bytes"] > 0
        for e in spec.get("enum", []):
            assert len(e.encode()) <= spec["max_bytes"]
    elif t == "bin":
        assert ("len" in spec) != ("min" in spec and "max" in spec), path
    elif t == "list":
        assert "max_items" in spec  # every list is bounded
        _walk(spec["items"], f"{path}[]", refs)
    elif t == "map":
        for name, sub in spec["fields"].items():
            _walk(sub, f"{path}.{name}", refs)
    elif t == "dict":
        assert "max_items" in spec
        _walk(spec["keys"], f"{path} key", refs)
        _walk(spec["values"], f"{path} value", refs)
    elif t == "one_of":
        for i, sub in enumerate(spec["types"]):
            _walk(sub, f"{path}|{i}", refs)


def test_every_type_is_well_formed_and_bounded() -> None:
    refs: set[str] = set()
    for kind, spec in SCHEMA["kinds"].items():
        assert spec["type"] == "map"
        _walk(spec, kind, refs)
    for name, spec in SCHEMA["types"].items():
        _walk(spec, name, refs)
    for f in SCHEMA["envelope"]:
        spec = {k: v for k, v in f.items() if k != "name"}
        if spec.get("type") not in ("kind", "body"):
            _walk(spec, f["name"], refs)
    assert refs == set(SCHEMA["types"]), "unused named types"
