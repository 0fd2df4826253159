"""What a person types into `nc_find`, parsed once for both engines (docs/ADR/0071).

Words, `"quoted phrases"` and `-exclusions` (of a word or a phrase). A word is a run of letters
and digits; everything else in the query only separates words, so no engine's own syntax
(`NEAR(`, `*`, `:`, `^`, quotes, `!`, `&`, NUL) ever reaches an engine. Bounded: the query's
length, the number of words and phrases, the words in a phrase and a word's length.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["MAX_QUERY_CHARS", "MAX_TERMS", "Query", "QueryError", "Term", "parse_query"]

MAX_QUERY_CHARS = 1000
MAX_TERMS = 24
MAX_PHRASE_WORDS = 8
MAX_WORD_CHARS = 64

_WORD = re.compile(r"[^\W_]+")
# A quoted phrase (an unclosed quote runs to the end), or a bare run of non-space characters.
_PART = re.compile(r'(-?)"([^"]*)"?|(-?)([^\s"]+)')


class QueryError(ValueError):
    """A query that finds nothing by construction (empty, or only exclusions)."""


@dataclass(frozen=True)
class Term:
    """Words that must (or, `excluded`, must not) appear; one word of two letters or more matches
    as a prefix, a word of one letter and several words exactly. A one-letter prefix matched
    nearly every word: SQLite read every user's postings for it (the prefix indexes start at two
    letters), and 24 of them made excerpts of a 256 KB text take 12 s."""

    words: tuple[str, ...]
    excluded: bool = False

    @property
    def prefix(self) -> bool:
        return len(self.words) == 1 and len(self.words[0]) > 1


@dataclass(frozen=True)
class Query:
    terms: tuple[Term, ...]

    @property
    def wanted(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if not t.excluded)

    @property
    def unwanted(self) -> tuple[Term, ...]:
        return tuple(t for t in self.terms if t.excluded)


def _words(text: str) -> tuple[str, ...]:
    normal = unicodedata.normalize("NFC", text)
    return tuple(w[:MAX_WORD_CHARS].lower() for w in _WORD.findall(normal))


def parse_query(text: str) -> Query:
    """The terms of `text`; QueryError when nothing could be looked for."""
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(f"a query has at most {MAX_QUERY_CHARS} characters")
    terms: list[Term] = []
    seen: set[Term] = set()
    for match in _PART.finditer(text):
        if match.group(2) is not None:  # a quoted phrase
            excluded, words = bool(match.group(1)), _words(match.group(2))[:MAX_PHRASE_WORDS]
            found = [Term(words, excluded)] if words else []
        else:  # bare words: `e-mail` is two words, `-word` an exclusion
            excluded, raw = bool(match.group(3)), match.group(4)
            found = [Term((word,), excluded) for word in _words(raw)]
        for term in found:
            if term not in seen:
                seen.add(term)
                terms.append(term)
    if len(terms) > MAX_TERMS:
        raise QueryError(f"a query has at most {MAX_TERMS} words and quoted phrases")
    query = Query(tuple(terms))
    if not query.wanted:
        raise QueryError("give at least one word to look for (letters or digits, not only exclusions)")
    return query
