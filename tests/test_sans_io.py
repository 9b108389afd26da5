"""The sans-I/O modules import no I/O: none of them, nor anything of the package they import at
module level, imports trio, sockets, TLS, mDNS, the interface list or a clock (a static walk of
their import statements; ``TYPE_CHECKING`` imports are not run and do not count)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "p2p_chinchon"
FORBIDDEN = {"trio", "socket", "ssl", "asyncio", "selectors", "zeroconf", "ifaddr", "time", "wormhole", "twisted"}
SANS_IO = [
    "p2p_chinchon.wire", "p2p_chinchon.schedule", "p2p_chinchon.view", "p2p_chinchon.transcript",
    "p2p_chinchon.table", "p2p_chinchon.engine", "p2p_chinchon.deck",
    "p2p_chinchon.net.presence", "p2p_chinchon.net.clocks", "p2p_chinchon.net.verdicts",
    "p2p_chinchon.net.admission", "p2p_chinchon.net.joinrequest", "p2p_chinchon.net.rendezvous",
]


def _path(module: str) -> Path | None:
    parts = module.split(".")
    if parts[0] != "p2p_chinchon":
        return None
    if len(parts) == 1:
        return PACKAGE / "__init__.py"
    rel = Path(*parts[1:])
    for p in (PACKAGE / rel / "__init__.py", PACKAGE / rel.with_suffix(".py")):
        if p.exists():
            return p
    return None


def _imports(module: str) -> set[str]:
    """The modules ``module`` imports when it is run (not under ``if TYPE_CHECKING``)."""
    path = _path(module)
    assert path is not None, module
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def walk(nodes: list[ast.stmt]) -> None:
        for node in nodes:
            if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
                walk(node.orelse)
                continue
            if isinstance(node, ast.Import):
                found.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1] + ([base] if base else []))
                found.add(base)
                found.update(f"{base}.{a.name}" for a in node.names if _path(f"{base}.{a.name}") is not None
                             and base.startswith("p2p_chinchon"))
            for field in ("body", "orelse", "finalbody", "handlers"):
                inner = getattr(node, field, None)
                if isinstance(inner, list) and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    walk(inner)

    walk(ast.parse(path.read_text()).body)
    return found


def _closure(module: str) -> dict[str, str]:
    """Every module imported at run time from ``module``, through the package: name -> importer."""
    seen: dict[str, str] = {}
    todo = [module]
    while todo:
        m = todo.pop()
        for imported in _imports(m):
            if imported not in seen:
                seen[imported] = m
                if imported.startswith("p2p_chinchon") and _path(imported) is not None:
                    todo.append(imported)
    return seen


@pytest.mark.parametrize("module", SANS_IO)
def test_a_sans_io_module_imports_no_io(module: str) -> None:
    found = _closure(module)
    bad = {m: by for m, by in found.items() if m.split(".")[0] in FORBIDDEN}
    assert not bad, f"{module} imports I/O: " + ", ".join(f"{m} (from {by})" for m, by in sorted(bad.items()))


def test_the_walk_sees_an_io_import() -> None:
    assert "trio" in _closure("p2p_chinchon.net.lobby")
