"""Plain JSON views of records: the part of a ``to_dict`` that copies attributes as they are.

Reports and records turn themselves into JSON objects whose keys are mostly their own attribute names
with the values unchanged; :func:`attributes` builds that part, in the order named, so a ``to_dict``
spells out only the values it converts (lists of records, rounded numbers, tuples as lists).
"""

from __future__ import annotations

from typing import Any

__all__ = ["attributes"]


def attributes(obj: object, *names: str) -> dict[str, Any]:
    """``{name: obj.<name>}`` for each of ``names``, in that order (values as they are, not copied)."""
    return {name: getattr(obj, name) for name in names}
