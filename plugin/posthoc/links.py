"""Canonical entity links: one form for Wikipedia URLs, DBpedia URIs and bare titles.

Every reader passes the link it found through :func:`normalise_link`; the mentions table keeps
the canonical form in ``link``, the form the file had in ``link_original`` and marks emerging /
NIL entities in ``is_nil`` (paper 000 compares annotations by "same document, span and link", so
links of different sources must be comparable; paper 003's outdated / invalid URI flags read the
original).

The canonical rule
------------------
``https://<lang>.wikipedia.org/wiki/<Title>`` where ``<Title>`` is

1. taken from a Wikipedia URL (``http``/``https``, desktop or mobile ``<lang>.m.``, ``/wiki/X``
   or ``/w/index.php?title=X``), a DBpedia resource URI (``http(s)://[<lang>.]dbpedia.org/resource/X``,
   ``dbr:X``, also ``/page/X``) or a bare title (anything that is not a URI, e.g. ``Barack Obama``);
   the fragment (``#Section``) is dropped: the entity is the page;
2. percent-decoded (UTF-8), Unicode NFC, spaces turned into underscores, runs of underscores
   collapsed and leading / trailing underscores removed;
3. first character upper-cased as MediaWiki does (only when that gives one character, so ``ß``
   stays), the rest untouched;
4. percent-encoded again like MediaWiki's ``wfUrlencode``: UTF-8 bytes of everything except
   ASCII letters, digits and ``-._~;@$!*(),/:`` are written ``%XX`` with upper-case hex.

So ``dbr:Côte_d'Ivoire``, ``http://en.m.wikipedia.org/wiki/C%C3%B4te_d%27Ivoire`` and
``Côte d'Ivoire`` all become ``https://en.wikipedia.org/wiki/C%C3%B4te_d%27Ivoire``.
Any other URI (Wikidata, YAGO, a private KB) is kept as it is (trimmed), not NIL.

NIL / emerging entities
-----------------------
``None``, ``""``, ``NIL`` / ``nil`` / ``<NIL>``, ``--NME--`` (AIDA), REL's ``NIL`` and GERBIL's
``http://aksw.org/notInWiki/X`` are NIL: ``is_nil`` is True and ``link`` is a stable ``nil:``
form, ``nil:`` for an anonymous NIL (also the bare ``http://aksw.org/notInWiki`` that
Reuters-128 has once) and ``nil:<Title>`` (same title rule, not re-encoded beyond
step 4) for a named emerging entity such as ``notInWiki/Motorola_Inc`` -> ``nil:Motorola_Inc``.
Scoring code that wants "both NIL" to count as the same link compares ``is_nil``.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qs, quote, unquote, urlsplit

NIL_PREFIX: Final = "nil:"
_SAFE: Final = "-._~;@$!*(),/:"
#: what :func:`normalise_title` leaves unencoded (the rest of a title's UTF-8 bytes are ``%XX``)
LINK_SAFE: Final = _SAFE
_NIL_WORDS: Final = frozenset({"", "nil", "<nil>", "--nme--", "null", "none"})
_NOT_IN_WIKI = re.compile(r"^https?://aksw\.org/notInWiki(?:/(.*))?$", re.IGNORECASE)
_DBPEDIA = re.compile(r"^https?://(?:([a-z\-]+)\.)?dbpedia\.org/(?:resource|page)/(.*)$", re.IGNORECASE)
_DBR = re.compile(r"^dbr:(.*)$")
_WIKIPEDIA = re.compile(r"^(?:https?://|//)?([a-z\-]+)(?:\.m)?\.wikipedia\.org(/.*)?$", re.IGNORECASE)
_URI = re.compile(r"^(?:[a-zA-Z][a-zA-Z0-9+.\-]*://|urn:)", re.IGNORECASE)


@dataclass(frozen=True)
class NormalisedLink:
    """A link in canonical form, the form it came in, and whether it is NIL / emerging."""

    link: str
    original: str
    is_nil: bool


def normalise_title(title: str) -> str:
    """A Wikipedia title in canonical encoded form (steps 2-4 of the module rule)."""
    raw = title.split("#", 1)[0]
    try:
        decoded = unquote(raw, encoding="utf-8", errors="strict")
    except UnicodeDecodeError:  # '%FF' and the like: not an encoding, a literal title
        decoded = raw
    decoded = unicodedata.normalize("NFC", decoded)
    decoded = re.sub(r"[\s_]+", "_", decoded).strip("_")
    if decoded:
        first = decoded[0].upper()
        if len(first) == 1:
            decoded = first + decoded[1:]
    return quote(decoded, safe=_SAFE, encoding="utf-8")


def wikipedia_url(title: str, *, lang: str = "en") -> str:
    """The canonical Wikipedia URL of a (bare or encoded) title."""
    return f"https://{lang.lower()}.wikipedia.org/wiki/{normalise_title(title)}"


def title_of(link: str) -> str | None:
    """The decoded title (spaces, not underscores) of a canonical link; ``None`` for NIL / other URIs."""
    if link.startswith(NIL_PREFIX):
        return None
    match = _WIKIPEDIA.match(link)
    if not match or not (match.group(2) or "").startswith("/wiki/"):
        return None
    return unquote(match.group(2)[len("/wiki/"):]).replace("_", " ")


def _nil(original: str, name: str = "") -> NormalisedLink:
    return NormalisedLink(NIL_PREFIX + (normalise_title(name) if name else ""), original, True)


def normalise_link(link: str | None) -> NormalisedLink:
    """Canonical form of ``link`` (see the module docstring); never raises for a string or ``None``."""
    original = "" if link is None else str(link)
    text = original.strip()
    if text.lower() in _NIL_WORDS:
        return _nil(original)
    if text.startswith(NIL_PREFIX):
        return _nil(original, text[len(NIL_PREFIX):])
    if match := _NOT_IN_WIKI.match(text):
        return _nil(original, match.group(1) or "")
    if match := _DBPEDIA.match(text):
        lang = (match.group(1) or "en").lower()
        lang = "en" if lang in {"www", "live"} else lang
        return NormalisedLink(wikipedia_url(match.group(2), lang=lang), original, False)
    if match := _DBR.match(text):
        return NormalisedLink(wikipedia_url(match.group(1)), original, False)
    if match := _WIKIPEDIA.match(text):
        lang, rest = match.group(1), match.group(2) or "/"
        parts = urlsplit(rest)
        if parts.path.startswith("/wiki/"):
            return NormalisedLink(wikipedia_url(parts.path[len("/wiki/"):], lang=lang), original, False)
        titles = parse_qs(parts.query).get("title")
        if titles:
            return NormalisedLink(wikipedia_url(quote(titles[0], safe=_SAFE), lang=lang), original, False)
        return NormalisedLink(text, original, False)
    if _URI.match(text):
        # Some other URI (Wikidata, YAGO, a private KB): kept as it is.
        return NormalisedLink(text, original, False)
    return NormalisedLink(wikipedia_url(text), original, False)
