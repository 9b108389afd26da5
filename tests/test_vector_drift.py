"""Vectors cannot drift: every file in protocol/vectors/ (and protocol/schema.json) is
regenerated from the running code into a temporary folder and compared byte for byte with the
committed one. A difference names the file and the generator to run.

The generators are deterministic (seeded keys, RFC 8032 signatures, games played in one thread
with fixed addresses), so a difference means the code changed what it computes, signs or sends,
or a vector was edited by hand. Regenerating every file takes a few seconds on 2 cores (the
two game vectors' self-play is the bulk).
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
PROTOCOL = ROOT / "protocol"
GENERATORS = ("make_vectors.py", "make_game_vectors.py", "make_spec_vectors.py", "make_schedule.py")


def _load(name: str) -> ModuleType:
    """The generator as a module (by name, as the generators import each other, so the games
    they share are played once)."""
    if str(PROTOCOL) not in sys.path:
        sys.path.insert(0, str(PROTOCOL))
    return importlib.import_module(name.removesuffix(".py"))


def test_every_vector_file_is_what_the_code_generates(tmp_path: Path) -> None:
    owner: dict[Path, str] = {}
    for gen in GENERATORS:
        for path, text in _load(gen).all_files().items():
            rel = path.relative_to(ROOT)
            assert rel not in owner, f"{rel} is written by both {owner[rel]} and {gen}"
            owner[rel] = gen
            out = tmp_path / rel
            out.parent.mkdir(parents=True, exist_ok=True)
            out.write_text(text, "utf-8")
    problems = []
    for rel, gen in sorted(owner.items()):
        committed = ROOT / rel
        if not committed.exists():
            problems.append(f"missing {rel}: run python protocol/{gen}")
        elif committed.read_bytes() != (tmp_path / rel).read_bytes():
            problems.append(f"stale {rel}: run python protocol/{gen}")
    for path in sorted((PROTOCOL / "vectors").glob("*.json")):
        if path.relative_to(ROOT) not in owner:
            problems.append(f"{path.relative_to(ROOT)} is written by no generator (remove it, or generate it)")
    assert not problems, "\n".join(problems)


def test_vectors_named_in_the_protocol_document_exist() -> None:
    """Every vector docs/protocol.md names (`lobby-join`, `toss-*`...) is a committed file."""
    import re

    doc = (ROOT / "docs" / "protocol.md").read_text("utf-8")
    layers = "frame|chain|game|rules-hash|seating-hash|toss|hand-digest|card-point|key-share|dleq|lobby|mesh|relay"
    names = set(re.findall(rf"`((?:{layers})-[a-z0-9-]*\*?)`", doc))
    assert len(names) > 10
    files = {p.stem for p in (PROTOCOL / "vectors").glob("*.json")}
    for name in sorted(names):
        if name.endswith("*"):
            assert any(f.startswith(name[:-1]) for f in files), name
        else:
            assert name in files, name
