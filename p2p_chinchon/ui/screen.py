"""The table screen as a pure model: what a :class:`SeatView` looks like, and what keys do.

:class:`TableScreen` holds only UI-local state (card order, the picked card, the typed buffer,
prompts); it never decides a rule. Keys become intents through ``send``; the table checks them
with the engine, and refusals come back through :meth:`TableScreen.rejected`.
:meth:`TableScreen.render` lays the whole screen out for any size (80x24 upward stays readable;
smaller sizes drop the move log first, then the rules text, then seats), so the same function
serves the prompt_toolkit control, resizes and headless tests.

The class is put together from three modules, one concern each:

* :mod:`.screen_state` - :class:`ScreenState`: the view, what is tracked between views, the
  mode and prompts, the hand's display order and the picked card (and the screen modes);
* :mod:`.screen_keys` - :class:`ScreenKeys`: what each key does (and the answer keys);
* :mod:`.screen_layout` - :class:`ScreenLayout`: the lines the screen shows, and ``render``.

Every public name this module had is still importable from here (re-exported, see ``__all__``).
"""

from __future__ import annotations

from ..schedule import PROGRESS_KEYS
from .screen_keys import BLOCK_KEYS, COMMAND_KEYS, NO_KEYS, YES_KEYS, ScreenKeys
from .screen_layout import NOTICE_LINES, STATUS_LINES, V_PHASES, ScreenLayout, lay_off_targets
from .screen_state import (
    AFTER_CLOSE,
    ASK,
    CONFIRM_QUIT,
    DEFAULT_SHOWDOWN_TIME,
    FINAL,
    HELP,
    HOLD,
    NORMAL,
    NOTICES_KEPT,
    PICKER,
    PILE,
    RECALL,
    EveningFn,
    HintFn,
    ScreenState,
    must_agree,
    new_game,
)

__all__ = [
    "AFTER_CLOSE", "ASK", "BLOCK_KEYS", "COMMAND_KEYS", "CONFIRM_QUIT", "DEFAULT_SHOWDOWN_TIME", "FINAL", "HELP",
    "HOLD", "NORMAL", "NOTICES_KEPT", "NOTICE_LINES", "NO_KEYS", "PICKER", "PILE", "PROGRESS_KEYS", "RECALL",
    "STATUS_LINES", "V_PHASES", "YES_KEYS", "EveningFn", "HintFn", "ScreenKeys", "ScreenLayout", "ScreenState", "TableScreen",
    "lay_off_targets", "must_agree", "new_game",
]


class TableScreen(ScreenKeys, ScreenLayout):
    """UI state and layout for one seat's table screen: :class:`ScreenState` (its constructor:
    ``tr``, ``faces``, ``send``, ``hint``, ``exit``, ``force_quit``, ``clock``), with the keys
    of :class:`ScreenKeys` and the layout of :class:`ScreenLayout`."""
