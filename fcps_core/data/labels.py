"""Human labels to [0, 1]: numbers, A/B preferences, correct/incorrect, integer rubrics.

:func:`map_labels` does the mapping; :func:`describe_labels` reports it (which text became
1, 0 or unlabelled, how numbers were read, on how many rows) and :func:`mapping_sentence`
says it in one line, so an upload preview can show the mapping before anything is stored.
``label_map`` declares words the built-in vocabulary does not know, or reverses it.
"""

from __future__ import annotations

import math
from typing import Mapping, Sequence

import numpy as np

from ..wording import count_of, noun_for
from ..errors import PanelError
from .panel import (BINARY_NEGATIVE, BINARY_POSITIVE, INFERRED_LABEL_NOTE, MISSING_TOKENS, PAIRWISE_NEGATIVE,
                    PAIRWISE_POSITIVE, TIE_TOKENS, parse_float)


def check_label_map(label_map: Mapping[str, float | None] | None) -> dict[str, float]:
    """``label_map`` as {lower-cased, stripped word: value}; a value is a number in [0, 1]
    or None (the word marks an unlabelled row)."""
    if not label_map:
        return {}
    if not isinstance(label_map, Mapping):
        raise PanelError("the label word mapping must map words to numbers in [0,1] (or to nothing: unlabelled)")
    out: dict[str, float] = {}
    for word, value in label_map.items():
        key = str(word).strip().lower()
        if not key:
            raise PanelError("the label word mapping has an empty word",
                             hint="empty label cells are unlabelled rows already")
        if value is None:
            out[key] = math.nan
            continue
        try:
            v = float(value)
        except (TypeError, ValueError):
            v = math.nan
        if not (math.isfinite(v) and 0.0 <= v <= 1.0):
            raise PanelError(f"the label word mapping sends {str(word)!r} to {value!r}, not a number in [0,1]")
        out[key] = v
    return out


def map_labels(raw: Sequence[str], *, column: str = "label", first_line: int = 2,
               label_range: tuple[float, float] | None = None,
               counts: Sequence[int] | None = None,
               label_map: Mapping[str, float | None] | None = None) -> tuple[np.ndarray, str]:
    """Map label strings to [0, 1] (NaN = unlabelled). Returns (labels, note).

    Integer labels outside [0, 1] are read as a rubric and normalised by their range only
    when that range is believable: the distinct values are contiguous integers and each is
    seen at least twice. One outlier (a ``10`` among 0/1 labels) is an error naming its row,
    never a silent rescaling of every label; ``label_range`` states the range instead.
    ``counts`` gives each ``raw`` entry's multiplicity (callers that pass distinct values).
    ``label_map`` (word -> value in [0, 1], or None for unlabelled; case-insensitive) is
    applied before every built-in rule: it reverses ``good``/``bad`` or names new words.
    """
    raw = np.asarray(raw, dtype=object)
    out = np.full(len(raw), np.nan)
    numeric_rows: list[int] = []
    words = check_label_map(label_map)
    for i, tok in enumerate(raw):
        t = str(tok).strip()
        low = t.lower()
        if low in words:
            out[i] = words[low]
            continue
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
                # name a label that is both, else a fraction (which rules out a rubric) and a
                # label outside [0,1] (which rules out [0,1]): '4.0' alone is a whole number
                outside = (vals < 0) | (vals > 1)
                fraction = np.mod(vals, 1) != 0
                both = np.flatnonzero(outside & fraction)
                hint = "rescale labels to [0,1] or pass --label-range LO,HI"
                if both.size:
                    i = int(idx[both[0]])
                    raise PanelError(f"label {raw[i]!r} is outside [0,1] and not an integer rubric score",
                                     line=first_line + i, column=column, hint=hint)
                i = int(idx[np.flatnonzero(fraction)[0]])
                o = int(idx[np.flatnonzero(outside)[0]])
                raise PanelError(f"label {raw[i]!r} is not a whole number, so the labels are not integer rubric "
                                 f"scores, and some are outside [0,1] (such as {raw[o]!r})",
                                 line=first_line + i, column=column,
                                 hint=hint + " (averaged 1-5 scores: 1,5)")
    if words:
        declared = ", ".join(f"{w!r} -> {'unlabelled' if math.isnan(v) else f'{v:g}'}"
                             for w, v in sorted(words.items()))
        note = "; ".join(filter(None, [note, f"label words declared: {declared}"]))
    return out, note


def _rule(low: str, words: dict) -> str:
    """Which rule maps a (lower-cased) non-numeric label word."""
    if low in words:
        return "declared"
    if low in MISSING_TOKENS:
        return "missing"
    if low in PAIRWISE_POSITIVE or low in PAIRWISE_NEGATIVE or low in TIE_TOKENS:
        return "preference"
    return "verdict word"


def describe_labels(raw: Sequence[str], mapped: np.ndarray, counts: Sequence[int] | None = None, *,
                    note: str = "", label_range: tuple[float, float] | None = None,
                    label_map: Mapping[str, float | None] | None = None) -> dict:
    """How :func:`map_labels` read the labels ``raw`` (distinct values with ``counts``, or
    every row) into ``mapped``; JSON-ready:

    ``words``: one entry per label text (stripped, as spelled): ``label``, ``value`` (None =
    unlabelled), ``rows`` and ``rule`` (``declared`` by ``label_map``, ``preference`` A/B/tie,
    ``verdict word``); ``unlabelled``: the missing-value spellings and their rows (``""`` is an
    empty cell); ``numbers``: None, or the numeric labels' ``rows``, ``min``, ``max``,
    ``values`` (up to 12 distinct) and ``scale``: ``kept`` (already in [0, 1]), ``declared``
    (normalised from ``range``) or ``inferred`` (integer rubric, ``range`` observed);
    ``kind``: ``words``, ``numbers``, ``rubric``, ``mixed`` or ``none``; ``rows`` and
    ``labelled`` totals; ``note`` the panel's label note.
    """
    raw = np.asarray(raw, dtype=object)
    mapped = np.asarray(mapped, dtype=float)
    mult = np.ones(len(raw), dtype=np.int64) if counts is None else np.asarray(counts, dtype=np.int64)
    words_map = check_label_map(label_map)
    words: dict[str, dict] = {}
    unlabelled: dict[str, int] = {}
    num_rows, num_vals = 0, {}
    for tok, value, n in zip(raw, mapped, mult):
        t = str(tok).strip()
        low = t.lower()
        if low not in words_map and low not in MISSING_TOKENS and parse_float(t) is not None:
            num_rows += int(n)
            v = float(t)
            num_vals[v] = num_vals.get(v, 0) + int(n)
            continue
        rule = _rule(low, words_map)
        if rule == "missing" or (rule == "declared" and math.isnan(value)):
            unlabelled[t] = unlabelled.get(t, 0) + int(n)
            if rule == "missing":
                continue
        entry = words.setdefault(t, {"label": t, "value": None if math.isnan(value) else float(value),
                                     "rows": 0, "rule": rule})
        entry["rows"] += int(n)
    numbers = None
    if num_rows:
        distinct = sorted(num_vals)
        lo, hi = distinct[0], distinct[-1]
        if label_range is not None:
            scale, rng = "declared", [float(label_range[0]), float(label_range[1])]
        elif note.startswith(INFERRED_LABEL_NOTE):
            scale, rng = "inferred", [lo, hi]
        else:
            scale, rng = "kept", None
        numbers = {"rows": num_rows, "min": lo, "max": hi, "values": distinct[:12],
                   "n_values": len(distinct), "scale": scale, "range": rng}
    text_words = [w for w in words.values() if w["value"] is not None]
    if numbers is None:
        kind = "words" if text_words else "none"
    elif text_words:
        kind = "mixed"
    else:
        kind = "numbers" if numbers["scale"] == "kept" else "rubric"
    total = int(mult.sum())
    labelled = int(sum(int(n) for value, n in zip(mapped, mult) if not math.isnan(value)))
    return {"kind": kind, "words": sorted(words.values(), key=lambda w: (
                -1.0 if w["value"] is None else -w["value"], -w["rows"], w["label"])),
            "unlabelled": [{"label": k, "rows": v} for k, v in sorted(unlabelled.items(), key=lambda kv: -kv[1])],
            "numbers": numbers, "rows": total, "labelled": labelled, "note": note}


def _value_text(v: float | None) -> str:
    if v is None:
        return "unlabelled"
    return {0.5: "1/2"}.get(v, f"{v:g}")


def _rows(n: int) -> str:
    return count_of(n, "row")


def mapping_sentence(report: dict, *, what: str = "Labels") -> str:
    """One line saying how labels were mapped, e.g. ``Labels: 'good' -> 1 (412 rows),
    'bad' -> 0 (380 rows); 'n/a' -> unlabelled (3 rows).``"""
    if not report or report.get("kind") == "none" and not report.get("unlabelled"):
        return f"{what}: none (every row is unlabelled)."
    parts = []
    words = [w for w in report["words"] if w["value"] is not None]
    if words:
        parts.append(", ".join(f"{w['label']!r} -> {_value_text(w['value'])} ({_rows(w['rows'])})"
                               + (" [declared]" if w["rule"] == "declared" else "") for w in words))
    num = report.get("numbers")
    if num:
        shown = ", ".join(f"{v:g}" for v in num["values"]) + (" ..." if num["n_values"] > len(num["values"]) else "")
        if num["scale"] == "kept":
            parts.append(f"numbers in [0, 1] kept as they are ({shown}; {_rows(num['rows'])})")
        else:
            lo, hi = num["range"]
            how = "declared range" if num["scale"] == "declared" else "range inferred from the data"
            parts.append(f"rubric scores {shown} -> (y - {lo:g}) / {hi - lo:g}, {how} [{lo:g}, {hi:g}] "
                         f"({_rows(num['rows'])})")
    gone = [w for w in report["words"] if w["value"] is None] + \
        [dict(u, rule="missing") for u in report.get("unlabelled", []) if u["label"] not in
         {w["label"] for w in report["words"]}]
    if gone:
        parts.append(", ".join(("empty" if not u["label"] else repr(u["label"])) + f" -> unlabelled ({_rows(u['rows'])})"
                               for u in gone))
    return f"{what}: " + "; ".join(parts) + "."


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
