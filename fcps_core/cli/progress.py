"""The CLI's progress printer: a live line on a terminal, plain lines (or nothing) elsewhere.

On a terminal, progress redraws one status line with a carriage return (as the library's
``selection.progress_to_stderr`` does). Into a pipe or a log file those carriage returns
are noise: a 30-split sweep left 2,881 bytes, 36 carriage returns and one newline. So when
stderr is not a terminal the printer writes one plain, newline-ended line per stage -- the
first report and each further tenth of the work, and "done" -- and never a ``\\r``.
"""

from __future__ import annotations

import sys

from .render import one_line

#: characters of the message shown on the live terminal line
WIDTH = 70


def stderr_is_terminal() -> bool:
    """Whether stderr is a terminal (a closed or odd stream counts as not one)."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def progress_printer(args=None):
    """The ``progress(frac, message)`` callback for a command: None with ``--quiet``, the
    live line on a terminal, :class:`PlainProgress` otherwise. Decided when called, so a
    test (or a user) redirecting stderr gets the plain form."""
    if getattr(args, "quiet", False):
        return None
    return terminal_progress if stderr_is_terminal() else PlainProgress()


def terminal_progress(frac: float, message: str) -> None:
    """One status line redrawn in place (the carriage return is the write's first character,
    the only place :class:`~fcps_core.cli.render.TerminalGuard` keeps one)."""
    sys.stderr.write(f"\r[{frac * 100:5.1f}%] {one_line(message)[:WIDTH]:<{WIDTH}}")
    if frac >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()


class PlainProgress:
    """Progress for a pipe or log: one line per stage -- the first report, then the first
    report in each new tenth of the work, and the final one -- each ending in a newline."""

    def __init__(self) -> None:
        self.stage = -1

    def __call__(self, frac: float, message: str) -> None:
        stage = min(10, max(0, int(frac * 10 + 1e-9)))
        if stage <= self.stage:
            return
        self.stage = stage
        sys.stderr.write(f"[{frac * 100:5.1f}%] {one_line(message)}\n")
        sys.stderr.flush()
