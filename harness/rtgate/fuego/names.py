# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuego's naming rules, applied to rtgate's gate, thread and measurement names.

Fuego (docs: "Fuego naming rules", section "test identifiers") allows letters, digits and
underscores in test-case and measure names; a period only separates the parts of a tguid
(test_set.test_case.measure), and only a test-set name may itself hold one. Board and spec
names are letters, digits and underscores only.

rtgate names may also hold '-' and '.', so every character outside [A-Za-z0-9_] becomes '_':
``p99.9`` -> ``p99_9``, ``b-over-100us`` -> ``b_over_100us``, ``A-cpu0`` -> ``A_cpu0``. The
mapping is deterministic but not one-to-one (``a-b`` and ``a_b`` meet), so callers check that
the names of one measurement stay distinct (`distinct`) and refuse the file when they do not.
"""

from __future__ import annotations

import re

from rtgate.errors import RtgateError

LEGAL = re.compile(r"[A-Za-z0-9_]+")


def fuego_name(name: str) -> str:
    """The Fuego-legal form of an rtgate name (a gate, a thread id, a measurement)."""
    legal = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not legal:
        raise RtgateError("an empty name has no Fuego form")
    return legal


def is_legal(name: str) -> bool:
    return LEGAL.fullmatch(name) is not None


def split_tguid(tguid: str) -> dict[str, str]:
    """Split a tguid as Fuego's naming rules say: the last part is the measure, the one before
    it the test case, and whatever precedes them (which may hold periods) the test set."""
    parts = tguid.split(".")
    if len(parts) < 3:
        raise ValueError(f"{tguid!r} is not test_set.test_case.measure")
    return {"test_set": ".".join(parts[:-2]), "test_case": parts[-2], "measure": parts[-1]}


def distinct(what: str, where: str, names: list[tuple[str, str]]) -> None:
    """Refuse two different rtgate names (`names`: [(rtgate name, Fuego name)]) that meet in Fuego."""
    seen: dict[str, str] = {}
    for original, legal in names:
        other = seen.setdefault(legal, original)
        if other != original:
            raise RtgateError(
                f"{what} {other!r} and {original!r} of {where} both become {legal!r} in Fuego "
                "(which allows letters, digits and '_' only): rename one"
            )


def check_plain_name(kind: str, name: str) -> str:
    """Board and spec names: letters, digits and underscores only (Fuego naming rules)."""
    if not is_legal(name):
        raise RtgateError(f"{kind} name {name!r}: Fuego allows letters, digits and '_' only")
    return name
