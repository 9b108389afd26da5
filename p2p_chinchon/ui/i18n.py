"""Menus and messages in English, Spanish and French (the languages of the rule documents).

``Translator(lang)(key, **fields)`` formats one message. The language comes from ``--lang`` or
the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``, ``LANGUAGE``), English when none of them
names a language we have. Every key exists in all three catalogues with the same ``{fields}``
(tests/test_ui_i18n.py checks it); a key missing from a catalogue falls back to English and an
unknown key raises KeyError (a programming error, not bad input).
"""

from __future__ import annotations

import os
import string
from typing import Any, Mapping

LANGS = ("en", "es", "fr")

EN: dict[str, str] = {
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
    "other_turn": "{name} to play",
    "winner": "{name} wins the game!",
    # seats
    "you": "(you)",
    "dealer_mark": "dealer",
    "out": "out",
    "bot": "bot",
    "offline": "offline",
    "agreed": "agreed",
    "n_cards": "{n} cards",
    "total_n": "total {n}",
    "took": "took",
    # table
    "discard_pile": "Discard pile",
    "empty": "empty",
    "stock": "Stock",
    "your_hand": "Your hand",
    "deadwood_n": "deadwood {n}",
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
    "is_out": "{name} is out ({total} points).",
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
    "leaving": "Leaving the table…",
    "confirm_quit": "Leave the table? y = yes, n = no",
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
    "game_finished": "The session has ended.",
    "node_failed": "The node stopped with an error: {error}",
    # key bars
    "keys_picker": "↑↓ choose · Enter join · 1-9 join by number · q quit",
    "keys_yes_no": "y yes · n no",
    "typing": "card:",
    "keys_idle": "? help · q quit",
    "keys_lobby": "a agree · ? help · q quit",
    "keys_draw": "s draw stock · d take discard · h hint · ? help · q quit",
    "keys_discard": "←→/1-8 pick · Enter discard · c close · </> move · h hint · ? help · q quit",
    "keys_wait": "←→ pick · </> move · g regroup · ? help · q quit",
    "help_text": (
        "Keys\n"
        "  s            draw from the stock\n"
        "  d            take the top card of the discard pile\n"
        "  ← → or 1-8   pick a card; Enter discards it\n"
        "  7d Enter     type a card name to pick it (K♠: Ks; 7 oros: 7o)\n"
        "  c            close with the picked card (when the screen says you may)\n"
        "  < >          move the picked card; g groups melds again\n"
        "  h            hint    a  agree (lobby)    y n  answer a question\n"
        "  q            leave the table (asks first)\n"
        "Any key closes this help."
    ),
    # line mode
    "line_help": (
        "commands: draw stock|discard (s, d) · discard CARD|N · close CARD|N · agree · "
        "reenter yes|no · hint · help · quit"
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
    "rule_one_pack": "One pack.",
    "rule_two_packs": "Two packs.",
    "rule_two_packs_from": "Two packs from {n} players on.",
    "rule_players": "{lo} to {hi} players.",
    "rule_jokers": "{n} joker(s) per pack, wild.",
    "rule_wild_card": "{card} is wild.",
    "rule_wild_points": "An unmatched wild card costs {n} points.",
    "rule_wild_per_meld": "At most {n} wild card(s) per meld, with at least {m} real cards.",
    "rule_close_wild_unmatched": "A wild card may be the unmatched card of a close.",
    "rule_close_wild_matched": "A wild card may not stay unmatched in a close.",
    "rule_court_flat": "J, Q and K are worth 10 points each.",
    "rule_court_rank": "J, Q and K are worth 10, 11 and 12 points.",
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
    "rule_limit": "Over {n} points you are out.",
    "rule_reentries": "You may buy back in {n} time(s) while {m} or more players are in, "
                      "at the highest total.",
    "rule_reentry_once": "You may buy back in once while {m} or more players are in, at the "
                         "highest total.",
    "rule_no_reentry": "No buying back in.",
    "rule_proof_rounds": "Shuffle proofs use {k} rounds.",
    "rule_turn_time": "{s} seconds per move; then the bot plays it.",
    "rule_no_turn_time": "No clock on moves.",
    "rule_rejoin_wait": "A disconnected player is waited for {s} seconds.",
    # the move log (ui/logtext.py) and the own seat in the second person
    "log_opened": "Table {table} opened",
    "log_fault": "Fault by {name} ({rule}): {reason}",
    "log_dropped": "Ignored a bad frame said to be from {name} ({rule}): {reason}",
    "log_stopped_by": "{name} stopped the table: {reason}",
    "log_stopped_by_you": "You stopped the table: {reason}",
    "log_game_over_nobody": "Game over: nobody wins",
    "log_sat": "{name} sat down ({k}/{n})",
    "log_sat_you": "You sat down ({k}/{n})",
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
    "log_restock": "The stock is empty: every seat reshuffles {n} discards",
    "log_void": "Hand void: {reason}",
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
    "you_are_out": "You are out ({total} points).",
    "you_closed": "You closed.",
    "you_win": "You win the game!",
    "enter_discards": "Enter discards {card}",
}

ES: dict[str, str] = {
    "connecting": "conectando…",
    "hand_no": "mano {n}",
    "phase_lobby": "sala",
    "phase_shuffling": "barajando y repartiendo",
    "phase_playing": "en juego",
    "phase_restocking": "sin mazo: se baraja el descarte",
    "phase_showdown": "se muestran las manos",
    "phase_hand_over": "mano terminada",
    "phase_reentry": "reenganche",
    "phase_over": "partida terminada",
    "phase_stopped": "mesa detenida",
    "your_turn_draw": "tu turno: roba una carta",
    "your_turn_discard": "tu turno: descarta o cierra",
    "your_turn_busy": "tu turno: recibiendo tu carta…",
    "other_turn": "juega {name}",
    "winner": "¡{name} gana la partida!",
    "you": "(tú)",
    "dealer_mark": "reparte",
    "out": "fuera",
    "bot": "bot",
    "offline": "desconectado",
    "agreed": "de acuerdo",
    "n_cards": "{n} cartas",
    "total_n": "total {n}",
    "took": "cogió",
    "discard_pile": "Descarte",
    "empty": "vacío",
    "stock": "Mazo",
    "your_hand": "Tu mano",
    "deadwood_n": "sueltas {n}",
    "melds_n": "jugadas {n}",
    "no_cards": "sin cartas",
    "custom_order": "tu orden; g reagrupa",
    "chinchon": "¡chinchón!",
    "may_close": "Puedes cerrar (c): {options}",
    "no_close": "No puedes cerrar: demasiados puntos sueltos.",
    "no_close_first_round": "Nadie puede cerrar en la primera vuelta.",
    "closed_by": "{name} ha cerrado.",
    "last_hand": "Mano anterior ({n}):",
    "laid_off": "colocó",
    "deadwood": "sueltas",
    "hand": "Mano",
    "total": "Total",
    "is_out": "{name} queda fuera ({total} puntos).",
    "reentry_question": "Estás fuera. ¿Te reenganchas? s = sí, n = no",
    "stopped": "La mesa se detuvo: {reason}",
    "blame": "Culpable: {name} ({rule})",
    "proposed_rules": "Reglas propuestas:",
    "press_a_to_agree": "Pulsa a para aceptar estas reglas y asientos.",
    "agreed_waiting": "Has aceptado; esperando a los demás.",
    "already_agreed": "Ya has aceptado.",
    "tables_heard": "Mesas en la red local (↑↓ elegir, Intro unirse, q salir):",
    "no_tables_yet": "Escuchando… todavía ninguna mesa.",
    "seats_n": "{taken}/{max} asientos",
    "refused": "Rechazado: {reason}",
    "leaving": "Dejando la mesa…",
    "confirm_quit": "¿Dejar la mesa? s = sí, n = no",
    "bad_card_name": "No tienes esa carta: {text}",
    "waiting_table": "Esperando a la mesa…",
    "not_your_turn": "No es tu turno.",
    "already_drew": "Ya has robado: descarta o cierra.",
    "discard_empty": "El descarte está vacío.",
    "draw_first": "Roba primero: s = mazo, d = descarte.",
    "pick_first": "Elige antes una carta (← →, 1-8 o su nombre).",
    "close_with_other": "Para cerrar, descarta {card} ({points}).",
    "no_hint": "No hay pista.",
    "hint": "Pista: {text}",
    "press_any_key": "Pulsa una tecla para terminar.",
    "game_finished": "La sesión ha terminado.",
    "node_failed": "El nodo se detuvo con un error: {error}",
    "keys_picker": "↑↓ elegir · Intro unirse · 1-9 por número · q salir",
    "keys_yes_no": "s sí · n no",
    "typing": "carta:",
    "keys_idle": "? ayuda · q salir",
    "keys_lobby": "a aceptar · ? ayuda · q salir",
    "keys_draw": "s robar del mazo · d coger el descarte · h pista · ? ayuda · q salir",
    "keys_discard": "←→/1-8 elegir · Intro descartar · c cerrar · </> mover · h pista · q salir",
    "keys_wait": "←→ elegir · </> mover · g reagrupar · ? ayuda · q salir",
    "help_text": (
        "Teclas\n"
        "  s            robar del mazo\n"
        "  d            coger la carta de arriba del descarte\n"
        "  ← → o 1-8    elegir una carta; Intro la descarta\n"
        "  7o Intro     escribir el nombre de una carta para elegirla (sota esp.: Se)\n"
        "  c            cerrar con la carta elegida (cuando la pantalla lo permite)\n"
        "  < >          mover la carta elegida; g vuelve a agrupar las jugadas\n"
        "  h            pista    a  aceptar (sala)    s n  responder\n"
        "  q            dejar la mesa (pregunta antes)\n"
        "Cualquier tecla cierra esta ayuda."
    ),
    "line_help": (
        "órdenes: draw stock|discard (s, d) · discard CARTA|N · close CARTA|N · agree · "
        "reenter yes|no · hint · help · quit"
    ),
    "line_prompt_draw": "Tu turno: draw stock o draw discard.",
    "line_prompt_discard": "Tu turno: discard CARTA o close CARTA.",
    "line_prompt_lobby": "Escribe agree para aceptar estas reglas y asientos.",
    "line_prompt_reentry": "Estás fuera: ¿reenter yes o reenter no?",
    "line_prompt_pick": "Escribe el número de una mesa, o quit.",
    "line_prompt_ask": "{question} (sí/no)",
    "unknown_command": "Orden desconocida: {text} (escribe help)",
    "need_card": "¿Qué carta? Por ejemplo: {cmd} 7o",
    "need_source": "¿De dónde robas? draw stock o draw discard",
    "reentry_yes_no": "Di reenter yes o reenter no.",
    "not_offered_reentry": "Nadie te ha ofrecido reengancharte.",
    "not_in_lobby": "Ahora no hay nada que aceptar.",
    "bad_table_number": "No hay mesa número {text}.",
    "end_of_input": "fin de la entrada",
    "line_close_options": "Puedes cerrar: {options}",
    "line_game_state": "mazo {stock} · descarte {top} ({size})",
    "rule_preset": "Reglas: {preset}.",
    "rule_deck_40": "Baraja de 40 cartas: del 1 al 7, sota, caballo y rey (el 7 y la sota "
                    "son seguidos).",
    "rule_deck_48": "Baraja de 48 cartas: del 1 al 9, sota, caballo y rey.",
    "rule_deck_52": "Baraja de 52 cartas: del 1 al 10, J, Q y K.",
    "rule_one_pack": "Una baraja.",
    "rule_two_packs": "Dos barajas.",
    "rule_two_packs_from": "Dos barajas a partir de {n} jugadores.",
    "rule_players": "De {lo} a {hi} jugadores.",
    "rule_jokers": "{n} comodín(es) por baraja.",
    "rule_wild_card": "{card} hace de comodín.",
    "rule_wild_points": "Un comodín suelto cuenta {n} puntos.",
    "rule_wild_per_meld": "Como mucho {n} comodín(es) por jugada, con al menos {m} cartas "
                          "naturales.",
    "rule_close_wild_unmatched": "Se puede cerrar con un comodín suelto.",
    "rule_close_wild_matched": "No se puede cerrar con un comodín suelto.",
    "rule_court_flat": "Sota, caballo y rey valen 10 puntos cada uno.",
    "rule_court_rank": "Sota, caballo y rey valen 10, 11 y 12 puntos.",
    "rule_suits_french": "Cartas francesas (♠ ♥ ♦ ♣).",
    "rule_suits_spanish": "Cartas españolas (oros, copas, espadas, bastos).",
    "rule_close_all": "Solo se cierra con las siete cartas ligadas.",
    "rule_close_one": "Se cierra con todo ligado, o seis ligadas y una carta de {p} o menos.",
    "rule_close_many": "Se cierra con como mucho {n} cartas sueltas que sumen {p} o menos.",
    "rule_first_round_ban": "Nadie puede cerrar en la primera vuelta.",
    "rule_no_first_round_ban": "Se puede cerrar desde el primer turno.",
    "rule_clean_close": "Cerrar con las siete ligadas puntúa {n}.",
    "rule_chinchon_wins": "Un chinchón (escalera de siete del mismo palo) gana la partida.",
    "rule_chinchon_no_win": "Un chinchón no termina la partida.",
    "rule_wild_chinchon": "Una escalera de siete con un comodín puntúa {a}; con dos, {b}.",
    "rule_lay_off_all": "Tras un cierre, se colocan cartas en cualquier jugada de la mesa.",
    "rule_lay_off_closer": "Tras un cierre, solo se colocan cartas en las jugadas del que "
                           "cierra.",
    "rule_lay_off_none": "Tras un cierre nadie coloca cartas.",
    "rule_after_clean_same": "Tras un cierre limpio se colocan cartas igual.",
    "rule_after_clean_others": "Tras un cierre limpio nadie coloca en las jugadas del que "
                               "cierra.",
    "rule_after_clean_none": "Tras un cierre limpio nadie coloca cartas.",
    "rule_limit": "Con más de {n} puntos quedas fuera.",
    "rule_reentry_once": "Puedes reengancharte una vez mientras queden {m} o más jugadores, "
                         "con la puntuación más alta.",
    "rule_reentries": "Puedes reengancharte {n} veces mientras queden {m} o más "
                      "jugadores, con la puntuación más alta.",
    "rule_no_reentry": "No hay reenganche.",
    "rule_proof_rounds": "Las pruebas de barajado usan {k} rondas.",
    "rule_turn_time": "{s} segundos por jugada; después juega el bot.",
    "rule_no_turn_time": "Las jugadas no tienen reloj.",
    "rule_rejoin_wait": "A un jugador desconectado se le espera {s} segundos.",
    "log_opened": "Mesa {table} abierta",
    "log_fault": "Falta de {name} ({rule}): {reason}",
    "log_dropped": "Se ignoró un mensaje inválido atribuido a {name} ({rule}): {reason}",
    "log_stopped_by": "{name} detuvo la mesa: {reason}",
    "log_stopped_by_you": "Detuviste la mesa: {reason}",
    "log_game_over_nobody": "Fin de la partida: nadie gana",
    "log_sat": "{name} se sienta ({k}/{n})",
    "log_sat_you": "Te sientas ({k}/{n})",
    "log_seated": "Asientos: {names}",
    "log_agreed": "{name} acepta la mesa",
    "log_agreed_you": "Aceptas la mesa",
    "log_first_dealer": "{name} reparte primero (sorteo)",
    "log_first_dealer_you": "Repartes primero (sorteo)",
    "log_hand_deals": "Mano {n}: reparte {name}",
    "log_hand_deals_you": "Mano {n}: repartes tú",
    "log_dealt": "Cartas repartidas; se descubre {card}",
    "log_draw_stock": "{name} roba del mazo",
    "log_draw_stock_you": "Robas del mazo",
    "log_draw_discard": "{name} coge {card} del descarte",
    "log_draw_discard_you": "Coges {card} del descarte",
    "log_discard": "{name} descarta {card}",
    "log_discard_you": "Descartas {card}",
    "log_close": "¡{name} cierra!",
    "log_close_you": "¡Cierras!",
    "log_restock": "Se acabó el mazo: cada jugador baraja {n} descartes",
    "log_void": "Mano nula: {reason}",
    "log_game_over": "Fin de la partida: gana {name}",
    "log_game_over_you": "Fin de la partida: ¡ganas tú!",
    "log_out": "{name} queda fuera",
    "log_out_you": "Quedas fuera",
    "log_reentry_offer": "{name} puede reengancharse",
    "log_reentry_offer_you": "Puedes reengancharte",
    "log_reentered": "{name} se reengancha",
    "log_reentered_you": "Te reenganchas",
    "log_scores": "Puntos de la mano: {scores}",
    "log_left": "{name} se fue: {reason}",
    "log_left_you": "Te fuiste: {reason}",
    "log_left_table": "{name} dejó la mesa",
    "log_left_table_you": "Dejaste la mesa",
    "you_left": "dejaste la mesa",
    "you_are_out": "Quedas fuera ({total} puntos).",
    "you_closed": "Has cerrado.",
    "you_win": "¡Ganas la partida!",
    "enter_discards": "Intro descarta {card}",
}

FR: dict[str, str] = {
    "connecting": "connexion…",
    "hand_no": "donne {n}",
    "phase_lobby": "salon",
    "phase_shuffling": "mélange et distribution",
    "phase_playing": "en jeu",
    "phase_restocking": "talon épuisé : on remélange la défausse",
    "phase_showdown": "on montre les mains",
    "phase_hand_over": "donne terminée",
    "phase_reentry": "rachat",
    "phase_over": "partie terminée",
    "phase_stopped": "table arrêtée",
    "your_turn_draw": "à vous : piochez une carte",
    "your_turn_discard": "à vous : défaussez ou fermez",
    "your_turn_busy": "à vous : réception de votre carte…",
    "other_turn": "à {name} de jouer",
    "winner": "{name} gagne la partie !",
    "you": "(vous)",
    "dealer_mark": "donneur",
    "out": "éliminé",
    "bot": "robot",
    "offline": "déconnecté",
    "agreed": "d'accord",
    "n_cards": "{n} cartes",
    "total_n": "total {n}",
    "took": "a pris",
    "discard_pile": "Défausse",
    "empty": "vide",
    "stock": "Talon",
    "your_hand": "Votre main",
    "deadwood_n": "points libres {n}",
    "melds_n": "combinaisons {n}",
    "no_cards": "aucune carte",
    "custom_order": "votre ordre ; g regroupe",
    "chinchon": "chinchón !",
    "may_close": "Vous pouvez fermer (c) : {options}",
    "no_close": "Vous ne pouvez pas fermer : trop de points libres.",
    "no_close_first_round": "Personne ne peut fermer au premier tour.",
    "closed_by": "{name} a fermé.",
    "last_hand": "Donne précédente ({n}) :",
    "laid_off": "posé",
    "deadwood": "libres",
    "hand": "Donne",
    "total": "Total",
    "is_out": "{name} est éliminé ({total} points).",
    "reentry_question": "Vous êtes éliminé. Racheter ? o = oui, n = non",
    "stopped": "La table s'est arrêtée : {reason}",
    "blame": "En cause : {name} ({rule})",
    "proposed_rules": "Règles proposées :",
    "press_a_to_agree": "Appuyez sur a pour accepter ces règles et ces places.",
    "agreed_waiting": "Vous avez accepté ; on attend les autres places.",
    "already_agreed": "Vous avez déjà accepté.",
    "tables_heard": "Tables entendues sur le réseau local (↑↓ choisir, Entrée rejoindre, "
                    "q quitter) :",
    "no_tables_yet": "À l'écoute… aucune table pour l'instant.",
    "seats_n": "{taken}/{max} places",
    "refused": "Refusé : {reason}",
    "leaving": "Vous quittez la table…",
    "confirm_quit": "Quitter la table ? o = oui, n = non",
    "bad_card_name": "Pas de telle carte dans votre main : {text}",
    "waiting_table": "En attente de la table…",
    "not_your_turn": "Ce n'est pas votre tour.",
    "already_drew": "Vous avez déjà pioché : défaussez ou fermez.",
    "discard_empty": "La défausse est vide.",
    "draw_first": "Piochez d'abord : s = talon, d = défausse.",
    "pick_first": "Choisissez d'abord une carte (← →, 1-8 ou son nom).",
    "close_with_other": "Pour fermer, défaussez {card} ({points}).",
    "no_hint": "Pas de conseil disponible.",
    "hint": "Conseil : {text}",
    "press_any_key": "Appuyez sur une touche pour terminer.",
    "game_finished": "La session est terminée.",
    "node_failed": "Le nœud s'est arrêté sur une erreur : {error}",
    "keys_picker": "↑↓ choisir · Entrée rejoindre · 1-9 par numéro · q quitter",
    "keys_yes_no": "o oui · n non",
    "typing": "carte :",
    "keys_idle": "? aide · q quitter",
    "keys_lobby": "a accepter · ? aide · q quitter",
    "keys_draw": "s piocher au talon · d prendre la défausse · h conseil · ? aide · q quitter",
    "keys_discard": "←→/1-8 choisir · Entrée défausser · c fermer · </> déplacer · h conseil",
    "keys_wait": "←→ choisir · </> déplacer · g regrouper · ? aide · q quitter",
    "help_text": (
        "Touches\n"
        "  s            piocher au talon\n"
        "  d            prendre la carte du dessus de la défausse\n"
        "  ← → ou 1-8   choisir une carte ; Entrée la défausse\n"
        "  7d Entrée    taper le nom d'une carte pour la choisir (R♠ : Ks)\n"
        "  c            fermer avec la carte choisie (quand l'écran le permet)\n"
        "  < >          déplacer la carte choisie ; g regroupe les combinaisons\n"
        "  h            conseil    a  accepter (salon)    o n  répondre\n"
        "  q            quitter la table (avec confirmation)\n"
        "Une touche quelconque ferme cette aide."
    ),
    "line_help": (
        "commandes : draw stock|discard (s, d) · discard CARTE|N · close CARTE|N · agree · "
        "reenter yes|no · hint · help · quit"
    ),
    "line_prompt_draw": "À vous : draw stock ou draw discard.",
    "line_prompt_discard": "À vous : discard CARTE ou close CARTE.",
    "line_prompt_lobby": "Tapez agree pour accepter ces règles et ces places.",
    "line_prompt_reentry": "Vous êtes éliminé : reenter yes ou reenter no ?",
    "line_prompt_pick": "Tapez le numéro d'une table, ou quit.",
    "line_prompt_ask": "{question} (oui/non)",
    "unknown_command": "Commande inconnue : {text} (tapez help)",
    "need_card": "Quelle carte ? Par exemple : {cmd} 7d",
    "need_source": "Piocher où ? draw stock ou draw discard",
    "reentry_yes_no": "Dites reenter yes ou reenter no.",
    "not_offered_reentry": "Personne ne vous a proposé de racheter.",
    "not_in_lobby": "Il n'y a rien à accepter maintenant.",
    "bad_table_number": "Pas de table numéro {text}.",
    "end_of_input": "fin de l'entrée",
    "line_close_options": "Vous pouvez fermer : {options}",
    "line_game_state": "talon {stock} · défausse {top} ({size})",
    "rule_preset": "Règles : {preset}.",
    "rule_deck_40": "Jeu de 40 cartes : as à 7, puis V, D, R (le 7 et le valet se suivent).",
    "rule_deck_48": "Jeu de 48 cartes : as à 9, puis V, D, R.",
    "rule_deck_52": "Jeu de 52 cartes : as à 10, puis V, D, R.",
    "rule_one_pack": "Un seul jeu.",
    "rule_two_packs": "Deux jeux.",
    "rule_two_packs_from": "Deux jeux à partir de {n} joueurs.",
    "rule_players": "De {lo} à {hi} joueurs.",
    "rule_jokers": "{n} joker(s) par jeu, cartes libres.",
    "rule_wild_card": "{card} est une carte libre.",
    "rule_wild_points": "Une carte libre non combinée coûte {n} points.",
    "rule_wild_per_meld": "Au plus {n} carte(s) libre(s) par combinaison, avec au moins {m} "
                          "cartes naturelles.",
    "rule_close_wild_unmatched": "Une carte libre peut rester seule à la fermeture.",
    "rule_close_wild_matched": "Une carte libre ne peut pas rester seule à la fermeture.",
    "rule_court_flat": "Valet, dame et roi valent 10 points chacun.",
    "rule_court_rank": "Valet, dame et roi valent 10, 11 et 12 points.",
    "rule_suits_french": "Cartes françaises (♠ ♥ ♦ ♣).",
    "rule_suits_spanish": "Cartes espagnoles (oros, copas, espadas, bastos).",
    "rule_close_all": "On ne ferme qu'avec les sept cartes combinées.",
    "rule_close_one": "On ferme avec tout combiné, ou six cartes combinées et une carte de {p} "
                      "ou moins.",
    "rule_close_many": "On ferme avec au plus {n} cartes seules valant {p} ou moins en tout.",
    "rule_first_round_ban": "Personne ne peut fermer au premier tour.",
    "rule_no_first_round_ban": "On peut fermer dès le premier tour.",
    "rule_clean_close": "Fermer avec les sept cartes combinées rapporte {n}.",
    "rule_chinchon_wins": "Un chinchón (suite de sept cartes de même couleur) gagne la partie "
                          "aussitôt.",
    "rule_chinchon_no_win": "Un chinchón ne termine pas la partie.",
    "rule_wild_chinchon": "Une suite de sept avec une carte libre rapporte {a} ; avec deux, {b}.",
    "rule_lay_off_all": "Après une fermeture, on pose sur n'importe quelle combinaison.",
    "rule_lay_off_closer": "Après une fermeture, on ne pose que sur les combinaisons de celui "
                           "qui ferme.",
    "rule_lay_off_none": "Personne ne pose après une fermeture.",
    "rule_after_clean_same": "Après une fermeture parfaite, on pose comme d'habitude.",
    "rule_after_clean_others": "Après une fermeture parfaite, personne ne pose sur les "
                               "combinaisons de celui qui ferme.",
    "rule_after_clean_none": "Après une fermeture parfaite, personne ne pose.",
    "rule_limit": "Au-delà de {n} points, on est éliminé.",
    "rule_reentries": "On peut racheter {n} fois tant qu'il reste {m} joueurs ou plus, au "
                      "total le plus haut.",
    "rule_reentry_once": "On peut racheter une fois tant qu'il reste {m} joueurs ou plus, au "
                         "total le plus haut.",
    "rule_no_reentry": "Pas de rachat.",
    "rule_proof_rounds": "Les preuves de mélange font {k} tours.",
    "rule_turn_time": "{s} secondes par coup ; ensuite le bot joue.",
    "rule_no_turn_time": "Pas de limite de temps par coup.",
    "rule_rejoin_wait": "Un joueur déconnecté est attendu {s} secondes.",
    "log_opened": "Table {table} ouverte",
    "log_fault": "Faute de {name} ({rule}) : {reason}",
    "log_dropped": "Message invalide ignoré, attribué à {name} ({rule}) : {reason}",
    "log_stopped_by": "{name} a arrêté la table : {reason}",
    "log_stopped_by_you": "Vous avez arrêté la table : {reason}",
    "log_game_over_nobody": "Fin de la partie : personne ne gagne",
    "log_sat": "{name} s'assied ({k}/{n})",
    "log_sat_you": "Vous vous asseyez ({k}/{n})",
    "log_seated": "Places : {names}",
    "log_agreed": "{name} accepte la table",
    "log_agreed_you": "Vous acceptez la table",
    "log_first_dealer": "{name} donne en premier (tirage au sort)",
    "log_first_dealer_you": "Vous donnez en premier (tirage au sort)",
    "log_hand_deals": "Donne {n} : {name} distribue",
    "log_hand_deals_you": "Donne {n} : vous distribuez",
    "log_dealt": "Cartes distribuées ; carte retournée {card}",
    "log_draw_stock": "{name} pioche dans le talon",
    "log_draw_stock_you": "Vous piochez dans le talon",
    "log_draw_discard": "{name} prend {card} dans la défausse",
    "log_draw_discard_you": "Vous prenez {card} dans la défausse",
    "log_discard": "{name} défausse {card}",
    "log_discard_you": "Vous défaussez {card}",
    "log_close": "{name} ferme !",
    "log_close_you": "Vous fermez !",
    "log_restock": "Talon épuisé : chaque joueur remélange {n} cartes de la défausse",
    "log_void": "Donne annulée : {reason}",
    "log_game_over": "Fin de la partie : {name} gagne",
    "log_game_over_you": "Fin de la partie : vous gagnez !",
    "log_out": "{name} est éliminé",
    "log_out_you": "Vous êtes éliminé",
    "log_reentry_offer": "{name} peut racheter",
    "log_reentry_offer_you": "Vous pouvez racheter",
    "log_reentered": "{name} rachète",
    "log_reentered_you": "Vous rachetez",
    "log_scores": "Points de la donne : {scores}",
    "log_left": "{name} est parti : {reason}",
    "log_left_you": "Vous êtes parti : {reason}",
    "log_left_table": "{name} a quitté la table",
    "log_left_table_you": "Vous avez quitté la table",
    "you_left": "vous avez quitté la table",
    "you_are_out": "Vous êtes éliminé ({total} points).",
    "you_closed": "Vous avez fermé.",
    "you_win": "Vous gagnez la partie !",
    "enter_discards": "Entrée défausse {card}",
}

CATALOGUES: dict[str, dict[str, str]] = {"en": EN, "es": ES, "fr": FR}


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


def fields_of(template: str) -> set[str]:
    """The ``{field}`` names used by a message template."""
    return {name for _, name, _, _ in string.Formatter().parse(template) if name}


class Translator:
    """``tr(key, **fields) -> str`` in one language (see the module docstring)."""

    def __init__(self, lang: str | None = None, env: Mapping[str, str] | None = None) -> None:
        self.lang = detect_lang(lang, env)
        self._cat = CATALOGUES[self.lang]

    def __call__(self, key: str, **fields: Any) -> str:
        template = self._cat.get(key)
        if template is None:
            template = EN[key]  # KeyError: unknown key, a programming error
        return template.format(**fields) if fields else template
