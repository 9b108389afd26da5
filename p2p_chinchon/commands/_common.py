"""Shared pieces of the ``play``, ``host`` and ``join`` commands."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any, Callable

from p2p_chinchon import view as v


def add_rules_arguments(p: argparse.ArgumentParser, default: str | None = "classic") -> None:
    p.add_argument("--rules", default=default, metavar="PRESET", help="rule preset (see `p2p-chinchon rules`)")
    p.add_argument("--option", action="append", default=[], metavar="KEY=VALUE", help="table option on top of the preset (repeatable)")


def make_rules(args: argparse.Namespace) -> Any:
    from p2p_chinchon.engine import make_rules as mk

    opts = {}
    for item in args.option:
        if "=" not in item:
            raise SystemExit(f"p2p-chinchon: --option needs KEY=VALUE, got {item!r}")
        k, val = item.split("=", 1)
        opts[k.strip()] = val.strip()
    try:
        return mk(args.rules, opts)
    except Exception as exc:  # RulesError: one clear line
        print(f"p2p-chinchon: {exc}", file=sys.stderr)
        raise SystemExit(2)


def add_play_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--transcript", type=Path, metavar="PATH", help="where to save this seat's signed transcript")
    p.add_argument("--bot", action="store_true", help="let a bot play this seat")
    p.add_argument("--bot-level", default="easy", metavar="LEVEL",
                   help="bot level: easy, normal or hard (play: one for all bots, or one per bot "
                        "seat, e.g. easy,normal,hard; default easy)")
    p.add_argument("--name", default=None, help="your name at the table")
    p.add_argument("--lang", default=None, choices=["en", "es", "fr"], help="language of the UI (default: the locale)")
    p.add_argument("--charset", default="auto", choices=["auto", "unicode", "mono", "ascii"], help="card faces: suits with colour, without, or plain ASCII")
    p.add_argument("--lines", action="store_true", help="plain line mode even on a terminal")
    p.add_argument("--quiet", action="store_true", help="print nothing but errors (bot peers started by play)")
    p.add_argument("--timeout", type=float, default=None, metavar="S", help="seconds to wait for a peer's automatic step (default 90)")


def data_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_data_dir("p2p-chinchon", appauthor=False))


def default_transcript(label: str) -> Path:
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir() / "transcripts" / f"{stamp}-{label}.chn"


class ConsolePrinter:
    """Prints a seat's public log as it grows (``--no-ui``, bots)."""

    def __init__(self, out: Any = None, prefix: str = "") -> None:
        self.out = out or sys.stdout
        self.prefix = prefix
        self.seen = 0

    def __call__(self, view: v.SeatView) -> None:
        fresh = view.log_total - self.seen
        if fresh <= 0:
            return
        for line in view.log[-fresh:] if fresh <= len(view.log) else view.log:
            print(f"{self.prefix}{line}", file=self.out, flush=True)
        self.seen = view.log_total


def finish(result: Any, args: argparse.Namespace) -> int:
    """Print a node's result (unless ``--quiet``) and turn it into the command's exit code."""
    if result is None:
        return 1
    if not args.quiet:
        print_result(result)
    return exit_code(result)


def exit_code(result: Any) -> int:
    """0 for a finished game or for leaving it yourself; 1 when the table stopped on a fault."""
    f = result.fault
    return 0 if f is None or (f.rule == "left" and f.seat == result.seat) else 1


def print_result(result: Any, names: list[str] | None = None, out: Any = None) -> None:
    out = out or sys.stdout
    names = list(result.names or names or [])
    names += [f"seat {i}" for i in range(len(names), 8)]
    if result.fault is not None and result.fault.rule == "left" and result.fault.seat == result.seat:
        print("you left the table", file=out)
    elif result.fault is not None:
        f = result.fault
        who = f"seat {f.seat} ({names[f.seat]})" if f.seat is not None and f.seat < len(names) else "nobody"
        print(f"table stopped: {who}: {f.rule}: {f.reason}", file=out)
    elif result.winner is not None:
        print(f"winner: {names[result.winner]} (seat {result.winner})", file=out)
    if result.totals:
        print("totals: " + ", ".join(f"{names[i]} {t}" for i, t in enumerate(result.totals)), file=out)
    if result.transcript:
        print(f"transcript: {result.transcript}", file=out)
        print(f"check it:   p2p-chinchon audit {result.transcript}", file=out)


def make_timeouts(args: argparse.Namespace) -> Any:
    from p2p_chinchon.net.node import Timeouts

    t = Timeouts()
    if getattr(args, "timeout", None):
        t.protocol = args.timeout
    return t


def want_tui(args: argparse.Namespace) -> bool:
    return not args.bot and not getattr(args, "lines", False) and sys.stdin.isatty() and sys.stdout.isatty()


def bot_levels(args: argparse.Namespace, n: int, command: str) -> list[str]:
    """``--bot-level`` as one level per bot (``n`` bots); a bad value exits with one line."""
    from p2p_chinchon.bots import parse_levels

    try:
        return parse_levels(args.bot_level, n)
    except ValueError as exc:
        print(f"p2p-chinchon {command}: --bot-level: {exc}", file=sys.stderr)
        raise SystemExit(2)


def human_hint() -> Callable[[v.SeatView], str]:
    from p2p_chinchon.autoplay import hint
    from p2p_chinchon.bots import BEST_LEVEL
    from p2p_chinchon.local import make_bot

    cache: dict = {}

    def h(view: v.SeatView) -> str:
        bot = cache.get(id(view.rules))
        if bot is None:
            import secrets

            bot = cache[id(view.rules)] = make_bot(view.rules, secrets, BEST_LEVEL)
        return hint(bot, view)

    return h


def check_seats(rules: Any, n: int, command: str) -> None:
    """Refuse a table size the rules do not allow, before anyone sits down."""
    if not rules.min_players <= n <= rules.max_players:
        print(f"p2p-chinchon {command}: the {rules.preset} rules take {rules.min_players}-{rules.max_players} "
              f"players, not {n}", file=sys.stderr)
        raise SystemExit(2)


def run_reporting(main: Callable[..., Any], args: argparse.Namespace, human: bool, command: str) -> Any:
    """:func:`run_main`, turning the expected failures of a network game (refused table,
    nobody listening, no network, a lobby that closed) into one line on stderr; None then."""
    from p2p_chinchon.net.lobby import LobbyError
    from p2p_chinchon.table import IntentError, ProtocolViolation

    expected = (LobbyError, IntentError, ProtocolViolation, OSError, RuntimeError)
    try:
        return run_main(main, args, human)
    except BaseException as exc:  # noqa: BLE001 - unwrap trio's exception groups
        leaf = exc
        while isinstance(leaf, BaseExceptionGroup) and len(leaf.exceptions) == 1:
            leaf = leaf.exceptions[0]
        if not isinstance(leaf, expected):
            raise
        text = str(leaf)
        if isinstance(leaf, ProtocolViolation) and leaf.rule == "weak_proofs":
            text += " (join with --min-proof-rounds K to accept it)"
        print(f"p2p-chinchon {command}: {text}", file=sys.stderr)
        return None


def run_main(main: Callable[..., Any], args: argparse.Namespace, human: bool) -> Any:
    """Run ``main(bridge, on_update)`` under the full-screen UI, the plain line mode, or (bots)
    plain trio with a console printer."""
    import trio

    if human and want_tui(args):
        from p2p_chinchon.ui.app import run_with_ui

        return run_with_ui(main, lang=args.lang, charset=args.charset, hint=human_hint())
    if human:
        from p2p_chinchon.ui.lines import run_line_mode

        return run_line_mode(main, stdin=sys.stdin, stdout=sys.stdout, lang=args.lang,
                             charset=args.charset, hint=human_hint())
    printer = None if args.quiet else ConsolePrinter()
    return trio.run(main, None, printer)


class SeatGlue:
    """Who plays this seat: a bot (``decide`` answers at once) or a person through a UI bridge
    (intents forwarded to the node, views and refusals sent back). ``kwargs()`` goes straight
    into :func:`~p2p_chinchon.net.session.host_game` / ``join_game``."""

    def __init__(self, bridge: Any, *, bot: bool, rules: Any = None, rng: Any = None, printer: Any = None,
                 level: str = "easy") -> None:
        import trio

        self.bridge = bridge
        self.bot = bot
        self.rules = rules
        self.rng = rng
        self.printer = printer
        self.level = level
        self.node: Any = None
        self._got = trio.Event()
        self._decide: Any = None

    def status(self, text: str) -> None:
        if self.bridge is not None:
            self.bridge.set_status(text)
        else:
            print(text, file=sys.stderr, flush=True)

    def node_ready(self, node: Any) -> None:
        self.node = node
        self._got.set()

    async def forward(self) -> None:
        """Run in a nursery: forward the person's intents to the node."""
        if self.bridge is None:
            return
        await self._got.wait()
        async for intent in self.bridge.intents:
            self.node.submit(intent)

    def decide(self, view: v.SeatView, need: str) -> Any:
        if not self.bot:
            return None  # the person answers through the UI
        if self._decide is None:
            from p2p_chinchon.autoplay import bot_decider
            from p2p_chinchon.local import make_bot

            self._decide = bot_decider(make_bot(self.rules or view.rules, self.rng, self.level))
        return self._decide(view, need)

    def kwargs(self) -> dict:
        b = self.bridge
        return {
            "decide": self.decide,
            "on_update": b.update if b is not None else self.printer,
            "on_reject": b.reject if b is not None else None,
            "node_ready": self.node_ready,
        }
