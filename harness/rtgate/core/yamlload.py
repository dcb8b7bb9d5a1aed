# SPDX-License-Identifier: GPL-2.0-or-later
"""The one YAML loader rtgate uses for what it reads: bounded in size, nesting and alias expansion.

yaml.safe_load refuses tags but not a few hundred bytes of nested aliases that expand to gigabytes
when walked, nor 3000 nested brackets (a RecursionError) nor a 5000-digit integer (a ValueError).
Every one of those is refused here with a one-line error naming the file and line.
"""

from __future__ import annotations

from dataclasses import dataclass

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from rtgate.errors import RtgateError

TYPE_CHECKING = False  # typing's constant without importing typing: `rtgate validate` need not load it
if TYPE_CHECKING:
    from typing import Any


@dataclass(frozen=True)
class Limits:
    """What one YAML file may hold: bytes, nesting, values once aliases expand, sizes of strings and numbers."""

    max_bytes: int = 1 << 20  # a threshold file is a few kB
    max_depth: int = 64  # nesting of mappings and sequences
    max_nodes: int = 100_000  # nodes once aliases are expanded
    max_scalar: int = 64 * 1024  # characters in one string
    max_number_digits: int = 100  # an int or float written with more characters is not a setting


THRESHOLDS = Limits()
LAVA_RESULTS = Limits(max_bytes=256 << 20, max_nodes=20_000_000, max_scalar=16 << 20)

_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"


def _one_line(text: str) -> str:
    return " ".join(str(text).split())


try:  # libyaml's parser turns text into events ten times faster; the composing stays here, bounded
    from yaml._yaml import CParser as _Parser

    class _EventsLoader(Composer, _Parser, SafeConstructor, Resolver):
        def __init__(self, stream: str) -> None:
            _Parser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

    _Base: type = _EventsLoader
except ImportError:  # PyYAML built without libyaml
    _Base = yaml.SafeLoader


class _BoundedLoader(_Base):  # type: ignore[misc]
    """SafeLoader that counts nesting and values while composing (a 1 MiB list is refused at its
    100,001st value, not after the whole list is built), and refuses a key given twice in a mapping:
    with the last one winning, a second `limit_us:` or `measurements:` would silently replace the
    first."""

    limits: Limits = THRESHOLDS

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0
        self._nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        self._depth += 1
        self._nodes += 1
        try:
            if self._depth > self.limits.max_depth or self._nodes > self.limits.max_nodes:
                mark = self.peek_event().start_mark
                what = (
                    f"nested deeper than {self.limits.max_depth} levels"
                    if self._depth > self.limits.max_depth
                    else f"more than {self.limits.max_nodes} values"
                )
                raise _Refused(what, mark.line + 1)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        seen: dict[tuple[str, str], int] = {}
        for key, _ in node.value:
            if not isinstance(key, yaml.ScalarNode) or key.tag == "tag:yaml.org,2002:merge":
                continue
            line = key.start_mark.line + 1
            first = seen.get((key.tag, key.value))
            if first is not None:
                raise _Refused(f"{key.value!r} given twice in one mapping (first on line {first})", line)
            seen[(key.tag, key.value)] = line
        return node


class _Refused(Exception):
    def __init__(self, message: str, line: int | None) -> None:
        super().__init__(message)
        self.message = message
        self.line = line


def _flow_depth(text: str, limit: int) -> int | None:
    """The line where [ and { nest deeper than `limit`, found before PyYAML's scanner, which is
    quadratic in the flow depth (3000 '[' take seconds before any node is composed)."""
    depth = 0
    quote = ""
    line = 1
    previous = "\n"
    comment = False
    for ch in text:
        if ch == "\n":
            line += 1
            comment = False  # a quoted scalar may span lines: the quote stays open
        elif comment:
            pass
        elif quote:
            if ch == quote:
                quote = ""
        elif ch == "#" and previous in " \t\n":
            comment = True
        elif ch in "'\"" and previous in " \t\n[{,:":
            quote = ch
        elif ch in "[{":
            depth += 1
            if depth > limit:
                return line
        elif ch in "]}":
            depth = max(0, depth - 1)
        previous = ch
    return None


def _check_graph(root: yaml.Node, limits: Limits) -> None:
    """Expanded size, recursive aliases and oversized scalars, in time linear in the composed graph."""
    sizes: dict[int, int] = {}
    active: set[int] = set()
    # iterative post-order walk: each distinct node is sized once, aliases reuse the size
    stack: list[tuple[yaml.Node, bool]] = [(root, False)]
    while stack:
        node, done = stack.pop()
        key = id(node)
        if done:
            active.discard(key)
            children = _children(node)
            size = 1 + sum(sizes[id(c)] for c in children)
            sizes[key] = size
            if size > limits.max_nodes:
                raise _Refused(f"expands to more than {limits.max_nodes} values (aliases?)", node.start_mark.line + 1)
            continue
        if key in sizes:
            continue
        if key in active:
            raise _Refused("an alias refers to the value that contains it", node.start_mark.line + 1)
        if isinstance(node, yaml.ScalarNode):
            value = node.value
            if node.tag in (_INT, _FLOAT) and len(value) > limits.max_number_digits:
                raise _Refused(f"a number of {len(value)} characters", node.start_mark.line + 1)
            if len(value) > limits.max_scalar:
                raise _Refused(
                    f"a value of {len(value)} characters (at most {limits.max_scalar})", node.start_mark.line + 1
                )
            sizes[key] = 1
            continue
        active.add(key)
        stack.append((node, True))
        for child in _children(node):
            if id(child) in active:
                raise _Refused("an alias refers to the value that contains it", child.start_mark.line + 1)
            if id(child) not in sizes:
                stack.append((child, False))


def _children(node: yaml.Node) -> list[yaml.Node]:
    if isinstance(node, yaml.MappingNode):
        return [n for pair in node.value for n in pair]
    if isinstance(node, yaml.SequenceNode):
        return list(node.value)
    return []


def _tab_hint(text: str, mark: yaml.Mark | None, problem: str | None) -> str:
    """PyYAML names a tab only as "a character that cannot start any token": say what it is."""
    if mark is None or "tab" in (problem or ""):
        return ""
    lines = text.splitlines()
    line = lines[mark.line] if mark.line < len(lines) else ""
    lead = line[: mark.column + 1]  # the indentation up to the character PyYAML stopped at
    if line[mark.column : mark.column + 1] == "\t" or (not lead.strip() and "\t" in lead):
        return f" (a tab at column {mark.column + 1}: YAML indents with spaces only)"
    return ""


def load_yaml(
    text: str, source: str, error: type[RtgateError] = RtgateError, limits: Limits = THRESHOLDS, what: str = "YAML"
) -> tuple[Any, yaml.Node | None]:
    """Parse one YAML document: (data, composed root node, for line numbers). Errors are `error`."""
    if len(text) > limits.max_bytes:
        raise error(f"larger than {limits.max_bytes} bytes: not a {what} file rtgate reads", path=source)
    loader_cls = type("_Loader", (_BoundedLoader,), {"limits": limits})
    few = text.count("[") + text.count("{") <= limits.max_depth  # counted in C: the usual case
    deep = None if few else _flow_depth(text, limits.max_depth)
    if deep is not None:
        raise error(f"refused: nested deeper than {limits.max_depth} levels", path=source, line=deep)
    loader: _BoundedLoader | None = None
    try:
        loader = loader_cls(text)  # the reader checks every character here
        node = loader.get_single_node()
        if node is None:
            return None, None
        _check_graph(node, limits)
        data = loader.construct_document(node)
    except _Refused as e:
        raise error(f"refused: {e.message}", path=source, line=e.line) from None
    except yaml.MarkedYAMLError as e:
        mark = e.problem_mark or e.context_mark
        raise error(
            f"invalid YAML: {_one_line(e.problem or e.context or '')}{_tab_hint(text, mark, e.problem)}",
            path=source,
            line=mark.line + 1 if mark else None,
        ) from None
    except yaml.reader.ReaderError as e:
        line = text.count("\n", 0, e.position) + 1 if isinstance(e.position, int) else None
        char = f"#x{e.character:04x}" if isinstance(e.character, int) else repr(e.character)
        raise error(f"invalid YAML: character {char} is not allowed", path=source, line=line) from None
    except yaml.YAMLError as e:
        raise error(f"invalid YAML: {_one_line(str(e))}", path=source) from None
    except (ValueError, OverflowError, RecursionError) as e:  # a value PyYAML cannot construct
        raise error(f"invalid YAML: {_one_line(str(e))[:200]}", path=source) from None
    finally:
        if loader is not None:
            loader.dispose()
    return data, node
