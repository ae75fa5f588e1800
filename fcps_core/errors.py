"""Errors raised at the library boundary.

Every user-facing error is a single line that names where the problem is (file line,
column) and what to do about it. The CLI prints ``str(error)`` and exits with status 2.
"""

from __future__ import annotations


class FCPSError(ValueError):
    """Base class for input errors a user can fix."""


class PanelError(FCPSError):
    """A panel file or panel object is malformed.

    ``line`` is the 1-based line of the file (the header is line 1) and ``column`` the
    column name, when the problem can be located.
    """

    def __init__(self, message: str, *, line: int | None = None, column: str | None = None,
                 hint: str | None = None):
        self.line = line
        self.column = column
        self.hint = hint
        self.detail = message
        where = []
        if line is not None:
            where.append(f"line {line}")
        if column is not None:
            where.append(f"column {column!r}")
        text = (", ".join(where) + ": " if where else "") + message
        if hint:
            text += f" ({hint})"
        self.message = text
        super().__init__(text)


    def with_item(self, item: str) -> "PanelError":
        """The same error located by item id (for long files, whose items span many lines)."""
        return PanelError(f"item {item!r}: {self.detail}", column=self.column, hint=self.hint)


class SplitError(FCPSError):
    """The requested S/M/V/T blocks cannot be drawn from the labelled rows."""


class MenuError(FCPSError):
    """The candidate menu (families, path rules, K) is invalid or empty."""


class PredictorError(FCPSError):
    """A saved predictor cannot be loaded or applied to a panel."""


class StoreError(FCPSError):
    """A store operation cannot be done (unknown panel, name taken, bad name, newer schema)."""
