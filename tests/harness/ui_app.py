"""The headless terminal UI's harness: prompt_toolkit's pipe input and a dummy 80x24 output,
trio in guest mode on the asyncio loop, and waits on what the UI has handled."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import trio
from prompt_toolkit.data_structures import Size
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2p_chinchon.ui.app import TableApp, run_with_ui_async
from p2p_chinchon.ui.screen import FINAL
from p2p_chinchon.ui.screen_state import HintFn


class Output80x24(DummyOutput):
    def get_size(self) -> Size:
        return Size(rows=24, columns=80)


def play(script: Callable[[Any, Callable[[str], None], TableApp], Awaitable[Any]], *, lang: str = "en",
         hint: HintFn | None = None, charset: str = "unicode", log_file: Any = None) -> tuple[Any, TableApp]:
    """Run ``script(bridge, keys, ui)`` as node_main under the UI; return its result and the
    UI. ``keys(text)`` types into the terminal. The final "press any key" is typed only once
    the UI shows the final screen (so that screen is really waited for)."""
    apps: list[TableApp] = []
    with create_pipe_input() as inp:

        async def node_main(bridge):
            loop = asyncio.get_running_loop()

            def finish():
                if apps[0].screen.mode == FINAL:
                    assert not apps[0].app.is_done  # the final screen waits for a key
                    inp.send_text("z")
                else:
                    loop.call_later(0.005, finish)

            try:
                with trio.fail_after(10):
                    return await script(bridge, inp.send_text, apps[0])
            finally:
                loop.call_soon(finish)

        result = asyncio.run(run_with_ui_async(
            node_main, lang=lang, charset=charset, pt_input=inp, pt_output=Output80x24(),
            hint=hint, on_app=apps.append, log_file=log_file))
    return result, apps[0]


async def next_intent(bridge: Any, timeout: float = 5) -> Any:
    with trio.fail_after(timeout):
        return await bridge.intents.receive()


async def until(cond: Callable[[], object], timeout: float = 5) -> None:
    """Wait until prompt_toolkit has handled the keys typed so far (``cond`` holds)."""
    with trio.fail_after(timeout):
        while not cond():
            await trio.sleep(0.005)


async def settle() -> None:
    """Let prompt_toolkit read pending keys and redraw (it runs on the same loop)."""
    for _ in range(5):
        await trio.sleep(0.01)
