"""Human labels to [0, 1]: numbers, A/B preferences, correct/incorrect, integer rubrics."""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .errors import PanelError
from .panel import (BINARY_NEGATIVE, BINARY_POSITIVE, INFERRED_LABEL_NOTE, MISSING_TOKENS, PAIRWISE_NEGATIVE,
                    PAIRWISE_POSITIVE, TIE_TOKENS, parse_float)


def map_labels(raw: Sequence[str], *, column: str = "label", first_line: int = 2,
               label_range: tuple[float, float] | None = None,
               counts: Sequence[int] | None = None) -> tuple[np.ndarray, str]:
    """Map label strings to [0, 1] (NaN = unlabelled). Returns (labels, note).

    Integer labels outside [0, 1] are read as a rubric and normalised by their range only
    when that range is believable: the distinct values are contiguous integers and each is
    seen at least twice. One outlier (a ``10`` among 0/1 labels) is an error naming its row,
    never a silent rescaling of every label; ``label_range`` states the range instead.
    ``counts`` gives each ``raw`` entry's multiplicity (callers that pass distinct values).
    """
    raw = np.asarray(raw, dtype=object)
    out = np.full(len(raw), np.nan)
    numeric_rows: list[int] = []
    for i, tok in enumerate(raw):
        t = str(tok).strip()
        low = t.lower()
        if low in MISSING_TOKENS:
            continue
        v = parse_float(t)
        if v is not None:
            if not math.isfinite(v):
                raise PanelError(f"label {t!r} is not a finite number", line=first_line + i,
                                 column=column, hint="use a number in [0,1], A/B, or leave it empty for an unlabelled row")
            out[i] = v
            numeric_rows.append(i)
        elif low in PAIRWISE_POSITIVE:
            out[i] = 1.0
        elif low in PAIRWISE_NEGATIVE:
            out[i] = 0.0
        elif low in TIE_TOKENS:
            out[i] = 0.5
        elif low in BINARY_POSITIVE:
            out[i] = 1.0
        elif low in BINARY_NEGATIVE:
            out[i] = 0.0
        else:
            raise PanelError(f"label {t!r} cannot be mapped to [0,1]", line=first_line + i,
                             column=column,
                             hint="use numbers in [0,1], A/B preferences, correct/incorrect, or integer rubric scores with --label-range")
    note = ""
    if numeric_rows:
        idx = np.asarray(numeric_rows)
        vals = out[idx]
        if label_range is not None:
            lo, hi = label_range
            if not hi > lo:
                raise PanelError(f"label range {lo},{hi} is empty", column=column)
            bad = np.flatnonzero((vals < lo) | (vals > hi))
            if bad.size:
                i = int(idx[bad[0]])
                raise PanelError(f"label {raw[i]!r} is outside the declared range [{lo:g}, {hi:g}]",
                                 line=first_line + i, column=column)
            out[idx] = (vals - lo) / (hi - lo)
            note = f"labels normalised from [{lo:g}, {hi:g}]"
        elif (vals < 0).any() or (vals > 1).any():
            if np.all(np.mod(vals, 1) == 0):
                lo, hi = float(vals.min()), float(vals.max())
                if hi == lo:
                    raise PanelError(f"every numeric label is {lo:g}: cannot infer a rubric range",
                                     column=column, hint="pass --label-range LO,HI")
                _check_inferable_range(raw, idx, vals, counts, column, first_line)
                out[idx] = (vals - lo) / (hi - lo)
                note = f"{INFERRED_LABEL_NOTE} [{lo:g}, {hi:g}]"
            else:
                i = int(idx[np.flatnonzero((vals < 0) | (vals > 1))[0]])
                raise PanelError(f"label {raw[i]!r} is outside [0,1] and not an integer rubric score",
                                 line=first_line + i, column=column,
                                 hint="rescale labels to [0,1] or pass --label-range LO,HI")
    return out, note


def _check_inferable_range(raw, idx: np.ndarray, vals: np.ndarray, counts, column: str,
                           first_line: int) -> None:
    """Integer labels may set a rubric range only if their values are contiguous and each is
    seen at least twice; otherwise name the first odd row."""
    mult = np.ones(len(idx)) if counts is None else np.asarray(counts, float)[idx]
    distinct, inverse = np.unique(vals, return_inverse=True)
    seen = np.bincount(inverse, weights=mult)
    hint = "fix that row, or pass --label-range LO,HI to declare the scale"
    rare = np.flatnonzero(seen < 2)
    gaps = np.flatnonzero(np.diff(distinct) > 1)
    if rare.size:
        i = int(idx[np.flatnonzero(inverse == rare[-1])[0]])
        raise PanelError(f"label {raw[i]!r} is the only one of its value among integer labels "
                         f"{', '.join(f'{v:g}' for v in distinct[:12])}: a rubric range is not inferred "
                         "from a single row", line=first_line + i, column=column, hint=hint)
    if gaps.size:
        i = int(idx[np.flatnonzero(inverse == gaps[0] + 1)[0]])
        raise PanelError(f"label {raw[i]!r} leaves a gap in the integer labels "
                         f"({', '.join(f'{v:g}' for v in distinct[:12])}): a rubric range is not inferred "
                         "from non-contiguous values", line=first_line + i, column=column, hint=hint)
