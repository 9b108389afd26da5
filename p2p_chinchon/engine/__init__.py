"""Rules of Chinchón: cards, rule presets, melds, closing, lay-off, scoring and the game
state machine. Sans-I/O: no network, clock or ``random``; it never needs secrets.

Sources: the four rule documents in ``shared/rules/`` (000 classic, 001 online, 002 fournier,
003 cardgames); the presets and every choice where they are silent are in ``docs/rules.md``.
"""

from .cards import JOKER, TEN, Card, CardError, parse_card, parse_cards, split_card_text
from .game import (
    Action,
    Close,
    Closed,
    Dealt,
    Discard,
    Discarded,
    DrawDiscard,
    DrawStock,
    Drew,
    Eliminated,
    Event,
    Game,
    GameError,
    GameOver,
    HandScored,
    HandVoid,
    IllegalAction,
    Phase,
    Reenter,
    Reentered,
    ReentryOffered,
    Restock,
    Restocked,
    RestockNeeded,
    StockDead,
)
from .hands import check_hands
from .melds import (
    Arrangement,
    ClosedHand,
    CloseOption,
    Meld,
    best_arrangement,
    best_arrangement_bruteforce,
    can_close,
    close_options,
    close_result,
    is_chinchon,
    make_meld,
)
from .rules import FIELD_HELP, PRESET_DOCS, PRESETS, Rules, RulesError, make_rules
from .scoring import LayOff, PlayerShowdown, Showdown, ShowdownError, check_showdown, score_showdown, score_standing

__all__ = [
    "JOKER", "TEN", "Card", "CardError", "parse_card", "parse_cards", "split_card_text",
    "Action", "Close", "Closed", "Dealt", "Discard", "Discarded", "DrawDiscard", "DrawStock",
    "Drew", "Eliminated", "Event", "Game", "GameError", "GameOver", "HandScored", "HandVoid",
    "IllegalAction", "Phase", "Reenter", "Reentered", "ReentryOffered", "Restock", "Restocked",
    "RestockNeeded", "StockDead", "score_standing",
    "Arrangement", "ClosedHand", "CloseOption", "Meld", "best_arrangement",
    "best_arrangement_bruteforce", "can_close", "close_options", "close_result", "is_chinchon",
    "make_meld",
    "FIELD_HELP", "PRESET_DOCS", "PRESETS", "Rules", "RulesError", "make_rules",
    "LayOff", "PlayerShowdown", "Showdown", "ShowdownError", "check_showdown", "score_showdown",
    "check_hands",
]
