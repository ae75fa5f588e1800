"""How an import read a file, in words, and its errors in the words of a page.

* :func:`judge_mappings` says, per judge schema, how outputs became numbers and cells
  (labels: :func:`fcps_core.data.labels.describe_labels` and ``Panel.label_mapping``).
* :func:`page_wording` rewrites an error written for the command line (which names flags
  such as ``--label-range`` or ``import --replace``) for a page whose controls set the same
  options: each flag is keyed by the option it sets (:data:`FLAG_OPTIONS`) and the page
  names its control for that option. The library's own messages keep the CLI wording.
"""

from __future__ import annotations

import re
from typing import Mapping

import numpy as np

from ..wording import count_of, noun_for
from ..data.panel import MISSING, PAIRWISE_GRADED

#: CLI flag -> the load/import option it sets ("limits" for the --max-* reading limits)
FLAG_OPTIONS = {
    "import --replace": "replace", "--replace": "replace",
    "--label-range": "label_range", "--judge-range": "judge_range",
    "--label-column": "label_column", "--item-column": "item_column", "--group-column": "group_column",
    "--block-column": "block_column", "--judge-column": "judge_column", "--output-column": "output_column",
    "--judges": "judges", "--schema": "schema", "--delimiter": "delimiter", "--format": "fmt",
    "--decimal": "decimal",
    "--labels": "labels_path", "--layout": "layout",
    "--max-mb": "limits", "--max-rows": "limits", "--max-judges": "limits", "--max-distinct": "limits",
}
# A flag's argument as hints write it: a placeholder, a quoted value or a known word.
_ARG = r"(?:\s+(?P<arg>LO,HI|FILE|\$?'(?:[^'\\]|\\.)*'|\.(?=[\s)]|$)|csv|tsv|parquet|jsonl|wide|long|auto|pairwise|binary|" \
       r"rubric|continuous|categorical)(?![\w-]))?"
_FLAG = re.compile(r"(?P<verb>\b(?:pass|give|use|set)\s+)?(?P<flag>import --replace|--[a-z][a-z-]*)" + _ARG)


def page_wording(message: str, controls: Mapping[str, str], *, missing: str | None = None) -> str:
    """``message`` with every CLI flag replaced by the page control that sets its option.

    ``controls`` maps an option name (:data:`FLAG_OPTIONS` values) to how the page names its
    control, e.g. ``{"label_range": "the 'label range' control", "replace": "tick 'Replace
    the stored panel of this name'"}``. ``pass --label-range LO,HI`` becomes ``set the 'label
    range' control``, ``pass --delimiter ';'`` ``set the 'delimiter' control to ';'``; a flag
    whose option has no control becomes ``missing`` (default: the command-line import). Flags
    that are not import options are left as written.
    """
    missing = missing or "the command-line import (python -m fcps_core import; this page keeps the default)"

    def swap(m: re.Match) -> str:
        flag = m.group("flag")
        if flag not in FLAG_OPTIONS:
            return m.group(0)               # not an import flag: left as written
        phrase = controls.get(FLAG_OPTIONS[flag])
        arg = m.group("arg")
        if arg in ("LO,HI", "FILE"):
            arg = None
        if phrase is None:
            return ("use " if m.group("verb") else "") + missing
        if arg is not None:
            arg = {"$'\\t'": "tab", "'\\t'": "tab"}.get(arg, arg)
            return f"set {phrase} to {arg}"
        verb = "set " if m.group("verb") and not phrase.startswith(("tick", "choose", "set")) else ""
        return f"{verb}{phrase}"

    return _FLAG.sub(swap, message)


def _value(v: float) -> str:
    return {0.5: "1/2"}.get(float(v), f"{float(v):g}")


def output_mapping(judge) -> str:
    """How one judge's outputs were read, in words."""
    missing = " A missing output is its own cell <missing>." if judge.has_missing else ""
    if judge.schema in ("pairwise", "binary"):
        pairs = ", ".join(f"{tok!r} -> {_value(v)}" for tok, v in sorted(
            ((str(t), v) for t, v in judge.scalar_map.items() if t != MISSING), key=lambda tv: (-tv[1], tv[0])))
        graded = judge.schema == "pairwise" and any(
            "".join(str(t).lower().split()) in PAIRWISE_GRADED for t in judge.vocab)
        what = "ordinal pairwise (ordered verdicts, from A clearly better to B clearly better): " if graded else ""
        return f"{what}{pairs} (scalar families); every output is its own table cell.{missing}"
    if judge.schema == "rubric":
        lo, hi = judge.value_range
        scores = [t for t in judge.vocab if t != MISSING]
        how = "declared" if judge.range_declared else "observed"
        if hi == lo:        # the encoding gives every row 1/2 (fcps_core.data.encoding): no scale to divide by
            why = "one score observed" if how == "observed" else f"declared range [{lo:g}, {hi:g}]"
            return (f"scores {', '.join(scores[:10])} -> 1/2 ({why}: no range to scale by); every score is its "
                    f"own table cell.{missing}")
        shift = f"x - {lo:g}" if lo >= 0 else f"x + {-lo:g}"
        return (f"scores {', '.join(scores[:10])}{' ...' if len(scores) > 10 else ''} -> ({shift}) / "
                f"{hi - lo:g}, {how} range [{lo:g}, {hi:g}]; every score is its own table cell.{missing}")
    if judge.schema == "continuous":
        vals = judge.values[~np.isnan(judge.values)]
        span = f" from {vals.min():g} to {vals.max():g}" if vals.size else ""
        return (f"numbers{span}, used as they are by scalar families and cut into quantile bins (fitted on the "
                f"calibration rows) for tables.{missing}")
    n = len([t for t in judge.vocab if t != MISSING])
    return (f"{count_of(n, 'distinct output')}, each its own table cell; scalar families encode each output by the "
            f"smoothed mean label of its calibration rows.{missing}")


def judge_mappings(panel) -> list[dict]:
    """Judges grouped by schema and identical output mapping: ``[{"schema", "judges",
    "mapping"}]`` in first-judge order."""
    groups: dict[tuple[str, str], list[str]] = {}
    for j in panel.judges:
        groups.setdefault((j.schema, output_mapping(j)), []).append(j.name)
    return [{"schema": schema, "judges": names, "mapping": text} for (schema, text), names in groups.items()]
