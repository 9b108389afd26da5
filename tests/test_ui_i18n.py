"""Every message exists in English, Spanish and French with the same fields."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p2p_chinchon.engine import PRESETS
from p2p_chinchon.i18n import EN, LANGS, Message, Plural, Translator, catalogue, detect_lang, fields_of, gettext_entries
from p2p_chinchon.ui.lobby import rules_in_words

ROOT = Path(__file__).parents[1]
UI = ROOT / "p2p_chinchon" / "ui"


def _forms(t: str | dict) -> list[str]:
    return [t] if isinstance(t, str) else [*_forms(t["one"]), *_forms(t["many"])]


@pytest.mark.parametrize("lang", LANGS)
def test_every_key_in_every_language_with_the_same_fields(lang):
    """Every message of the English source is in the language's compiled catalogue (not a
    fallback to English), every form non-empty, with the same ``{fields}``."""
    tr = Translator(lang)
    t = catalogue(lang)
    for key, english in EN.items():
        for ctx, msgid, _count in gettext_entries(key, english):
            if lang != "en":
                one = msgid if isinstance(msgid, str) else msgid[0]
                found = (f"{ctx}\x04{one}" in t._catalog if isinstance(msgid, str)  # type: ignore[attr-defined]
                         else (f"{ctx}\x04{one}", 0) in t._catalog)  # type: ignore[attr-defined]
                assert found, (lang, ctx)
        forms = _forms(tr.template(key))
        assert all(isinstance(f, str) and f.strip() for f in forms), key
        assert set().union(*(fields_of(f) for f in forms)) | _counts(english) == fields_of(english), key


def _counts(m) -> set[str]:
    return {m.count} | _counts(m.one) | _counts(m.many) if isinstance(m, Plural) else set()


def test_translations_are_translated():
    # a catalogue that merely copies English would pass the key check; most lines must differ
    for lang in ("es", "fr"):
        tr = Translator(lang)
        same = [k for k in EN if tr.template(k) == Translator("en").template(k)]
        assert len(same) < len(EN) // 10, (lang, same)


def test_the_catalogues_are_in_step_with_the_english_source():
    """``tools/catalogues.py --check``: the template, each language's .po and its compiled .mo
    are what the English source and the translations give, and no language lacks a message."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("catalogues", ROOT / "tools" / "catalogues.py")
    assert spec is not None and spec.loader is not None
    tool = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(tool)
    assert tool.main(["--check"]) == 0


def test_every_key_used_in_the_code_exists():
    used = set()
    for path in UI.glob("*.py"):
        text = path.read_text(encoding="utf-8")
        used |= set(re.findall(r'\btr\(\s*"([a-z_0-9]+)"(?!\s*\+)', text))
        used |= set(re.findall(r'\bsay\(\s*"([a-z_0-9]+)"', text))
        used |= set(re.findall(r'CommandError\(\s*"([a-z_0-9]+)"', text))
    assert len(used) > 40
    assert used <= set(EN), used - set(EN)
    # keys built at run time
    for phase in ("lobby", "shuffling", "playing", "restocking", "showdown", "hand_over",
                  "reentry", "over", "stopped"):
        assert "phase_" + phase in EN
    for wait in ("draw", "discard", "lobby", "reentry"):
        assert "line_prompt_" + wait in EN


def test_detect_lang():
    assert detect_lang("es") == "es"
    assert detect_lang("fr_FR.UTF-8") == "fr"
    assert detect_lang(None, {"LANG": "es_AR.UTF-8"}) == "es"
    assert detect_lang(None, {"LC_ALL": "fr_CA.UTF-8", "LANG": "es_ES.UTF-8"}) == "fr"
    assert detect_lang(None, {"LANG": "de_DE.UTF-8"}) == "en"
    assert detect_lang(None, {"LANG": "C.UTF-8"}) == "en"
    assert detect_lang(None, {}) == "en"
    with pytest.raises(ValueError, match="unknown language"):
        detect_lang("klingon")


def test_translator_formats_and_falls_back():
    assert Translator("es")("n_cards", n=7) == "7 cartas"
    assert Translator("fr")("winner", name="Ana") == "Ana gagne la partie !"
    with pytest.raises(KeyError):
        Translator("en")("no_such_key")


@pytest.mark.parametrize("preset", sorted(PRESETS))
@pytest.mark.parametrize("lang", LANGS)
def test_rules_in_words_for_every_preset(preset, lang):
    rules = PRESETS[preset]
    words = rules_in_words(rules, Translator(lang))
    assert len(words) >= 10
    # every field has its sentence: none falls back to the raw "field name: value" form
    raw = tuple(f.replace("_", " ") + ":" for f in rules.to_wire())
    assert not [w for w in words if w.startswith(raw)], words
    limit = str(rules.limit)
    assert any(limit in w for w in words)


def test_rules_in_words_reflects_the_fields():
    tr = Translator("en")
    classic = rules_in_words(PRESETS["classic"], tr)
    assert "Close with all matched, or six matched and one card worth 4 or less." in classic
    assert "Nobody may close in the first round." in classic
    assert not any("wild" in w for w in classic)  # no wild cards: nothing said about them
    cardgames = rules_in_words(PRESETS["cardgames"], tr)
    assert "2 jokers per pack, wild." in cardgames
    assert "No buying back in." in cardgames
    assert "After a close, players lay off only on the closer's melds." in cardgames
    online = rules_in_words(PRESETS["online"], tr)
    assert "The 1 of oros is wild." in online and "Over 50 points you are out." in online


# ---------------------------------------------------------------- the walk

# words that only English uses; the line-mode commands (draw, stock, discard, close, agree,
# reenter, yes, no, hint, help, quit, last) are English in every language by design
ENGLISH = {"the", "you", "your", "and", "with", "from", "pile", "hand", "wins", "press", "key",
           "waiting", "turn", "cards", "seat", "seats", "out", "took",
           "threw", "drew", "shuffling", "dealing", "winner", "totals", "nobody", "any",
           "shows", "again", "back", "card", "pick", "move", "leave", "hint:", "is", "of"}
COMMANDS = {"draw", "stock", "discard", "close", "agree", "reenter", "yes", "no", "hint",
            "help", "quit", "card", "cards", "n", "s", "d", "h", "l", "p2p", "chinchon", "audit"}


def sample_fields(template: Message) -> dict[str, str]:
    return {name: f"<{name}>" for name in fields_of(template)}


@pytest.mark.parametrize("lang", LANGS)
def test_walk_every_message_in_every_language(lang):
    """Format every message with every field; Spanish and French ones use no English word."""
    tr = Translator(lang)
    for key in EN:
        text = tr(key, **sample_fields(EN[key]))
        assert text.strip() and "{" not in text and "}" not in text, (lang, key)
        for name in fields_of(EN[key]):
            assert f"<{name}>" in text, (lang, key, name)
        if lang != "en" and not key.startswith("line_"):
            words = {w.lower() for w in re.findall(r"[^\W\d_]+", re.sub(r"<\w+>", "", text))}
            assert not (words & ENGLISH) - COMMANDS, (lang, key, text)


@pytest.mark.parametrize("lang", ["es", "fr"])
def test_walk_every_screen_in_spanish_and_french(lang):
    """Every mode of the table screen, drawn at 80x24, says nothing in English."""
    import dataclasses

    from harness.ui_fakes import SPANISH, discard_view, draw_view, lobby, showdown_view, waiting_view
    from p2p_chinchon import view as V
    from p2p_chinchon.engine import Card
    from p2p_chinchon.ui.lobby import TablePicker
    from p2p_chinchon.ui.render import Faces
    from p2p_chinchon.ui.screen import TableScreen

    def english_in(text: str) -> set[str]:
        text = text.replace("p2p-chinchón", "").replace("kitchen", "")
        words = {w.lower() for w in re.findall(r"[^\W\d_]+", text)}
        return words & ENGLISH - {"n", "s"}

    hint = lambda v: V.Discard(Card(3, 1))  # noqa: E731
    views = [lobby(SPANISH), draw_view(rules=SPANISH), waiting_view(rules=SPANISH),
             discard_view(rules=SPANISH, close_options=((Card(12, 0), 3, False),), first_round=False),
             draw_view(rules=SPANISH, phase=V.SHUFFLING, progress=(2, 9, "shuffle by Ben")),
             showdown_view(rules=SPANISH, reentry_offer=True),
             showdown_view(rules=SPANISH, phase=V.OVER, winner=2)]
    for view in views:
        view = dataclasses.replace(view, events=())
        for keys in ((), ("h",), ("?",), ("q",), ("l",), ("x", "x")):
            s = TableScreen(Translator(lang), Faces("spanish"), hint=hint)
            s.set_view(view)
            for k in keys:
                s.key(k)
            text = s.render_text(80, 24)
            assert not english_in(text), (lang, view.phase, keys, english_in(text), text)
    s = TableScreen(Translator(lang), Faces("spanish"))
    s.start_picker(TablePicker(lambda t: None))
    assert not english_in(s.render_text(80, 24))
    s.node_done(Translator(lang)("game_finished"))
    assert not english_in(s.render_text(80, 24))


def test_the_hosts_seat_question_speaks_the_hosts_language():
    """The yes/no question before seating a joiner (name, fingerprint to compare aloud,
    address) is asked in the host's language, as every other question."""
    from p2p_chinchon.commands.host import _approver
    from p2p_chinchon.ui.lobby import seat_request

    assert seat_request("Ana", "AAAA-BBBB", "10.0.0.2", came=2, queued=3) == \
        ("Ana [AAAA-BBBB] from 10.0.0.2 asks to sit down. Seat them? 2 already seated from this "
         "address. (b: refuse everyone from 10.0.0.2) 3 more waiting.")
    # through the relay every code-word joiner has the same address: no key refuses it all
    assert seat_request("Ana", "AAAA-BBBB", "the transit relay", blockable=False) == \
        "Ana [AAAA-BBBB] from the transit relay asks to sit down. Seat them?"
    asked: list[str] = []

    class Bridge:
        async def ask(self, question: str, **_: object) -> bool:
            asked.append(question)
            return True

    class Request:
        name = "Ana"
        public_key = bytes(range(32))

    import trio

    assert trio.run(_approver(Bridge(), "es"), Request(), "10.0.0.2") is True
    assert asked[0].startswith("Ana [") and "desde 10.0.0.2 pide sentarse. ¿Le das el asiento?" in asked[0]
    assert asked[0].endswith("(b: rechazar a todos desde 10.0.0.2)")


def test_being_removed_is_said_in_the_players_language():
    """The one line for a seat the others removed: English as before, Spanish and French from
    the fault's why and hand; a fault without them keeps its own sentence."""
    from p2p_chinchon.i18n import removed_text
    from p2p_chinchon.view import Fault

    f = Fault(1, "removed", "you were removed from the game (absent since hand 3)", detail="absent", hand=3)
    assert removed_text(f, Translator("en")) == f.reason
    assert removed_text(f, Translator("es")) == "te sacaron de la partida (ausente desde la mano 3)"
    left = Fault(1, "removed", "you were removed from the game (left since hand 2)", detail="left", hand=2)
    assert removed_text(left, Translator("fr")) == "vous avez été retiré de la partie (parti à la donne 2)"
    assert removed_text(Fault(1, "removed", "some reason"), Translator("es")) == "some reason"


def test_the_catalogue_sits_below_net_and_ui():
    """The message catalogue is below both the network and the screens: ``p2p_chinchon/i18n.py``
    imports nothing of either, and nothing under ``net/`` imports ``ui/`` (a status line, an
    exit summary and the page are phrased by the one catalogue)."""
    import ast
    from pathlib import Path

    import p2p_chinchon

    pkg = Path(p2p_chinchon.__file__).parent

    def imported(path: Path) -> set[str]:
        names: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = "." * node.level + (node.module or "")
                names |= {base} | {f"{base}.{a.name}" for a in node.names}
        return names

    below = imported(pkg / "i18n.py")
    assert not [n for n in below if "ui" in n.split(".") or "net" in n.split(".")], below
    for path in sorted((pkg / "net").rglob("*.py")):
        ui = [n for n in imported(path) if n.lstrip(".").split(".")[:2] == ["p2p_chinchon", "ui"]
              or n.startswith("..ui")]
        assert ui == [], f"{path.name} imports {ui}"
