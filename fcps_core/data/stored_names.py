"""Names of stored things (panels, runs' labels): what is allowed, checked in one place; and
the characters no user string may carry to a terminal or editor."""

from __future__ import annotations

import re

from ..errors import StoreError

#: a regular-expression class of the characters that act on whatever shows the text instead of
#: being shown: C0 controls but newline and CR, DEL, C1 (U+009B is an 8-bit CSI), the bidi
#: marks, overrides and isolates (text displayed in another order than it is read: "Trojan
#: Source"), and the line and paragraph separators. The terminal sanitiser
#: (``cli.render``) and the SQL export's name check build on it.
CONTROL_CHARACTERS = ("\x00-\x09\x0b\x0c\x0e-\x1f\x7f-\x9f"
                      "\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069")

MAX_NAME_LENGTH = 120

#: what a name may not hold: the control characters above, newline and CR too
_CONTROL = re.compile(f"[{CONTROL_CHARACTERS}\\n\\r]")


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
    bad = _CONTROL.search(name)
    if bad:
        # C0/C1 controls, DEL, and the bidi overrides and isolates: a name holding U+202E
        # shows in the runs list and every table with its letters in another order
        raise StoreError(f"the {what} {name[:40]!r} contains control characters "
                         f"(U+{ord(bad.group()):04X} at position {bad.start() + 1}); remove it: names are "
                         "shown in tables, terminals and the dashboard")
    if name.lower().startswith("run:"):
        raise StoreError(f"the {what} {name!r} starts with 'run:', which names runs")
    return name
