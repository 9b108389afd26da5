"""The melds, score and rules commands (in process, through p2p_chinchon.cli.main)."""

import json
import re

import pytest

from p2p_chinchon.cli import main


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_melds_json_seven_cards(capsys):
    code, out, _ = run(capsys, "melds", "--json", "6♦", "7♦", "J♦", "3♣", "3♥", "3♠", "A♥")
    assert code == 0
    d = json.loads(out)
    assert d["points"] == 1 and d["can_close"] is True and d["chinchon"] is False
    assert d["deadwood"] == ["A♥"] and sorted(map(sorted, d["melds"])) == sorted(
        [sorted(["3♥", "3♠", "3♣"]), sorted(["6♦", "7♦", "J♦"])])
    assert d["discard"] is None and d["score"] == 1


def test_melds_json_eight_cards_picks_discard(capsys):
    code, out, _ = run(capsys, "melds", "--json", "A♣ 2♣ 3♣ 6♥ 6♠ 6♦ 4♥ K♠")
    d = json.loads(out)
    assert code == 0 and d["discard"] == "K♠" and d["points"] == 4 and d["can_close"]
    # cannot close: still the best discard (least deadwood)
    code, out, _ = run(capsys, "melds", "--json", "A♣,2♣,3♣,6♥,6♠,6♦,5♥,K♠")
    d = json.loads(out)
    assert d["discard"] == "K♠" and d["points"] == 5 and d["can_close"] is False


def test_melds_spanish_and_options(capsys):
    code, out, _ = run(capsys, "melds", "--rules", "online", "--json", "1-bastos", "2", "de",
                       "bastos", "3-bastos", "6-copas", "6-espadas", "6-oros", "4-copas",
                       "rey-espadas")
    d = json.loads(out)
    assert code == 0 and d["points"] == 4 and d["can_close"] is False
    assert d["discard"] == "rey-espadas"
    code, out, _ = run(capsys, "melds", "--option", "deck=48", "--json",
                       "6d 7d Jd 3c 3h 3s Ah")
    assert json.loads(out)["points"] == 24
    code, out, _ = run(capsys, "melds", "--json", "A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣")
    assert json.loads(out)["chinchon"] is True


def test_melds_text(capsys):
    code, out, _ = run(capsys, "melds", "Q♥ Q♠ Q♣ 5♦ 6♦ 7♦ 3♥ K♠")
    assert code == 0 and "discard:  K♠" in out and "scoring 3" in out


@pytest.mark.parametrize("argv", [
    ["melds", "5x"],
    ["melds", "5♦", "5♦", "5♦"],
    ["melds", "A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣ J♣ Q♣"],
    ["melds", "--option", "limit", "A♣"],
    ["melds", "--option", "bogus=1", "A♣"],
    ["melds", "8♦ 9♦"],  # not in the 40-card deck
    ["score", "--closer", "A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣", "--hand", "A♥ 2♥ zz"],
    ["score", "--closer", "A♣ 5♥ 3♣ 4♣ J♥ 6♣ K♠", "--hand", "A♥ 2♥"],
    ["score", "--closer", "A♣ 2♣ 3♣", "--hand", "A♥ 2♥"],
    # input that cannot exist
    ["melds"],
    ["melds", "--option", "decks=1", "7d 7h 7s Jd Qd Kd 2c 2c"],
    ["melds", "--rules", "online", "7d 7h 7s Jd Qd Kd 2c 2c"],
    ["melds", "--option", "jokers=2", "--option", "decks=1", "JK JK JK 2c 3c 4c"],
    ["melds", "--option", "jokers=1", "--rules", "online", "JK JK 2c 3c"],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d 4d Jd Qd 6c 6h As"],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As Kc", "--hand", "3d 4d Jd Qd 6c 6h Kc"],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", ""],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d 4d"],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d 4d Jd Qd 6c 6h Kc Ks"],
    ["score", "--closer", "5d 6d 7d 2c 2h 2s As"],
    ["score", "--rules", "online", "--closer", "5d 6d 7d 2c 2h 2s As",
     "--hand", "3d 4d Jd Qd 6c 6h Kc", "--hand", "3h 4h 5h 6h 7h Jh Qh",
     "--hand", "3s 4s 5s 6s 7s Js Qs", "--hand", "3c 4c 5c 7c Jc Qc Kh"],
    # usage errors: one line, not argparse's usage block
    ["melds", "--rules", "bogus", "2c"],
    ["melds", "--style", "bogus", "2c"],
    ["melds", "2c", "--bogus"],
    ["score", "--rules", "bogus", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d"],
    ["score", "--style", "bogus", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d"],
    ["score", "--hand", "3d"],
    ["rules", "bogus"],
])
def test_bad_input_one_line_exit_2(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"p2p-chinchon {argv[0]}: ")


def test_usage_errors_outside_commands(capsys):
    code, out, err = run(capsys)
    assert code == 2 and out == "" and err.startswith("p2p-chinchon: a COMMAND") and err.count("\n") == 1
    code, out, err = run(capsys, "bogus")
    assert code == 2 and out == "" and err.startswith("p2p-chinchon: ") and err.count("\n") == 1


@pytest.mark.parametrize("argv", [["host", "--rules", "bogus"], ["play", "--option", "limit"],
                                  ["play", "--option", "limit=x"]])
def test_table_commands_rules_errors_one_line(capsys, argv):
    code, out, err = run(capsys, *argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"p2p-chinchon {argv[0]}: ")


def test_impossible_hands_name_the_card(capsys):
    _, _, err = run(capsys, "melds", "--option", "decks=1", "7d 7h 7s Jd Qd Kd 2c 2c")
    assert "2♣ appears twice" in err and "one pack" in err
    _, _, err = run(capsys, "melds", "--option", "jokers=2", "--option", "decks=1",
                    "JK JK JK 2c 3c 4c")
    assert "3 jokers" in err and "2 per pack" in err
    _, _, err = run(capsys, "score", "--closer", "5d 6d 7d 2c 2h 2s As",
                    "--hand", "3d 4d Jd Qd 6c 6h As")
    assert "A♠ appears twice" in err and "2 players" in err
    _, _, err = run(capsys, "score", "--closer", "5d 6d 7d 2c 2h 2s As", "--hand", "3d 4d")
    assert "hand 1 has 2 cards" in err
    # a Spanish table reads c as copas: its bastos are b
    _, _, err = run(capsys, "score", "--rules", "online", "--closer", "5d 6d 7d 2b 2h 2s As",
                    "--hand", "3d 4d Jd Qd 6b 6h Kb", "--hand", "3h 4h 5h 6h 7h Jh Qh",
                    "--hand", "3s 4s 5s 6s 7s Js Qs", "--hand", "3b 4b 5b 7b Jb Qb Kh",
                    "--hand", "1c 1b 2o Ko Ke 1o 2h")  # (the count is refused before the cards)
    assert "6 players: the online rules take 2-5" in err


def test_classic_hand_may_hold_both_packs_copies(capsys):
    # classic plays two packs from five players: at such a table one hand may hold both 2♣;
    # with five hands shown, two hands may hold the same card
    code, out, _ = run(capsys, "melds", "--players", "5", "--json", "7d 7h 7s Jd Qd Kd 2c 2c")
    assert code == 0 and json.loads(out)["deadwood"] == ["2♣"]
    code, out, _ = run(capsys, "score", "--json", "--closer", "5d 6d 7d 2c 2h 2s As",
                       "--hand", "3d 4d Jd Qd 6c 6h As", "--hand", "3h 4h 5h 6h 7h Jh Qh",
                       "--hand", "3s 4s 5s 6s 7s Js Qs", "--hand", "3c 4c 5c 7c Jc Qc Kh")
    assert code == 0 and json.loads(out)["penalties"][0] == 1


def test_fournier_closes_on_several_left_over_cards(capsys):
    code, out, _ = run(capsys, "melds", "--rules", "fournier", "--json",
                       "1-bastos 2-bastos 3-bastos 4-bastos 5-bastos 1-copas 2-espadas rey-oros")
    d = json.loads(out)
    assert code == 0 and d["can_close"] and d["score"] == 3 and d["discard"] == "rey-oros"
    assert sorted(d["deadwood"]) == ["1-copas", "2-espadas"]


def test_score_lay_offs_in_playable_order(capsys):
    argv = ["score", "--closer", "5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠", "--hand", "3♦ 4♦ J♦ Q♦ 6♣ 6♥ K♠"]
    code, out, _ = run(capsys, *argv, "--json")
    lays = json.loads(out)["players"][1]["laid_off"]
    assert code == 0 and [lo["card"] for lo in lays] == ["4♦", "3♦", "J♦", "Q♦"]
    assert lays[0]["onto_cards"] == ["5♦", "6♦", "7♦"] and lays[0]["onto_player"] == 0
    assert lays[1]["onto_cards"] == ["4♦", "5♦", "6♦", "7♦"]
    code, out, _ = run(capsys, *argv)
    assert out.index("lays off 4♦ onto closer's meld 2 (5♦ 6♦ 7♦)") < out.index(
        "lays off 3♦ onto closer's meld 2 (4♦ 5♦ 6♦ 7♦)")


def test_score_chinchon_says_the_game_is_won_not_a_penalty(capsys):
    code, out, _ = run(capsys, "score", "--closer", "A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣",
                       "--hand", "A♥ 2♥ 3♥ 4♥ 5♥ 6♥ K♥")
    closer_line = out.splitlines()[0]
    assert code == 0 and closer_line == "closer: CHINCHÓN, wins the game" and "-10" not in out
    assert "hand 1: penalty 10" in out


def test_score_json_anna(capsys):
    code, out, _ = run(capsys, "score", "--rules", "classic", "--json",
                       "--closer", "Q♥ Q♠ Q♣ 5♦ 6♦ 7♦ 3♥",
                       "--hand", "5♣ 5♥ 5♠ 4♦ K♦ 2♥ A♥", "--hand", "2♠ 3♣ 6♥ 7♣ J♠ K♥ K♣")
    assert code == 0
    d = json.loads(out)
    assert [p["penalty"] for p in d["players"]] == [3, 13, 48]
    (lay,) = d["players"][1]["laid_off"]
    assert lay["card"] == "4♦" and lay["onto_player"] == 0
    assert "5♦" in d["players"][0]["melds"][lay["onto_meld"]]
    assert all(p["game_won"] is False for p in d["players"]) and d["game_won"] is False
    assert d["players"][0]["melds"] and d["players"][2]["melds"] == []


def test_score_eight_card_closer_and_chinchon(capsys):
    code, out, _ = run(capsys, "score", "--json", "--closer", "A♣ 2♣ 3♣ 4♣ 5♣ 6♣ 7♣ K♠",
                       "--hand", "A♥ 2♥ 3♥ 4♥ 5♥ 6♥ K♥")
    d = json.loads(out)
    assert code == 0 and d["discard"] == "K♠" and d["game_won"] is True
    assert d["players"][0]["game_won"] is True
    code, out, _ = run(capsys, "score", "--closer", "5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠",
                       "--hand", "3♦ 4♦ J♦ Q♦ 6♣ 6♥ K♠")
    assert code == 0 and "penalty 22" in out and "lays off 3♦" in out


def test_score_two_packs_duplicates(capsys):
    code, out, _ = run(capsys, "score", "--json", "--option", "decks=2",
                       "--closer", "5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠", "--hand", "5♦ 6♦ 7♦ 2♣ 2♥ 2♠ A♠")
    d = json.loads(out)
    assert code == 0 and [p["penalty"] for p in d["players"]] == [1, 1]


def test_rules_command(capsys):
    code, out, _ = run(capsys, "rules")
    assert code == 0
    for word in ("classic", "online", "fournier", "cardgames", "deck", "decks", "jokers",
                 "limit", "reentries", "close_max_points", "lay_off"):
        assert word in out
    code, out, _ = run(capsys, "rules", "online", "--lang", "en")
    # the rules in words for players, free of document and case ids
    assert code == 0 and "- Close with all matched" in out and "wild" in out
    assert not re.search(r"\b00[0-3]\b|\b[A-Z]\d+\b|Silent, chosen", out), out
    code, out, _ = run(capsys, "rules", "--json")
    d = json.loads(out)
    assert d["classic"]["limit"] == 100 and d["online"]["limit"] == 50


def test_melds_and_score_read_the_tables_notation(capsys):
    """On a Spanish table `5c` is the 5 of copas (not clubs) and `1o` the 1 of
    oros, with Spanish numbering (`10o` the sota); a French table reads V/D/R as J/Q/K."""
    code, out, err = run(capsys, "melds", "--rules", "fournier", "--json", "5c 6c 7c 1o 2o 3o 12e")
    d = json.loads(out)
    assert code == 0, err
    assert sorted(map(sorted, d["melds"])) == sorted([sorted(["5-copas", "6-copas", "7-copas"]),
                                                     sorted(["1-oros", "2-oros", "3-oros"])])
    assert d["deadwood"] == ["rey-espadas"]
    code, out, _ = run(capsys, "melds", "--rules", "fournier", "--json", "10o 11o 12o 4b 5b 6b 7b")
    assert json.loads(out)["chinchon"] is False and json.loads(out)["points"] == 0
    code, out, _ = run(capsys, "melds", "--json", "Vd Dd Rd 5c 6c 7c Ah")
    d = json.loads(out)
    assert sorted(map(sorted, d["melds"])) == sorted([sorted(["J♦", "Q♦", "K♦"]), sorted(["5♣", "6♣", "7♣"])])
    code, out, err = run(capsys, "score", "--rules", "fournier", "--json", "--closer", "1o 2o 3o 5c 6c 7c 4e",
                         "--hand", "1c 2c 3c 4c 5e 6e 7e")
    assert code == 0, err
    players = json.loads(out)["players"]
    assert players[0]["deadwood"] == ["4-espadas"] and "1-copas" in players[1]["melds"][0]
