"""The one sanitiser of user strings every front end shows: the terminal (the CLI's
TerminalGuard applies :func:`safe` to every write) and the dashboard (``fcps_app.common.md``
applies :func:`one_line` before escaping Markdown)."""

from __future__ import annotations

import re

from ..data.stored_names import CONTROL_CHARACTERS

# The one sanitiser of everything the CLI prints. Judge, panel, file and column names are
# user data: printed raw, an ESC or BEL sequence in one retitles the terminal, clears the
# screen or recolours it, a C1 CSI (U+009B) does the same on 8-bit terminals, a bidi override
# reorders the line, and a newline or carriage return forges a line of its own (e.g. a
# "fcps: error:" line). Every such character becomes "?".
_UNSAFE = CONTROL_CHARACTERS        # C0 but newline and CR, DEL, C1, bidi controls, LS/PS
# a block of output: its own line ends (\n, and \r\n as a CSV writes them) stay; a lone \r goes
_CONTROL = re.compile(f"[{_UNSAFE}]|\r(?!\n)")
_CONTROL_OR_NEWLINE = re.compile(f"[{_UNSAFE}\r\n]")  # one field or line: every line end goes too


def safe(text) -> str:
    """Terminal-safe text of a block of output (newlines kept): a stored name never moves
    the cursor, recolours or retitles the screen. :class:`TerminalGuard` applies it to every
    write of a command, so nothing printed can bypass it."""
    return _CONTROL.sub("?", str(text))


def one_line(text) -> str:
    """Terminal-safe text of one user string inside a line (a name, a file name, a cell):
    :func:`safe`, and its newlines replaced too, so it cannot start a line of its own."""
    return _CONTROL_OR_NEWLINE.sub("?", str(text))


def clean(obj):
    """``obj`` with :func:`one_line` applied to every string in it (dict keys, list items,
    nested): a renderer cleans the dict it renders once, so no name it interpolates can
    break a line."""
    if isinstance(obj, str):
        return one_line(obj)
    if isinstance(obj, dict):
        return {clean(k): clean(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [clean(v) for v in obj]
    if isinstance(obj, tuple):
        return tuple(clean(v) for v in obj)
    return obj
