"""Menus and messages in English, Spanish and French (the languages of the rule documents).

``Translator(lang)(key, **fields)`` formats one message. The language comes from ``--lang`` or
the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``), English when none of them
names a language we have. The English messages are the source (:data:`EN`, by key); the
translations are gettext catalogues (``locale/<lang>/LC_MESSAGES/p2p_chinchon.po``, compiled to
``.mo`` and read with :mod:`gettext`: ``pgettext(key, english)``, ``npgettext`` for a message
whose words follow a number). ``tools/catalogues.py`` keeps them in step with :data:`EN`.
Every message exists in every language with the same ``{fields}`` (tests/test_ui_i18n.py); a
message missing from a catalogue falls back to English, and an unknown key raises KeyError (a
programming error, not bad input).
"""

from __future__ import annotations

import functools
import gettext
import os
import string
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .view import Fault

NOBODY = "nobody"  # a stalled Fault's detail: nobody of the table answered a seat back from away

LANGS = ("en", "es", "fr")
SOURCE_LANG = "en"  # the messages' own language: the catalogues translate from it
DOMAIN = "p2p_chinchon"  # the gettext domain: locale/<lang>/LC_MESSAGES/p2p_chinchon.mo



@dataclass(frozen=True)
class Plural:
    """An English message whose words follow a number: ``one`` and ``many``, the singular and
    plural templates (gettext's ``msgid`` and ``msgid_plural``), chosen in every language by the
    number in the field ``count`` (each form a template, or a Plural for a second count). Built
    with :func:`plural`."""

    count: str
    one: str | Plural
    many: str | Plural


def plural(count: str, one: str | Plural, many: str | Plural) -> Plural:
    """The catalogue entry of a message in its singular (``one``) and plural (``many``) forms,
    chosen by the field ``count``: ``plural("n", "{n} card", "{n} cards")``."""
    return Plural(count, one, many)


Message = str | Plural

EN: dict[str, Message] = {
    # header and phases
    "connecting": "connecting…",
    "hand_no": "hand {n}",
    "phase_lobby": "lobby",
    "phase_shuffling": "shuffling and dealing",
    "phase_playing": "playing",
    "phase_restocking": "stock empty: reshuffling the discard pile",
    "phase_showdown": "showdown",
    "phase_hand_over": "hand over",
    "phase_reentry": "re-entry",
    "phase_over": "game over",
    "phase_stopped": "table stopped",
    "your_turn_draw": "your turn: draw a card",
    "your_turn_discard": "your turn: discard or close",
    "your_turn_busy": "your turn: getting your card…",
    "your_turn_share": "your turn: getting your card: waiting for {name}'s share",
    "other_turn": "{name} to play",
    "winner": "{name} wins the game!",
    # seats
    "you": "(you)",
    "dealer_mark": "dealer",
    "out": "out",
    "bot": "bot",
    "offline": "offline",
    "agreed": "agreed",
    "n_cards": plural("n", "{n} card", "{n} cards"),
    "total_n": "total {n}",
    "took": "took",
    # table
    "discard_pile": "Discard pile",
    "empty": "empty",
    "stock": "Stock",
    "your_hand": "Your hand",
    "deadwood_n": "deadwood {n}",
    "deadwood_after": "deadwood {n} after discarding {card}",
    "melds_n": "melds {n}",
    "no_cards": "no cards",
    "custom_order": "your order; g regroups",
    "chinchon": "chinchón!",
    "may_close": "You may close (c): {options}",
    "no_close": "You may not close: too much deadwood.",
    "no_close_first_round": "Nobody may close in the first round.",
    # showdown
    "closed_by": "{name} closed.",
    "last_hand": "Last hand ({n}):",
    "laid_off": "laid off",
    "deadwood": "deadwood",
    "hand": "Hand",
    "total": "Total",
    "is_out": plural("total", "{name} is out ({total} point).", "{name} is out ({total} points)."),
    "reentry_question": "You are out. Buy back in? y = yes, n = no",
    "stopped": "The table stopped: {reason}",
    "blame": "Blamed: {name} ({rule})",
    # lobby
    "proposed_rules": "Proposed rules:",
    "press_a_to_agree": "Press a to agree to these rules and seats.",
    "agreed_waiting": "You agreed; waiting for the other seats.",
    "already_agreed": "You have already agreed.",
    "tables_heard": "Tables heard on the LAN (↑↓ choose, Enter join, q quit):",
    "no_tables_yet": "Listening… no table heard yet.",
    "seats_n": "{taken}/{max} seats",
    # messages
    "refused": "Refused: {reason}",
    "log_refused": "A connection was refused (details in {path})",
    "leaving": "Leaving the table…",
    "confirm_quit": "Leave the table? y = yes, n = no",
    "exit_tally": plural("n", "tonight, {n} game: {rows}", "tonight, {n} games: {rows}"),
    "sheet_tonight": "tonight",
    "sheet_near": plural("n",
                         "{name} is {n} point from the limit ({limit}): a bust is out for good.",
                         "{name} is {n} points from the limit ({limit}): a bust is out for good."),
    "sheet_near_buyback": plural("n",
                                 "{name} is {n} point from the limit ({limit}): going over, they may buy back in.",
                                 "{name} is {n} points from the limit ({limit}): going over, they may buy back in."),
    "sheet_tonight_note": "tonight: games won / played this evening before this one",
    "exit_tally_row": plural("wins",  # English says "won" for any {wins}; other languages do not
                             plural("points", "{name} {wins} won ({points} point)", "{name} {wins} won ({points} points)"),
                             plural("points", "{name} {wins} won ({points} point)", "{name} {wins} won ({points} points)")),
    "pile_title": "Discard pile this hand: what each player threw (+ took), oldest first",
    "pile_reshuffles": plural("n",
                              "The stock was re-made {n} time this hand.",
                              "The stock was re-made {n} times this hand."),
    "pile_help": "Any key goes back to the table.",
    "confirm_close": plural("points",
                            "Close with {card} ({points} point)? It is signed and cannot be undone.",
                            "Close with {card} ({points} points)? It is signed and cannot be undone."),
    "confirm_chinchon": "Close with {card}: a chinchón! It wins the game at once. It is signed and cannot be undone.",
    "confirm_chinchon_score": plural("points",
                                     "Close with {card}: a chinchón ({points} point)! It is signed and cannot be undone.",
                                     "Close with {card}: a chinchón ({points} points)! It is signed and cannot be undone."),
    "confirm_close_over": plural("points",
                                 "Close with {card} ({points} point)? You would have {total}: over {limit}!",
                                 "Close with {card} ({points} points)? You would have {total}: over {limit}!"),
    "bad_card_name": "No such card in your hand: {text}",
    "waiting_table": "Waiting for the table…",
    "not_your_turn": "It is not your turn.",
    "already_drew": "You have drawn already: discard or close.",
    "discard_empty": "The discard pile is empty.",
    "draw_first": "Draw first: s = stock, d = discard pile.",
    "pick_first": "Pick a card first (← →, 1-8 or its name).",
    "close_with_other": "To close, discard {card} ({points}).",
    "no_hint": "No hint available.",
    "hint": "Hint: {text}",
    "press_any_key": "Press any key to finish.",
    "press_any_key_l": "l: the last showdown. Press any key to finish.",
    "game_finished": "The session has ended.",
    "node_failed": "The node stopped with an error: {error}",
    # showdown hold, score sheet, hints as intents, last turns
    "no_showdown_yet": "No hand has been shown yet.",
    "more_below": "… ↓ more (↑ ↓ scroll)",
    "more_above": "… ↑ back (↑ ↓ scroll)",
    "showdown_of": "Hand {n}, as shown:",
    "keys_showdown": "any key: back to the table · l shows it again",
    "sheet_reentry": "re-in",
    "sheet_out": "out at {total} after hand {n}",
    "sheet_in": "re-entered at {total}",
    "sheet_note": "{name}: {events}",
    "hint_wait": "wait for your turn",
    "hint_stock": "draw from the stock",
    "hint_take": "take {card} from the discard pile",
    "hint_discard": "discard {card}",
    "hint_close": plural("points",
                         "close, putting {card} face down ({points} point)",
                         "close, putting {card} face down ({points} points)"),
    "turn_drew": "drew, threw {card}",
    "turn_took": "took {took}, threw {card}",
    "progress_key": "Making the hand's key: {name} ({n} of {total})",
    "progress_shuffle": "Shuffling: {name} ({n} of {total})",
    "progress_deal": "Dealing: {name} ({n} of {total})",
    "progress_check": "Checking the hand: {name} ({n} of {total})",
    "progress_toss": "Tossing for the first dealer: {name} ({n} of {total})",
    "you_name": "You",
    "your_table": "Your table",
    "lobby_waiting_seat": "At {table}: the game starts when every seat is taken.",
    "lobby_waiting_more": "Seats {taken} of {max} taken · waiting for {n} more.",
    "lobby_full": "Every seat is taken: the host signs the seating.",
    "free_seat": "(free seat)",
    "status_host_open": "open on port {port} · waiting for {n} more · your fingerprint {fp}",
    "status_joining": "connecting to {addr}…",
    "status_joining_code": "asking the mailbox who holds code word {code} (the host's laptop must be showing it; up to {s} s)…",
    "exit_seat": "seat {n}",
    "exit_who": "seat {n} ({name})",
    "exit_nobody": "nobody",
    "exit_stopped": "table stopped: {who}: {rule}: {reason}",
    "exit_winner": "winner: {name} (seat {n})",
    "exit_totals": "totals: {totals}",
    "exit_transcript": "transcript: {path}",
    "exit_check": "check it:   p2p-chinchon audit {path}",
    "exit_all": "all transcripts: {path}",
    # key bars
    "keys_picker": "↑↓ choose · Enter join · 1-9 join by number · q quit",
    "keys_yes_no": "y yes · n no",
    "typing": "card:",
    "keys_idle": "? help · q quit",
    "keys_lobby": "a agree · ? help · q quit",
    "keys_draw": "s draw stock · d take discard · h hint · ? help · q quit",
    "keys_discard": "←→/1-8 pick · Enter discard · c close · </> move · h hint · ? help · q quit",
    "keys_wait": "←→ pick · </> move · g regroup · l last hand · ? help · q quit",
    "help_text": (
        "Keys\n"
        "  s            draw from the stock\n"
        "  d            take the top card of the discard pile\n"
        "  ← → or 1-8   pick a card; Enter discards it\n"
        "  7d Enter     type a card name to pick it (K♠: Ks; 7 oros: 7o)\n"
        "  c            close with the picked card (when the screen says you may)\n"
        "  < >          move the picked card; g groups melds again\n"
        "  h            hint (picks its card)    a  agree (lobby)    y n  yes, no\n"
        "  l            the last hand's showdown and the score sheet\n"
        "  p            the discard pile: who threw what this hand\n"
        "  q            leave the table (asks first)\n"
        "  Ctrl-L       repaint the screen\n"
        "The clock in the status line (0:42) is the time left for the move awaited;\n"
        "when yours runs out, the bot plays it for you.\n"
        "Any key closes this help."
    ),
    # line mode
    "line_help": (
        "commands: draw stock|discard (s, d) · discard CARD|N (or just CARD, N) · close CARD|N · "
        "agree · reenter yes|no · hint (h) · l (last hand) · help · quit"
    ),
    "line_prompt_draw": "Your turn: draw stock or draw discard.",
    "line_prompt_discard": "Your turn: discard CARD or close CARD.",
    "line_prompt_lobby": "Type agree to accept these rules and seats.",
    "line_prompt_reentry": "You are out: reenter yes or reenter no?",
    "line_prompt_pick": "Type a table number, or quit.",
    "line_prompt_ask": "{question} (yes/no)",
    "unknown_command": "Unknown command: {text} (type help)",
    "need_card": "Which card? For example: {cmd} 7d",
    "need_source": "Draw from where? draw stock or draw discard",
    "reentry_yes_no": "Say reenter yes or reenter no.",
    "not_offered_reentry": "Nobody has asked you to re-enter.",
    "not_in_lobby": "There is nothing to agree to now.",
    "bad_table_number": "No table number {text}.",
    "end_of_input": "end of input",
    "line_close_options": "You may close: {options}",
    "line_game_state": "stock {stock} · discard pile {top} ({size})",
    # rules in words
    "rule_preset": "Preset: {preset}.",
    "rule_deck_40": "40-card pack: A to 7, then J, Q, K (7 and J are neighbours in runs).",
    "rule_deck_48": "48-card pack: A to 9, then J, Q, K.",
    "rule_deck_52": "52-card pack: A to 10, then J, Q, K.",
    "rule_deck_40_spanish": "40-card pack: 1 to 7, then sota, caballo, rey (7 and sota are neighbours in runs).",
    "rule_deck_48_spanish": "48-card pack: 1 to 9, then sota, caballo, rey.",
    "rule_one_pack": "One pack.",
    "rule_two_packs": "Two packs.",
    "rule_two_packs_from": "Two packs from {n} players on.",
    "rule_players": "{lo} to {hi} players.",
    "rule_jokers": plural("n", "{n} joker per pack, wild.", "{n} jokers per pack, wild."),
    "rule_wild_card": "{card} is wild.",
    "rule_wild_card_spanish": "The {rank} of {suit} is wild.",
    "rule_wild_points": plural("n",
                               "An unmatched wild card costs {n} point.",
                               "An unmatched wild card costs {n} points."),
    "rule_wild_per_meld": plural("n",
                                 plural("m", "At most {n} wild card per meld, with at least {m} real card.",
                                             "At most {n} wild card per meld, with at least {m} real cards."),
                                 plural("m", "At most {n} wild cards per meld, with at least {m} real card.",
                                             "At most {n} wild cards per meld, with at least {m} real cards.")),
    "rule_close_wild_unmatched": "A wild card may be the unmatched card of a close.",
    "rule_close_wild_matched": "A wild card may not stay unmatched in a close.",
    "rule_wild_no_cap": plural("m", "Any number of wild cards in a meld, with at least one real card.",
                               "Any number of wild cards in a meld, with at least {m} real cards."),
    "rule_wild_chinchon_one": "A seven-card run with a wild card scores {a}.",
    "rule_court_flat": "J, Q and K are worth 10 points each.",
    "rule_court_rank": "J, Q and K are worth 10, 11 and 12 points.",
    "rule_court_flat_spanish": "Sota, caballo and rey are worth 10 points each.",
    "rule_court_rank_spanish": "Sota, caballo and rey are worth 10, 11 and 12 points.",
    "rule_suits_french": "French card faces (♠ ♥ ♦ ♣).",
    "rule_suits_spanish": "Spanish card faces (oros, copas, espadas, bastos).",
    "rule_close_all": "Close only with all seven cards matched.",
    "rule_close_one": "Close with all matched, or six matched and one card worth {p} or less.",
    "rule_close_many": "Close with at most {n} unmatched cards worth {p} or less in all.",
    "rule_first_round_ban": "Nobody may close in the first round.",
    "rule_no_first_round_ban": "Closing is allowed from the first turn.",
    "rule_clean_close": "Closing with all seven matched scores {n}.",
    "rule_chinchon_wins": "A chinchón (seven-card run in one suit) wins the game at once.",
    "rule_chinchon_no_win": "A chinchón does not end the game.",
    "rule_wild_chinchon": "A seven-card run with one wild card scores {a}; with two, {b}.",
    "rule_lay_off_all": "After a close, players lay off on any meld on the table.",
    "rule_lay_off_closer": "After a close, players lay off only on the closer's melds.",
    "rule_lay_off_none": "Nobody lays off after a close.",
    "rule_after_clean_same": "Laying off works the same after a clean close.",
    "rule_after_clean_others": "After a clean close, nobody lays off on the closer's melds.",
    "rule_after_clean_none": "After a clean close, nobody lays off.",
    "rule_limit": plural("n", "Over {n} point you are out.", "Over {n} points you are out."),
    "rule_reentries": plural("n",
                             "You may buy back in {n} time while {m} or more players are in, at the highest total.",
                             "You may buy back in {n} times while {m} or more players are in, at the highest total."),
    "rule_reentry_once": "You may buy back in once while {m} or more players are in, at the "
                         "highest total.",
    "rule_no_reentry": "No buying back in.",
    "rule_proof_rounds": plural("k", "Shuffle proofs use {k} round.", "Shuffle proofs use {k} rounds."),
    "rule_proof_tw": "Shuffle proofs: Terelius-Wikström.",
    "rule_showdown_time": "Each showdown stays up {n} s, or until everyone pressed a key.",
    "rule_no_showdown_time": "The next hand is dealt right after each showdown.",
    "rule_turn_time": plural("s",
                             "{s} second per move; then the bot plays it.",
                             "{s} seconds per move; then the bot plays it."),
    "rule_no_turn_time": "No clock on moves.",
    "help_clock": "Turn clock here: {s} s a move, full every turn, from when the turn reaches you (after the showdown).",
    "help_no_clock": "This table has no turn clock.",
    "rule_rejoin_wait": plural("s",
                               "A disconnected player is waited for {s} second.",
                               "A disconnected player is waited for {s} seconds."),
    "rule_stall_limit": "Without a majority of the players to remove the absent, the table waits {m} min, then stops (resumable).",
    "rule_max_reshuffles": plural("n",
                                  "A hand whose stock runs out after {n} re-shuffle is void.",
                                  "A hand whose stock runs out after {n} re-shuffles is void."),
    "rule_max_reshuffles_score": plural("n",
                                        "A hand whose stock runs out after {n} re-shuffle ends: every hand scores as it stands.",
                                        "A hand whose stock runs out after {n} re-shuffles ends: every hand scores as it stands."),
    "rule_no_discard_taken": "The card taken from the discard pile may not be thrown back in the same turn.",
    "void_reshuffles": "the stock ran out too many times",
    # the move log (ui/logtext.py) and the own seat in the second person
    "log_opened": "Table {table} opened",
    "log_fault": "Fault by {name} ({rule}): {reason}",
    "log_dropped": "Ignored a bad frame said to be from {name} ({rule}): {reason}",
    "log_stopped_by": "{name} stopped the table: {reason}",
    "log_stopped_by_you": "You stopped the table: {reason}",
    "log_game_over_nobody": "Game over: nobody wins",
    "log_sat": "{name} sat down ({k}/{n})",
    "log_sat_you": "You sat down ({k}/{n})",
    "log_unseated": "{name} left ({k}/{n})",
    "log_seated": "Seats: {names}",
    "log_agreed": "{name} agreed to the table",
    "log_agreed_you": "You agreed to the table",
    "log_first_dealer": "{name} deals first (coin toss)",
    "log_first_dealer_you": "You deal first (coin toss)",
    "log_hand_deals": "Hand {n}: {name} deals",
    "log_hand_deals_you": "Hand {n}: you deal",
    "log_dealt": "Cards dealt; the upcard is {card}",
    "log_draw_stock": "{name} draws from the stock",
    "log_draw_stock_you": "You draw from the stock",
    "log_draw_discard": "{name} takes {card} from the discard pile",
    "log_draw_discard_you": "You take {card} from the discard pile",
    "log_discard": "{name} discards {card}",
    "log_discard_you": "You discard {card}",
    "log_close": "{name} closes!",
    "log_close_you": "You close!",
    "log_restock": plural("n",
                          "The stock is empty: every seat reshuffles {n} discard",
                          "The stock is empty: every seat reshuffles {n} discards"),
    "log_void": "Hand void: {reason}",
    "log_dead_hand": "The stock ran out too many times: every hand is shown and scores as it stands",
    "log_game_over": "Game over: {name} wins",
    "log_game_over_you": "Game over: you win!",
    "log_out": "{name} is out",
    "log_out_you": "You are out",
    "log_reentry_offer": "{name} may buy back in",
    "log_reentry_offer_you": "You may buy back in",
    "log_reentered": "{name} buys back in",
    "log_reentered_you": "You buy back in",
    "log_scores": "Points this hand: {scores}",
    "log_left": "{name} left: {reason}",
    "log_left_you": "You left: {reason}",
    "log_left_table": "{name} left the table",
    "log_left_table_you": "You left the table",
    "you_left": "you left the table",
    "you_nobody": "nobody of this table answers: they may have finished without you; your record is resumable (p2p-chinchon resume comes back to the game if they are still playing)",
    "you_stalled": "the table could not go on without the absent players: stopped waiting, signing nothing (p2p-chinchon resume comes back to the game)",
    "you_removed_absent": "you were removed from the game (absent since hand {n})",
    "you_removed_left": "you were removed from the game (left since hand {n})",
    "log_removed_absent": "{name} was away too long: out of the game for good, the others play on",
    "log_removed_left": "{name} left the game for good: the others play on",
    "log_voided": "Hand {n} voided: {name} left",
    "log_unsigned_end": "The game's end is signed by a majority, not by {all} (away): the result stands",
    "left_mark": "left",
    "confirm_leave_game": "Leave the game for good? The others play on without you. y = yes, n = no",
    "you_are_out": plural("total", "You are out ({total} point).", "You are out ({total} points)."),
    "you_closed": "You closed.",
    "you_win": "You win the game!",
    "enter_discards": "Enter discards {card}",
    # the status line: who is awaited, for what, how long ({left}: " (1:55)" or "")
    "st_mine_agree": "your turn to accept the table{left}",
    "st_mine_draw": "your turn to draw{left}",
    "st_mine_discard": "your turn to discard or close{left}",
    "st_mine_reenter": "your turn to answer the re-entry offer{left}",
    "st_mine_step": "this seat: {what}",
    "st_wait_agree": "waiting for {name} to accept the table{left}",
    "st_wait_draw": "waiting for {name} to draw{left}",
    "st_wait_discard": "waiting for {name} to discard or close{left}",
    "st_wait_reenter": "waiting for {name} to answer the re-entry offer{left}",
    "st_wait_step": "waiting for {name}: {what}{left}",
    "st_connecting": "waiting for {name} to connect{left}",
    "st_absent": "{name} disconnected: waiting for them{left}",
    "st_blocked": "{name} disconnected: the table cannot play on without them (no majority here to remove them); waiting{left}",
    "st_end": "{name} disconnected before signing the game's end: without them no majority has signed it (nobody can be removed now); waiting{left}",
    "st_votes": "{name} is gone: removing them needs {need} players' votes, {have} so far{left}",
    "st_minority": "{name} and the other players out of reach are a majority of the table: if they are together, they remove you and play on without you; waiting, signing nothing{left}",
    "st_hears": "the others are removing {gone}, whom this laptop still hears: waiting{left}",
    "st_nobody": "this laptop was away and nobody of this table answers yet: they may have finished without you{left}",
    "st_listening": "this laptop was away: reconnecting and catching up before playing on{left}",
    "st_cutoff": "no other player can be reached from this laptop: waiting for them, signing nothing{left}",
    "st_removing": "{gone} is gone: removing them from the game (waiting for {name}'s signature){left}",
    "st_removing_mine": "{gone} is gone: removing them from the game (waiting for this seat's own clock for them){left}",
    "st_disconnected": "{name} disconnected",
    "st_back": "{name} is back",
    "st_relayed": "through the relay: {names}",
    "code_word": "code word: {code} (say it to one friend, who types: p2p-chinchon join --code {join}; a new one follows each join)",
    "code_wrong": "someone typed a wrong code word (that one is burnt): a new one follows",
    "code_met": "a friend used code word {code}: they are on their way in",
    "code_mailbox_down": "the code-word mailbox cannot be reached: no new code word until it answers (trying again every {s} s); the table stays open",
    "ask_seat_came": plural("n", "{n} already seated from this address.", "{n} already seated from this address."),
    "ask_seat_block": "(b: refuse everyone from {address})",
    "ask_seat_queued": plural("n", "{n} more waiting.", "{n} more waiting."),
    "lobby_host_gone": "the host's lobby closed before seating (it may have crashed): waiting up to {s} s for it to open again (the host runs the same command); q leaves",
    "lobby_wait_host": "waiting for the host to let you sit down (your fingerprint {fp}: the host checks it on their screen; up to {s} s; q leaves)",
    "lobby_seated": "seated (your fingerprint {fp}): waiting for the table to fill",
    "lobby_left_early": "{name} left before sitting down",
    "lobby_prompt_expired": "nobody answered {name} within {s} s: the request expired",
    "lobby_address_refused": "everyone from {address} is refused until the table starts",
    "ask_seat_request": "{name} [{fingerprint}] from {address} asks to sit down. Seat them?",
    "st_wait_told": "waiting for {name}, removed while away, to learn how the game went{left}",
    "st_wait_record": "waiting for {name} to confirm it holds the whole record{left}",
    "st_wait_rematch": "rematch: waiting for {name} to answer{left}",
    "st_bot_agree": "time is up: the bot plays for you (accept the table)",
    "st_bot_draw": "time is up: the bot plays for you (draw)",
    "st_bot_discard": "time is up: the bot plays for you (discard or close)",
    "rematch_ask": "Game over. Rematch: same players, same rules, a new game?",
    "rematch_on": "everyone agreed: a rematch, same players and rules (a new game, a new shuffle)",
    "rematch_declined": "{name} declined the rematch: the evening ends here",
    "rematch_gone": "{name} left: no rematch",
    "rematch_none": "{name} came back to this game after a crash, and a game resumed offers no rematch: run host or join again for a new game",
    "rematch_none_code": "a code-word table offers no rematch yet: run host --code and join --code again for a new game",
    "rematch_none_one": "{name} plays one game only (a bot seat not told to play on, or no screen to ask): no rematch; run host or join again for a new game",
    "rematch_you_no": "you declined the rematch",
    "rematch_none_here": "no rematch from a game you came back to: run host or join again for a new game",
    "rematch_timeout": "not everyone answered the rematch in time: no rematch",
    "rematch_waiting": "rematch: waiting for the others to sit down again (game {n})",
    "rematch_failed": "the rematch could not start: {why}",
    "st_bot_reenter": "time is up: the bot plays for you (answer the re-entry offer)",
    "reach_cannot_dial": ("cannot reach {name} at {places}. {name} is probably behind a home router: play "
                          "over a VPN, or start {name} with --advertise / a forwarded --port; see docs/friends.md"),
    "reach_not_dialled": ("no connection from {names} at {places} after {seconds} s: you are probably behind "
                          "a home router: play over a VPN, or start again with --advertise / a forwarded "
                          "--port; see docs/friends.md"),
    "reach_linked": "{name} is linked now",
    "never_formed": ("the table never formed: the seats could not all reach each other ({reason}); nobody is "
                     "blamed: see docs/friends.md"),
    # the browser table (web/model.py PAGE_TEXTS, card words for screen readers)
    "web_draw_stock": "Take from the stock",
    "web_take_discard": "Take the discard",
    "web_discard": "Discard",
    "web_close": "Close",
    "web_hint": "Hint",
    "web_leave": "Leave the table",
    "web_agree": "Agree to this table",
    "web_yes": "Yes",
    "web_no": "No",
    "web_block": "Refuse the address",
    "web_continue": "Continue",
    "web_pile_history": "Pile history",
    "web_keys": "Keys",
    "web_scores": "Score sheet",
    "web_rules": "The rules",
    "web_players": "Players",
    "web_log": "What happened",
    "web_regroup": "Group the melds",
    "web_code_word": "Code word",
    "web_fingerprint": "fingerprint",
    "web_your_fingerprint": "your fingerprint",
    "web_to_limit": "to the limit",
    "web_connecting": "Connecting to the table…",
    "web_reconnecting": "The page lost its connection to the table: reconnecting…",
    "web_seat_gone": "This seat's program does not answer: if it stopped, run the same command again and open the new address it prints.",
    "web_ended": "This seat's session is over: you may close this tab.",
    "web_transcript": "Transcript",
    "web_tables": "Tables on the network",
    "web_choose": "Choose",
    "web_none": "None of these",
    "web_reenter_yes": "Buy back in",
    "web_reenter_no": "Stay out",
    "web_last_showdown": "Last showdown",
    "web_away": "away",
    "web_back": "back",
    "web_relayed": "through the relay",
    "web_drop_here": "Drop a card here to discard it",
    "web_lobby": "Waiting for players",
    "web_served": "the table is in your browser: {url}",
    "web_lingers": "the page stays up {s} s to show how it ended (Ctrl-C closes it now)",
    "web_card_alt": "{rank} of {suit}",
    "web_joker": "joker",
    "web_rank_1": "ace",
    "web_rank_2": "two",
    "web_rank_3": "three",
    "web_rank_4": "four",
    "web_rank_5": "five",
    "web_rank_6": "six",
    "web_rank_7": "seven",
    "web_rank_8": "eight",
    "web_rank_9": "nine",
    "web_rank_13": "ten",
    "web_rank_french_10": "jack",
    "web_rank_french_11": "queen",
    "web_rank_french_12": "king",
    "web_rank_spanish_10": "jack",
    "web_rank_spanish_11": "knight",
    "web_rank_spanish_12": "king",
    "web_suit_french_0": "diamonds",
    "web_suit_french_1": "hearts",
    "web_suit_french_2": "spades",
    "web_suit_french_3": "clubs",
    "web_suit_spanish_0": "coins",
    "web_suit_spanish_1": "cups",
    "web_suit_spanish_2": "swords",
    "web_suit_spanish_3": "clubs",
    "web_meld": "meld",
    "web_your_order": "your order",
    "web_points_n": "{n} pts",
    "web_penalty_n": plural("n", "{n} point", "{n} points"),
    "web_n_cards": plural("n", "{n} card", "{n} cards"),
    "web_close_with": "Close with {card} ({n})",
    "web_close_chinchon": "Chinchón with {card}!",
    "web_over_limit": "this close puts you over the limit",
    "web_discard_card": "Discard {card}",
    "web_stock_n": "stock {n}",
    "web_discard_n": "pile {n}",
    "web_hand_no": "hand {n}",
    "web_showdown_title": "Hand {n}: {name} closed",
    "web_closed": "closed",
    "web_laid_off_by": "laid off by {name}",
    "web_laid_off_n": "laid off {n}",
    "web_limit_n": plural("n", "out over {n} point", "out over {n} points"),
    "web_bought_back": "bought back in at {n}",
    "web_pile_title": "The discard pile this hand",
    "web_pile_empty": "Nothing thrown yet.",
    "web_pile_upcard": "the first card",
    "web_pile_threw": "{name} threw",
    "web_pile_took": "{name} took",
    "web_pile_reshuffle": plural("n", "{n} card reshuffled into the stock", "{n} cards reshuffled into the stock"),
    "web_waiting_for": "Waiting for {name}: {what}",
    "web_waiting_absent": "Waiting for {name} (offline): {what}",
    "web_wild": "wild",
    "web_card_back": "card back",
    "web_not_now": "Not now.",
    "web_close_pick": "Pick the card to close with first.",
    "web_close_not_now": "You may not close now.",
    "web_close_panel": "Close",
    "web_exit_code": "exit code {n}",
    "web_mouse_help": "Click a card to pick it, click it again or drag it onto the pile to discard it; drag cards to reorder your hand; click or drag the stock or the discard to draw.",
}

LOCALE_DIR = Path(__file__).parent / "locale"
Entry = tuple[str, str | tuple[str, str], str | None]


def gettext_entries(key: str, message: Message) -> Iterator[Entry]:
    """The gettext entries of one English message: ``(msgctxt, msgid, count)``, ``msgid`` a
    text or ``(singular, plural)`` and ``count`` the field whose number chooses the form. The
    context is the key; a message that follows two numbers is two entries, the first number's
    form in the context (``key|one``, ``key|many``), as :class:`Translator` looks them up."""
    if isinstance(message, str):
        yield key, message, None
    elif isinstance(message.one, str) and isinstance(message.many, str):
        yield key, (message.one, message.many), message.count
    else:
        yield from gettext_entries(f"{key}|one", message.one)
        yield from gettext_entries(f"{key}|many", message.many)


@functools.cache
def catalogue(lang: str) -> gettext.NullTranslations:
    """The compiled gettext catalogue of ``lang`` (``locale/<lang>/LC_MESSAGES/p2p_chinchon.mo``;
    English: the source itself). Raises OSError when a language of :data:`LANGS` has none (a
    broken install)."""
    if lang == SOURCE_LANG:
        return gettext.NullTranslations()
    return gettext.translation(DOMAIN, LOCALE_DIR, languages=[lang])


def detect_lang(lang: str | None = None, env: Mapping[str, str] | None = None) -> str:
    """The language to use: ``lang`` when given (e.g. "es", "fr_FR.UTF-8"), else the first
    locale variable set (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``); "en" when it
    names none of :data:`LANGS`. Raises ValueError for an explicit ``lang`` we do not have."""
    if lang:
        code = lang.split("_")[0].split(".")[0].split("-")[0].lower()
        if code not in LANGS:
            raise ValueError(f"unknown language {lang!r}: choose one of {', '.join(LANGS)}")
        return code
    env = os.environ if env is None else env
    for var in ("LC_ALL", "LC_MESSAGES", "LANG", "LANGUAGE"):
        value = env.get(var, "")
        if value:
            for part in value.split(":"):
                code = part.split("_")[0].split(".")[0].split("-")[0].lower()
                if code in LANGS:
                    return code
            return "en"  # the locale names a language we lack: English, not the next variable
    return "en"


def fields_of(template: Message) -> set[str]:
    """The ``{field}`` names used by a message template (every form of a :class:`Plural`)."""
    if isinstance(template, Plural):
        return {template.count} | fields_of(template.one) | fields_of(template.many)
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


def removed_text(fault: Fault, tr: Callable[..., str]) -> str:
    """The line for this seat removed by the others (a ``removed`` fault), in ``tr``'s
    language: "you were removed from the game (absent since hand 3)"; the fault's own
    English reason when it lacks the why and the hand."""
    if fault.detail in ("absent", "left") and fault.hand:
        return tr(f"you_removed_{fault.detail}", n=fault.hand)
    return fault.reason


def never_formed_text(fault: Fault | None, began: bool, tr: Callable[..., str]) -> str | None:
    """The line for a table stopped ``absent`` before its first hand (``began`` False): its
    seats never all reached each other, which blames nobody; else None."""
    if fault is None or began or fault.rule != "absent":
        return None
    return tr("never_formed", reason=fault.reason)


def own_stop_text(fault: Fault | None, seat: int | None, tr: Callable[..., str]) -> str | None:
    """The line for a table that stopped because ``seat`` (ours) left or was removed, or
    because this node stopped waiting (``stalled``), in ``tr``'s language; None when the
    fault is not about our own seat."""
    if fault is not None and fault.rule == "stalled":  # ours, blaming nobody
        return tr("you_nobody" if fault.detail == NOBODY else "you_stalled")
    if fault is None or fault.seat != seat:
        return None
    if fault.rule == "left":
        return tr("you_left")
    if fault.rule == "removed":
        return removed_text(fault, tr)
    return None


def _whole(value: Any) -> int | None:
    try:
        return abs(int(value))
    except (TypeError, ValueError):
        return None


class Translator:
    """``tr(key, **fields) -> str`` in one language (see the module docstring)."""

    def __init__(self, lang: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.lang = detect_lang(lang, env)
        self._t = catalogue(self.lang)
        # the language's plural rule (gettext's Plural-Forms); English: one for 1 only
        self._form: Callable[[int], int] = getattr(self._t, "plural", lambda n: int(n != 1))

    def _is_one(self, value: Any) -> bool:
        """Whether the number ``value`` takes the singular here (-1 as 1; not a whole number:
        the plural; French: 0 too)."""
        n = _whole(value)
        return n is not None and self._form(n) == self._form(1)

    def _pick(self, ctx: str, m: Message, fields: Mapping[str, Any]) -> str:
        if isinstance(m, str):
            return self._t.pgettext(ctx, m)
        if isinstance(m.one, str) and isinstance(m.many, str):
            n = _whole(fields.get(m.count))
            return self._t.npgettext(ctx, m.one, m.many, 2 if n is None else n)
        outer = "one" if self._is_one(fields.get(m.count)) else "many"
        return self._pick(f"{ctx}|{outer}", m.one if outer == "one" else m.many, fields)

    def _unfilled(self, ctx: str, m: Message) -> str | dict[str, Any]:
        if isinstance(m, str):
            return self._t.pgettext(ctx, m)
        one: str | dict[str, Any]
        many: str | dict[str, Any]
        if isinstance(m.one, str) and isinstance(m.many, str):
            one, many = (self._t.npgettext(ctx, m.one, m.many, n) for n in (1, 2))
        else:
            one, many = self._unfilled(f"{ctx}|one", m.one), self._unfilled(f"{ctx}|many", m.many)
        return {"count": m.count, "one": one, "many": many, "zero_is_one": self._is_one(0)}

    def template(self, key: str) -> str | dict[str, Any]:
        """The entry of ``key`` with its fields unfilled, for a front end that fills them itself
        (the browser page): a template string, or a plural entry as ``{"count": FIELD, "one":
        ..., "many": ..., "zero_is_one": bool}`` (each form a template or such an object; French
        says 0 in the singular). Raises KeyError for an unknown key."""
        return self._unfilled(key, EN[key])

    def __call__(self, key: str, **fields: Any) -> str:
        template = self._pick(key, EN[key], fields)  # KeyError: unknown key, a programming error
        return template.format(**fields) if fields else template
