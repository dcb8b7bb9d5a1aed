# SPDX-License-Identifier: GPL-2.0-or-later
"""YAML in block style for a reviewer: mappings and lists one item a line, a multi-line string as a
literal block scalar (its lines as they are), every other scalar as JSON (a safe YAML scalar).

PyYAML's emitter will not write a literal block for text with tabs (rtgate.sh is indented with
them), so the inline test definition is written here; job.py reads the result back and checks it
is the same data, so whatever this cannot write faithfully is an error, never a changed script."""

from __future__ import annotations

import json
import re
from typing import Any

_PLAIN_KEY = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*")
# What a literal block carries unchanged: printable text, tabs and line feeds; no CR, NEL, LS, PS or BOM.
_NOT_LITERAL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff]")


def block_yaml(value: Any, indent: int) -> str:
    """`value` as block-style YAML lines, each indented by `indent` spaces (no final newline)."""
    return "\n".join(_lines(value, indent))


def _scalar(value: Any) -> str:
    return json.dumps(value)


def _key(key: Any) -> str:
    return key if isinstance(key, str) and _PLAIN_KEY.fullmatch(key) else json.dumps(str(key))


def _literal(text: str) -> bool:
    return isinstance(text, str) and "\n" in text and not _NOT_LITERAL.search(text)


def _literal_lines(text: str, head: str, indent: int) -> list[str]:
    """`head` (a key and colon, or a dash) with a literal block indicator, then the text's lines."""
    body = text.rstrip("\n")
    trailing = len(text) - len(body)
    chomp = "-" if trailing == 0 else ("" if trailing == 1 else "+")
    explicit = "2" if body[:1] in (" ", "\n") or not body else ""
    pad = " " * (indent + 2)
    lines = [f"{head} |{explicit}{chomp}"]
    lines += [pad + line if line else "" for line in body.split("\n")]
    lines += [""] * (trailing - 1 if trailing > 1 else 0)
    return lines


def _lines(value: Any, indent: int) -> list[str]:
    pad = " " * indent
    if isinstance(value, dict) and value:
        out: list[str] = []
        for k, v in value.items():
            out += _item(f"{pad}{_key(k)}:", v, indent)
        return out
    if isinstance(value, list) and value:
        out = []
        for v in value:
            if isinstance(v, dict) and v:
                nested = _lines(v, indent + 2)
                out += [f"{pad}- {nested[0].lstrip()}", *nested[1:]]
            else:
                out += _item(f"{pad}-", v, indent)
        return out
    return [pad + _scalar(value)]


def _item(head: str, value: Any, indent: int) -> list[str]:
    if isinstance(value, (dict, list)) and value:
        return [head, *_lines(value, indent + 2)]
    if _literal(value):
        return _literal_lines(value, head, indent)
    return [f"{head} {_scalar(value)}"]
