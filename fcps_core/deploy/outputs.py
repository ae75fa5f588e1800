"""Traffic outputs read against the outputs a predictor was calibrated on.

The panel reader keeps the case of a text output (``A`` and ``a`` are two table cell
values: :mod:`fcps_core.data.panel`) and strips the whitespace around it. A predictor
knows each text judge's calibration outputs (its encoders' vocabularies); an output it
does not know is *never seen*: its code is -1 (a table gives the row its fallback) and
its score the encoder's default. A judge whose outputs merely changed their case between
calibration and traffic (``A``/``B``/``tie`` then, ``a``/``b``/``Tie`` now) would so be
scored as if every output were new, quietly.

:func:`read_known_outputs` reads such an output as the calibration output it stands for:
an output the predictor does not know whose :func:`fold` (stripped, ASCII letters in
lower case) equals the fold of exactly **one** output the predictor knows for that judge
is read as that output. Never when the fold is ambiguous (the calibration outputs ``Tie``
and ``tie`` both fold to ``tie``: a traffic ``TIE`` stays never seen), never for the
missing-output cell value ``<missing>``, and never for a numeric judge (rubric,
continuous: compared as numbers already). An output the predictor knows is always its
own cell value, so a calibration panel that held ``A`` and ``a`` apart still does.

Only the ASCII letters A-Z are folded: the SQL export (:mod:`fcps_core.deploy.sql`) reads
outputs the same way in every dialect, and SQLite's ``lower`` (and PostgreSQL's under a
``C`` collation) changes ASCII letters only, so a fold of every script could not give
the same predictions there. ``É`` and ``é`` stay two outputs.

Each reading, and each output still never seen, is reported per judge
(:class:`OutputReadings`: the ``score`` command's stderr, the audit report).
"""

from __future__ import annotations

import string
from dataclasses import dataclass, field
from typing import Iterable, Mapping

import numpy as np

from ..data.panel import MISSING, MISSING_TOKENS, JudgeColumn, Panel
from .validate import short

#: the judge schemas whose outputs are text (and so are folded); rubric outputs are numbers
TEXT_SCHEMAS = ("pairwise", "binary", "categorical")
#: ASCII upper-case letters to lower case: the only characters :func:`fold` changes
ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)
#: outputs listed per judge in a one-line report (the rest counted)
LISTED = 5


def fold(token: str) -> str:
    """``token`` stripped of surrounding whitespace (``str.strip``, as the panel reader
    strips a cell), its ASCII letters in lower case."""
    return str(token).strip().translate(ASCII_LOWER)


def fold_targets(known: Iterable[str]) -> dict[str, str]:
    """fold -> the one known output with that fold; folds shared by two known outputs
    (ambiguous), the missing-output value and the missing markers (``NA``, ``null``...)
    are left out."""
    groups: dict[str, set[str]] = {}
    for tok in known:
        if tok != MISSING:
            groups.setdefault(fold(tok), set()).add(tok)
    # nothing is read as an output folding like <missing> (a cell "<missing>" is the
    # missing value itself wherever the panel reader meets it), nor like a missing marker
    # (the reader never gives one as an output: the SQL export relies on it)
    for key in [fold(MISSING), *MISSING_TOKENS]:
        groups.pop(key, None)
    return {key: next(iter(toks)) for key, toks in groups.items() if len(toks) == 1}


def why(output: str, target: str) -> str:
    """How ``output`` differs from the calibration output it is read as: ``case``,
    ``spaces`` or ``case and spaces``."""
    if output.strip() == target.strip():
        return "spaces"
    if output == output.strip() and target == target.strip():
        return "case"
    return "case and spaces"


@dataclass
class JudgeReading:
    """One judge's traffic outputs the predictor did not know: ``read`` (output, calibration
    output it is read as, rows), ``never_seen`` (output, rows); most rows first."""

    judge: str
    read: list[tuple[str, str, int]] = field(default_factory=list)
    never_seen: list[tuple[str, int]] = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"judge": self.judge,
                "read_as": [{"output": o, "read_as": t, "why": why(o, t), "rows": n} for o, t, n in self.read],
                "never_seen": [{"output": o, "rows": n} for o, n in self.never_seen]}

    def lines(self) -> list[str]:
        """For people, one line each: :func:`describe`."""
        d = self.to_dict()
        return describe(d["judge"], d["read_as"], d["never_seen"])


def describe(judge: str, read_as: list[dict], never_seen: list[dict]) -> list[str]:
    """One judge's readings for people (``JudgeReading.to_dict``'s lists, as the audit's
    ``read_as`` and ``never_seen_outputs`` hold them), one line each, names and outputs
    escaped by :func:`short` (``repr``: a control character shows as ``\\x1b``): the
    outputs read as a calibration output, then the outputs never seen."""
    out = []
    if read_as:
        parts = [f"{short(r['output'], 40)} read as {short(r['read_as'], 40)} ({r['why']}), "
                 f"{_rows(r['rows'])}" for r in read_as[:LISTED]]
        more = len(read_as) - LISTED
        out.append(f"judge {short(judge)}: " + "; ".join(parts)
                   + (f"; and {more:,} more {'output' if more == 1 else 'outputs'}" if more > 0 else ""))
    if never_seen:
        listed = ", ".join(f"{short(r['output'], 40)} {r['rows']:,}" for r in never_seen[:LISTED])
        more = len(never_seen) - LISTED
        out.append(f"judge {short(judge)}: {_rows(sum(r['rows'] for r in never_seen))} with an output "
                   f"calibration never saw ({listed}" + (f", and {more:,} more" if more > 0 else "") + ")")
    return out


def _rows(n: int) -> str:
    return f"{n:,} {'row' if n == 1 else 'rows'}"


def read_known_outputs(panel: Panel, known: Mapping[str, set],
                       schemas: Mapping[str, str]) -> tuple[Panel, list[JudgeReading]]:
    """(panel with every folded output read as its calibration output, per-judge readings
    of the judges with an output the predictor does not know). ``known``: each judge's
    outputs the predictor knows (``FCPSPredictor.known_outputs``); ``schemas``: the schema
    the predictor reads each judge with (``FCPSPredictor.judge_schemas``): only a judge
    it reads as text, held as text here, is folded (a rubric judge's outputs are numbers;
    its values calibration never saw are reported all the same). A judge not in ``known``
    is left as it is. The panel is returned itself when no output is read otherwise."""
    cols, readings, changed = [], [], False
    for col in panel.judges:
        toks = known.get(col.name)
        if toks is None or col.codes is None or col.schema == "continuous":
            cols.append(col)
            continue
        unknown = [i for i, t in enumerate(col.vocab) if t not in toks and t != MISSING]
        if not unknown:
            cols.append(col)
            continue
        counts = np.bincount(col.codes, minlength=len(col.vocab))
        text = col.schema in TEXT_SCHEMAS and schemas.get(col.name) in TEXT_SCHEMAS
        targets = fold_targets(toks) if text else {}
        reading = JudgeReading(col.name)
        mapped = list(col.vocab)
        for i in unknown:
            n = int(counts[i])
            if n == 0:
                continue
            output = str(col.vocab[i])
            target = targets.get(fold(output))
            if target is None:
                reading.never_seen.append((output, n))
            else:
                reading.read.append((output, target, n))
                mapped[i] = target
        reading.read.sort(key=lambda r: (-r[2], r[0]))
        reading.never_seen.sort(key=lambda r: (-r[1], r[0]))
        if reading.read or reading.never_seen:
            readings.append(reading)
        if reading.read:
            cols.append(_renamed(col, mapped))
            changed = True
        else:
            cols.append(col)
    if not changed:
        return panel, readings
    return Panel(item_ids=panel.item_ids, group_ids=panel.group_ids, labels=panel.labels, judges=cols,
                 blocks=panel.blocks, name=panel.name, label_note=panel.label_note), readings


def _renamed(col: JudgeColumn, mapped: list[str]) -> JudgeColumn:
    """``col`` with its cell value ``vocab[i]`` read as ``mapped[i]``: values that now
    coincide (traffic holding ``A`` and ``a``) become one, in order of first appearance."""
    order = list(dict.fromkeys(mapped))
    index = {t: i for i, t in enumerate(order)}
    remap = np.array([index[t] for t in mapped], dtype=np.int64)
    scalar_map = {}
    for old, new in zip(col.vocab, mapped):
        if old in col.scalar_map:
            scalar_map.setdefault(new, col.scalar_map[old])
    return JudgeColumn(name=col.name, schema=col.schema, codes=remap[col.codes], vocab=order,
                       values=col.values, scalar_map=scalar_map, value_range=col.value_range,
                       range_declared=col.range_declared)
