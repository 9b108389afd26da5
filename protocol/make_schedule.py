#!/usr/bin/env python3
"""Write protocol/schedule.json and docs/schedule.md from the schedule's tables.

    python protocol/make_schedule.py            # rewrites the two files
    python protocol/make_schedule.py --check    # exit 1 naming each file that would change

Both come from :mod:`p2p_chinchon.schedule` alone (``KINDS``, ``PHASE_STEPS``, ``ANYWHERE``,
``PHASE_EDGES``), as h11 draws its state diagrams from the tables in its ``_state.py``: the JSON
for a second implementation, the Markdown (a Mermaid state diagram and two tables) for a reader.
tests/test_vector_drift.py regenerates them with the vectors and fails when a file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_chinchon import schedule, view as v  # noqa: E402

JSON_PATH = ROOT / "protocol" / "schedule.json"
DOC_PATH = ROOT / "docs" / "schedule.md"
PHASES = (v.LOBBY, v.SHUFFLING, v.PLAYING, v.RESTOCKING, v.SHOWDOWN, v.HAND_OVER, v.REENTRY, v.OVER, v.STOPPED)


def schedule_json() -> str:
    assert set(PHASES) == set(schedule.PHASE_EDGES) == set(schedule.PHASE_STEPS)
    data = {
        "kinds": {k: {"part": d.part, "step": d.step, "decided": d.decided, "shares": d.shares,
                      "terminal": d.terminal} for k, d in schedule.KINDS.items()},
        "phases": {p: {"steps": list(schedule.PHASE_STEPS[p]), "next": dict(sorted(schedule.PHASE_EDGES[p].items()))}
                   for p in PHASES},
        "anywhere": list(schedule.ANYWHERE),
        "start": v.LOBBY,
    }
    return json.dumps(data, indent=2) + "\n"


def _flag(b: bool) -> str:
    return "yes" if b else ""


def schedule_md() -> str:
    lines = [
        "# The schedule",
        "",
        "<!-- written by protocol/make_schedule.py from p2p_chinchon/schedule.py; do not edit -->",
        "",
        "At every point of a game one seat must send one kind of message next (docs/protocol.md",
        '"Seats, order and phases"). The table queues the expected steps of each phase in blocks,',
        "one step per seat, in the order below; while a hand is played and nothing is queued, the",
        "rules engine's turn is expected (a `draw`, then a `discard` or a `close`). A removal's",
        "`remove` steps go ahead of every queued step, in any phase once the game has begun. Any",
        "phase may stop (a `fault`, a `leave` of a seat the game needs, a halt).",
        "",
        "This page and `protocol/schedule.json` are generated from the tables the code runs on",
        "(`p2p_chinchon/schedule.py`); `Flow` (`p2p_chinchon/table/state.py`) refuses a step or a",
        "phase change they do not list.",
        "",
        "```mermaid",
        "stateDiagram-v2",
        f"    [*] --> {v.LOBBY}",
    ]
    for p in PHASES:
        for q, cause in schedule.PHASE_EDGES[p].items():
            if q != v.STOPPED:
                lines.append(f"    {p} --> {q}: {cause}")
    lines += [f"    {v.OVER} --> [*]: every game_end", "```", "",
              "## Steps per phase", "", "| phase | queued steps, in order | next phases |", "|---|---|---|"]
    for p in PHASES:
        steps = " → ".join(f"`{k}`" for k in schedule.PHASE_STEPS[p]) or "(none)"
        if p == v.PLAYING:
            steps = "the engine's turn: `draw`, `discard` or `close`; " + steps
        nxt = ", ".join(sorted(schedule.PHASE_EDGES[p])) or "(the end)"
        lines.append(f"| {p} | {steps} | {nxt} |")
    lines += ["", "## Message kinds", "",
              "| kind | checked by | an expected step | a player decides | carries shares | terminal |",
              "|---|---|---|---|---|---|"]
    for k, d in schedule.KINDS.items():
        lines.append(f"| `{k}` | {d.part or '(by name)'} | {_flag(d.step)} | {_flag(d.decided)} | "
                     f"{_flag(d.shares)} | {_flag(d.terminal)} |")
    return "\n".join(lines) + "\n"


def all_files() -> dict[Path, str]:
    return {JSON_PATH: schedule_json(), DOC_PATH: schedule_md()}


def main(argv: list[str]) -> int:
    stale = []
    for path, text in all_files().items():
        if "--check" in argv:
            if not path.exists() or path.read_text("utf-8") != text:
                stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text, "utf-8")
    for name in stale:
        print(f"would change: {name}")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
