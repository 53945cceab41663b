"""Label selectors in the API server's string form (`a=b`, `a==b`, `a!=b`,
`a in (x,y)`, `a notin (x)`, `a`, `!a`, joined by commas), parsed and
matched as the `label-selector` crate the host uses does, with the same
checks of keys and values and the same error texts."""

from __future__ import annotations

import re
from typing import List, Optional, Tuple

from .types import Invalid

_SPECIAL = set("!=,()")


def _tokenize(text: str) -> List[Tuple[str, str]]:
    tokens, i = [], 0
    while i < len(text):
        c = text[i]
        if c.isspace():
            i += 1
        elif text.startswith("!=", i):
            tokens.append(("'!='", ""))
            i += 2
        elif c == "!":
            tokens.append(("'!'", ""))
            i += 1
        elif text.startswith("==", i):
            tokens.append(("'=='", ""))
            i += 2
        elif c in "=,()":
            tokens.append((f"'{c}'", ""))
            i += 1
        else:
            j = i
            while j < len(text) and text[j] not in _SPECIAL and not text[j].isspace():
                j += 1
            tokens.append(("word", text[i:j]))
            i = j
    return tokens


_NAME = re.compile(r"^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$")
_DNS_LABEL = re.compile(r"^[a-z0-9-]+$")


def _valid_name(s: str) -> bool:
    return 0 < len(s) <= 63 and s.isascii() and bool(_NAME.fullmatch(s))


def _valid_prefix(s: str) -> bool:
    return len(s) <= 253 and all(
        0 < len(label) <= 63
        and not label.startswith("-")
        and not label.endswith("-")
        and bool(_DNS_LABEL.fullmatch(label))
        for label in s.split(".")
    )


def _check_key(key: str) -> Optional[str]:
    prefix, slash, name = key.partition("/")
    valid = (_valid_prefix(prefix) and _valid_name(name)) if slash else _valid_name(key)
    return None if valid else f"invalid label key {key!r}"


def _check_value(value: str) -> Optional[str]:
    return None if value == "" or _valid_name(value) else f"invalid label value {value!r}"


def _show(token: Tuple[str, str]) -> str:
    return repr(token[1]) if token[0] == "word" else token[0]


class Selector:
    """A parsed selector: requirements as (operator, key, values)."""

    def __init__(self, requirements):
        self.requirements = requirements

    @staticmethod
    def parse(text: str) -> "Selector":
        """Parses `text`; `Invalid` naming what is wrong."""
        return _Parser(text).parse()

    def matches(self, labels: dict) -> bool:
        def holds(op, key, values):
            actual = labels.get(key)
            if not isinstance(actual, str):
                actual = None
            if op == "=":
                return actual == values[0]
            if op == "!=":
                return actual != values[0]
            if op == "in":
                return actual is not None and actual in values
            if op == "notin":
                return not (actual is not None and actual in values)
            if op == "exists":
                return actual is not None
            return actual is None

        return all(holds(*r) for r in self.requirements)


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens = _tokenize(text)
        self.at = 0

    def peek(self):
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def next(self):
        token = self.peek()
        self.at += 1
        return token

    def error(self, why: str) -> Invalid:
        return Invalid(f"label selector {self.text!r}: {why}")

    def parse(self) -> Selector:
        requirements = []
        if self.peek() is None:
            return Selector(requirements)
        while True:
            requirements.append(self.requirement())
            token = self.next()
            if token is None:
                return Selector(requirements)
            if token[0] != "','":
                raise self.error(f"expected ',', found {_show(token)}")

    def key(self) -> str:
        token = self.next()
        if token is None:
            raise self.error("expected a label key, found the end")
        if token[0] != "word":
            raise self.error(f"expected a label key, found {_show(token)}")
        problem = _check_key(token[1])
        if problem:
            raise self.error(problem)
        return token[1]

    def value(self) -> str:
        token = self.peek()
        if token is None or token[0] == "','":
            return ""
        if token[0] != "word":
            raise self.error(f"expected a label value, found {_show(token)}")
        self.at += 1
        problem = _check_value(token[1])
        if problem:
            raise self.error(problem)
        return token[1]

    def values(self) -> list:
        if self.next() != ("'('", ""):
            raise self.error("expected '(' after in/notin")
        values = []
        while True:
            token = self.peek()
            if token is not None and token[0] in ("','", "')'"):
                values.append("")
            else:
                values.append(self.value())
            token = self.next()
            if token == ("','", ""):
                continue
            if token == ("')'", ""):
                return values
            raise self.error("expected ',' or ')' in a value set")

    def requirement(self):
        if self.peek() == ("'!'", ""):
            self.at += 1
            return ("!exists", self.key(), [])
        key = self.key()
        token = self.peek()
        if token is None or token[0] == "','":
            return ("exists", key, [])
        if token[0] in ("'='", "'=='"):
            self.at += 1
            return ("=", key, [self.value()])
        if token[0] == "'!='":
            self.at += 1
            return ("!=", key, [self.value()])
        if token == ("word", "in"):
            self.at += 1
            return ("in", key, self.values())
        if token == ("word", "notin"):
            self.at += 1
            return ("notin", key, self.values())
        raise self.error(f"expected =, ==, !=, in or notin after {key!r}, found {_show(token)}")
