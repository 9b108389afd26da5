"""Test modules share helpers through ``tests/harness/``, never by importing one another."""

from __future__ import annotations

import re
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def test_no_test_module_imports_another() -> None:
    pattern = re.compile(r"^\s*(from|import) test_", re.M)
    found = [f"{path.name}: {m.group(0).strip()}" for path in sorted(TESTS.rglob("*.py"))
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert not found, "move the shared helper into tests/harness/: " + "; ".join(found)
