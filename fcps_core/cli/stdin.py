"""``-`` as a file argument: read standard input.

The readers take paths (DuckDB reads a file; a pipe is refused, since its size is not known
before reading). So ``-`` is copied, in chunks, into a temporary file that the readers
accept, and the command runs on that file:

* the copy stops as soon as it passes the byte limit the reader would apply (``--max-mb``
  for ``import``, the import default of 200 MB otherwise), before more memory or disk is
  spent;
* the format comes from the content (gzip, Parquet, JSON Lines, tab- or other-delimited
  text), or from ``import --format``; the temporary file carries the matching suffix;
* the file is named ``stdin.<suffix>`` (a panel read from it is called ``stdin``) and every
  line the command prints shows its path as ``<stdin>`` (:func:`register_alias`, applied by
  the output guard, :class:`~fcps_core.cli.render.TerminalGuard`);
* the temporary folder is removed when the command ends.

Only one argument may be ``-`` (there is one standard input).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import zlib

from ..errors import FCPSError
from .render import register_alias

STDIN_NAME = "<stdin>"
#: the file arguments ``-`` may stand for: (attribute, flag shown in errors, forced suffix)
FILE_ARGUMENTS = (("panel", "PANEL", None), ("labels_path", "--labels", None),
                  ("traffic", "--traffic", None), ("from_panel", "--from", None),
                  ("judge_costs", "--judge-costs", ".csv"), ("model", "MODEL", ".json"))
#: commands whose ``panel`` argument is a file (``runs --panel`` is a stored panel's name)
PANEL_FILE_COMMANDS = {"select", "sweep", "import", "check", "next-judge", "score", "audit"}
_CHUNK = 1 << 20
_SNIFF = 64 * 1024
_FORMAT_SUFFIX = {"csv": ".csv", "tsv": ".tsv", "parquet": ".parquet", "jsonl": ".jsonl"}


def stdin_arguments(args) -> list[tuple[str, str, str | None]]:
    """The file arguments of ``args`` given as ``-``."""
    out = []
    for attr, flag, suffix in FILE_ARGUMENTS:
        if attr == "panel" and getattr(args, "command", None) not in PANEL_FILE_COMMANDS:
            continue
        if getattr(args, attr, None) == "-":
            out.append((attr, flag, suffix))
    return out


def byte_limit(args) -> int:
    """The reader's byte limit for this command: ``import --max-mb``, else the default."""
    from ..service.upload import DEFAULT_LIMITS, MB
    max_mb = getattr(args, "max_mb", None)
    if isinstance(max_mb, float) and 0 < max_mb:
        return int(max_mb * MB)
    return DEFAULT_LIMITS.max_bytes


def read_stdin_arguments(args, cleanup: list) -> None:
    """Replace a ``-`` file argument of ``args`` by a temporary copy of standard input
    (its folder appended to ``cleanup`` for :func:`remove_copies`)."""
    given = stdin_arguments(args)
    if not given:
        return
    if len(given) > 1:
        raise FCPSError(f"{given[0][1]} and {given[1][1]} are both '-': only one input can be "
                        "standard input; give the other as a file")
    attr, flag, suffix = given[0]
    stream = getattr(sys.stdin, "buffer", None)
    if stream is None:
        raise FCPSError(f"{flag} is '-' (standard input), but there is no standard input")
    if _is_terminal(stream):
        raise FCPSError(f"{flag} is '-' (standard input), but standard input is a terminal: "
                        "pipe the data in (e.g. '... - < FILE' or 'cat FILE | ... -')")
    folder = tempfile.mkdtemp(prefix="fcps-stdin-")
    cleanup.append(folder)
    path = copy_stdin(stream, folder, limit=byte_limit(args), suffix=suffix,
                      fmt=getattr(args, "fmt", None) if args.command == "import" else None,
                      flag=flag, is_import=args.command == "import")
    register_alias(path, STDIN_NAME)
    setattr(args, attr, path)


def _is_terminal(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


def copy_stdin(stream, folder: str, *, limit: int, suffix: str | None = None, fmt: str | None = None,
               flag: str = "PANEL", is_import: bool = False) -> str:
    """Copy ``stream`` into ``folder/stdin.<suffix>`` chunk by chunk, refusing it once it
    passes ``limit`` bytes; the suffix is ``suffix``, else ``fmt``'s, else the content's."""
    from ..service.upload import FileError, size_text
    part = os.path.join(folder, "stdin.part")
    size = 0
    head = b""
    with open(part, "wb") as fh:
        while True:
            chunk = stream.read(_CHUNK)
            if not chunk:
                break
            size += len(chunk)
            if size > limit:
                raise FileError(f"standard input is more than {size_text(limit)}, above the import limit",
                                file=STDIN_NAME,
                                hint=("raise the limit with --max-mb" if is_import else
                                      "save it to a file and split it, or import it with a higher --max-mb"))
            if len(head) < _SNIFF:
                head += chunk[:_SNIFF - len(head)]
            fh.write(chunk)
    if suffix is None:
        suffix = _FORMAT_SUFFIX.get(fmt or "") or sniff_suffix(head)
    path = os.path.join(folder, "stdin" + suffix)
    os.replace(part, path)
    return path


def sniff_suffix(head: bytes) -> str:
    """The file suffix the content's first bytes call for: ``.gz`` after the inner format for
    gzip, ``.parquet`` (PAR1 magic), ``.jsonl`` (a record starting with ``{``), ``.tsv``
    (a first line with tabs and no comma), else ``.csv`` (whose reader detects ``;`` and
    ``|`` delimiters itself)."""
    if head[:2] == b"\x1f\x8b":
        try:
            inner = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(head, _SNIFF)
        except zlib.error:
            inner = b""
        return sniff_suffix(inner) + ".gz" if inner[:2] != b"\x1f\x8b" else ".csv.gz"
    if head[:4] == b"PAR1":
        return ".parquet"
    text = head.lstrip(b"\xef\xbb\xbf \t\r\n")
    if text[:1] == b"{":
        return ".jsonl"
    first = text.split(b"\n", 1)[0]
    if b"\t" in first and b"," not in first:
        return ".tsv"
    return ".csv"


def remove_copies(cleanup: list) -> None:
    """Remove the temporary folders :func:`read_stdin_arguments` made."""
    for folder in cleanup:
        shutil.rmtree(folder, ignore_errors=True)
