#!/usr/bin/env python3
"""The message catalogues in gettext's format: the template from the English source, each
language's ``.po`` kept in step with it, and the compiled ``.mo`` the game reads.

    python tools/catalogues.py            # rewrite the .pot, update each .po, compile each .mo
    python tools/catalogues.py --check    # exit 1 naming each file that is stale, and each
                                          # message a language lacks

The English text is the source (``p2p_chinchon.i18n.EN``): every message is one gettext entry
whose ``msgctxt`` is its key (the name the code uses), ``msgid`` the English text and, for a
message whose words follow a number, ``msgid_plural`` its English plural (``ngettext``); a
message that follows two numbers is two entries, the first number's form in the context
(``key|one``, ``key|many``). Translators edit ``p2p_chinchon/locale/<lang>/LC_MESSAGES/
p2p_chinchon.po`` (any gettext editor: Poedit, Weblate, Lokalize), then run this script. Plural
forms are CLDR's, as Babel writes them (Spanish and French have a third form, for millions).

Needs Babel (the ``test`` extra); the game itself reads the ``.mo`` with the standard library's
:mod:`gettext`.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from p2p_chinchon import i18n  # noqa: E402

LOCALE = ROOT / "p2p_chinchon" / "locale"
POT = LOCALE / f"{i18n.DOMAIN}.pot"
DATE = datetime(2026, 1, 1, tzinfo=UTC)  # fixed: the files change only when messages do


def entries() -> Iterator[i18n.Entry]:
    """:func:`p2p_chinchon.i18n.gettext_entries` of every English message, in the source's order."""
    for key, message in i18n.EN.items():
        yield from i18n.gettext_entries(key, message)


def _catalog(locale: str | None) -> Catalog:
    return Catalog(locale=locale, domain=i18n.DOMAIN, project="p2p-chinchon", version="1",
                   copyright_holder="the p2p-chinchon authors", creation_date=DATE, revision_date=DATE,
                   fuzzy=False)


def template() -> Catalog:
    cat = _catalog(None)
    for ctx, msgid, count in entries():
        cat.add(msgid, context=ctx, auto_comments=[f"{{{count}}} chooses the form"] if count else [])
    return cat


def _text(cat: Catalog) -> bytes:
    buf = io.BytesIO()
    write_po(buf, cat, width=100, sort_output=False, ignore_obsolete=True, include_previous=False)
    return buf.getvalue()


def _mo(cat: Catalog) -> bytes:
    buf = io.BytesIO()
    write_mo(buf, cat, use_fuzzy=False)
    return buf.getvalue()


def po_path(lang: str) -> Path:
    return LOCALE / lang / "LC_MESSAGES" / f"{i18n.DOMAIN}.po"


def updated(lang: str, pot: Catalog) -> Catalog:
    """The language's catalogue, updated from the template ``pot``: new messages untranslated,
    removed ones dropped, changed English marked fuzzy (not used until a translator checks it)."""
    with open(po_path(lang), "rb") as f:
        cat = read_po(f, locale=lang, domain=i18n.DOMAIN)
    cat.update(pot, no_fuzzy_matching=True, update_header_comment=False)
    cat.revision_date = DATE
    return cat


def missing(cat: Catalog) -> list[str]:
    """The contexts of messages the language of ``cat`` lacks: untranslated, fuzzy, or a form
    left empty."""
    out = []
    for m in cat:
        if not m.id:
            continue
        forms = m.string if isinstance(m.string, tuple) else (m.string,)
        if m.fuzzy or not all(forms):
            out.append(str(m.context))
    return out


def main(argv: list[str]) -> int:
    pot = template()
    cats = {lang: updated(lang, pot) for lang in i18n.LANGS if lang != i18n.SOURCE_LANG}
    files = {POT: _text(pot)}
    for lang, cat in cats.items():
        files[po_path(lang)] = _text(cat)
        files[po_path(lang).with_suffix(".mo")] = _mo(cat)
    problems = []
    for path, data in files.items():
        if "--check" in argv:
            if not path.exists() or path.read_bytes() != data:
                problems.append(f"stale {path.relative_to(ROOT)}: run python tools/catalogues.py")
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
    for lang, cat in cats.items():
        problems += [f"{lang}: no translation of {ctx}" for ctx in missing(cat)]
    for line in problems:
        print(line)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
