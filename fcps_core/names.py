"""Names of stored things (panels, runs' labels): what is allowed, checked in one place."""

from __future__ import annotations

from .errors import StoreError

MAX_NAME_LENGTH = 120


def validate_name(name: str, what: str = "panel name") -> str:
    """A panel name: 1-120 printable characters without surrounding spaces. Any other
    character (quotes, ``;``, ``<``, non-ASCII) is allowed: names are stored as data."""
    if not isinstance(name, str) or not name.strip():
        raise StoreError(f"the {what} is empty", )
    if name != name.strip():
        raise StoreError(f"the {what} {name.strip()[:40]!r} has leading or trailing spaces")
    if len(name) > MAX_NAME_LENGTH:
        raise StoreError(f"the {what} has {len(name)} characters; the limit is {MAX_NAME_LENGTH}")
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        raise StoreError(f"the {what} is not valid UTF-8 text (it holds bytes no character has)") from None
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise StoreError(f"the {what} {name[:40]!r} contains control characters")
    if name.lower().startswith("run:"):
        raise StoreError(f"the {what} {name!r} starts with 'run:', which names runs")
    return name
