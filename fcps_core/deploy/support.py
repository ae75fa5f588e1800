"""Calibration support of a deployed predictor, and where new rows stand against it.

A predictor file carries a ``support`` section (made at selection time from the rows the
deployed model learned from, never from the research test block T):

* ``rows``: how many calibration rows; ``missing_rows``: how many lacked a judge output;
* ``judges``: per judge, the count of every encoder code (table cell value, ``<missing>``
  included), the rows with an output the encoder had never seen, and the range of the
  judge's scalar score (continuous judges: of the raw value) over calibration;
* ``patterns``: every joint output pattern over the predictor's judges seen in
  calibration, with its count N_z (the paper's cell counts, Eq. cell-pressure).

Per-row support (:func:`row_support`), used by ``score`` and the traffic audit:

* ``N_z``: calibration count of the row's joint pattern (0 = unseen pattern; a row with a
  never-seen output is unseen);
* ``in_range``: every judge's output was seen in calibration and every continuous value
  lies inside the calibration range (the nearest support measure for scalar families,
  which extrapolate across patterns but not across outputs);
* ``in_support``: ``in_range``, and also ``N_z > 0`` when the deployed family reads the
  joint table (table-like families, or an average with a table-like member). A
  continuous value outside its judge's calibration range is out of support for every
  family: a table bins it into its edge bin, whose rows never held such a value;
* ``missing``: which judges had no output on the row (a judge was down, or a parse
  error): see :data:`MISSING_BEHAVIOUR` for what each family then does.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..data.encoding import INT64_SAFE, JudgeEncoder, apply_encoders
from ..data.panel import ERROR_TOKENS, MISSING, Panel

#: what a family does with a missing judge output (stated in ``score``/``audit`` output)
MISSING_BEHAVIOUR = {
    "table": "a missing output is its own cell value when calibration had missing outputs; "
             "otherwise the row's pattern is unseen and gets the fallback prediction",
    "scalar": "a missing output gets the judge's neutral score (pairwise/binary: the tie "
              "score 0.5; rubric/continuous: the middle of the scale; categorical: the "
              "calibration mean label)",
    "ds_jury": "a missing output is an abstention: the judge's vote is left out of the posterior",
}


def calibration_support(panel: Panel, rows: np.ndarray, encoders: list[JudgeEncoder]) -> dict:
    """The ``support`` section of a predictor: code counts, score ranges and joint-pattern
    counts of ``encoders``' judges over the calibration ``rows`` of ``panel``."""
    rows = np.asarray(rows, dtype=np.int64)
    sub = panel.subset_judges([e.name for e in encoders]).take(rows)
    encoded = apply_encoders(sub, encoders)
    codes, scores = encoded.codes, encoded.scores
    cols = {c.name: c for c in sub.judges}
    judges = []
    missing = np.zeros(len(rows), dtype=bool)
    for k, enc in enumerate(encoders):
        c = codes[:, k]
        lo = hi = None
        if MISSING in enc.vocab:
            missing |= c == enc.vocab.index(MISSING)
        if enc.schema == "continuous":
            vals = cols[enc.name].values
            missing |= np.isnan(vals)
            vals = vals[~np.isnan(vals)]
            if vals.size:
                lo, hi = float(vals.min()), float(vals.max())
        elif len(scores):
            lo, hi = float(scores[:, k].min()), float(scores[:, k].max())
        judges.append({"name": enc.name,
                       "counts": np.bincount(c[c >= 0], minlength=enc.alphabet_size).tolist(),
                       "unseen": int((c < 0).sum()), "range": [lo, hi]})
    seen = codes[(codes >= 0).all(axis=1)]
    if len(seen):
        distinct, counts = np.unique(seen, axis=0, return_counts=True)
    else:
        distinct, counts = np.zeros((0, len(encoders)), dtype=np.int64), np.zeros(0, dtype=np.int64)
    return {"rows": int(len(rows)), "missing_rows": int(missing.sum()), "judges": judges,
            "patterns": {"codes": distinct.tolist(), "counts": counts.tolist()}}


def _count(value, what: str) -> int:
    """A non-negative whole number of a support section (bool and non-integers refused)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer, float)) \
            or not float(value).is_integer() or value < 0:
        raise ValueError(f"{what} must be a whole number >= 0 (got {value!r})")
    return int(value)


def _finite(v) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool) \
        and np.isfinite(float(v))


def check_support(support: dict, encoders: list[JudgeEncoder]) -> None:
    """Raise ValueError when a support section does not fit the predictor's encoders, or
    holds impossible counts (negative, or more rows in a part than in the whole)."""
    if not isinstance(support, dict):
        raise ValueError("the support section must be a JSON object")
    rows = _count(support["rows"], "support rows")
    if _count(support.get("missing_rows", 0), "support missing_rows") > rows:
        raise ValueError(f"support missing_rows is more than its {rows} rows")
    judges = support["judges"]
    if [j["name"] for j in judges] != [e.name for e in encoders]:
        raise ValueError("support judges differ from the predictor's judges")
    for j, e in zip(judges, encoders):
        if len(j["counts"]) != e.alphabet_size or any(int(c) < 0 for c in j["counts"]):
            raise ValueError(f"support counts of judge {e.name!r} do not match its outputs")
        rng = j.get("range", [None, None])
        if not isinstance(rng, list) or len(rng) != 2 or (rng != [None, None] and not (
                all(_finite(v) for v in rng) and rng[0] <= rng[1])):
            raise ValueError(f"support range of judge {e.name!r} must be [low, high] (two finite numbers, "
                             "low <= high) or [null, null]")
        seen = sum(_count(c, f"support counts of judge {e.name!r}") for c in j["counts"])
        if seen + _count(j.get("unseen", 0), f"support unseen count of judge {e.name!r}") > rows:
            raise ValueError(f"support counts of judge {e.name!r} add up to more than its {rows} rows")
    pats = support["patterns"]
    if len(pats["codes"]) != len(pats["counts"]):
        raise ValueError("support patterns and counts differ in length")
    for row in pats["codes"]:
        if len(row) != len(encoders) or any(not (0 <= int(c) < e.alphabet_size)
                                            for c, e in zip(row, encoders)):
            raise ValueError("a support pattern holds an output code outside its judge's outputs")
    if sum(_count(c, "support pattern counts") for c in pats["counts"]) > rows:
        raise ValueError(f"support pattern counts add up to more than its {rows} rows")


@dataclass
class RowSupport:
    """Where each row of a scored panel stands against the calibration support."""

    codes: np.ndarray          # (rows, judges) table codes with the support encoders (-1 unseen)
    N_z: np.ndarray            # calibration count of each row's joint pattern
    in_range: np.ndarray       # every output seen and every continuous value inside its range
    in_support: np.ndarray     # what the deployed family needs (see module doc)
    missing: np.ndarray        # (rows, judges) bool: the judge gave no output
    parse_error: np.ndarray    # (rows, judges) bool: the judge's output is a parse error
    judges: list[str]

    def missing_names(self) -> list[str]:
        """Per row, the judges without an output joined by ';' ('' when none); joined once
        per distinct pattern of missing judges, not once per row."""
        texts, inverse = self.missing_groups()
        return [texts[i] for i in inverse.tolist()]

    def missing_groups(self) -> tuple[list[str], np.ndarray]:
        """(texts, inverse): the distinct ';'-joined sets of judges without an output (each
        name formula-neutralised, :func:`fcps_core.files.csv_writer.neutralise_cell`), and for every
        row the index of its text (``missing_names()[i] == texts[inverse[i]]``)."""
        n = len(self.missing)
        if n == 0 or not self.missing.any():
            return [""], np.zeros(n, dtype=np.int64)
        # each name neutralised on its own: a spreadsheet splitting the cell at ';' (the list
        # separator of many locales) must not find a formula in the second name either
        from ..files.csv_writer import neutralise_cell
        names = np.asarray([neutralise_cell(j) for j in self.judges], dtype=object)
        width = self.missing.shape[1]
        if width > 62:
            # the row's bytes as its key; the text of each distinct key from its first row
            packed = np.ascontiguousarray(np.packbits(self.missing, axis=1))
            keys = packed.view(np.dtype((np.void, packed.shape[1]))).reshape(-1)
            _, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
            return ([";".join(names[self.missing[i]]) for i in first],
                    np.asarray(inverse, dtype=np.int64).reshape(-1))
        # one integer key per row: its missing judges' bits
        keys = np.zeros(n, dtype=np.int64)
        for k in range(width):
            col = self.missing[:, k]
            if col.any():
                keys |= col.astype(np.int64) << np.int64(k)
        if width <= 20:          # a table over every possible key: no sort
            present = np.flatnonzero(np.bincount(keys, minlength=1 << width))
            where = np.zeros(1 << width, dtype=np.int64)
            where[present] = np.arange(len(present))
            distinct, inverse = present, where[keys]
        else:
            distinct, inverse = np.unique(keys, return_inverse=True)
            inverse = np.asarray(inverse, dtype=np.int64).reshape(-1)
        # a key's bits are the judges missing on its rows, in judge order
        return ([";".join(names[[(int(key) >> k) & 1 == 1 for k in range(width)]]) for key in distinct],
                inverse)


def pattern_keys(codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """One sortable key per row of ``codes`` that is equal exactly when the rows are: a
    mixed-radix id where a never-seen output (-1) is one more digit value, or the row's
    bytes when that id would overflow int64 (astronomically large joint tables).

    The id is ``prefix_patterns(where(codes < 0, sizes, codes), sizes + 1)[-1]``, computed
    for the whole row only (not for every prefix)."""
    codes = np.asarray(codes, dtype=np.int64)
    sizes = np.asarray(sizes, dtype=np.int64)
    if codes.shape[1] == 0:
        return np.zeros(len(codes), dtype=np.int64)
    radix = 1
    for a in (sizes + 1).tolist():
        if radix > INT64_SAFE // max(a, 1):      # prefix_patterns gives no id: the row's bytes
            flat = np.ascontiguousarray(codes)
            return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).reshape(-1)
        radix *= a
    ids = np.zeros(len(codes), dtype=np.int64)
    for k, a in enumerate((sizes + 1).tolist()):
        c = codes[:, k]
        ids *= a
        ids += np.where(c < 0, sizes[k], c)
    return ids


def calibration_keys(support: dict, sizes: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The calibration patterns' keys (:func:`pattern_keys`), sorted, with their counts N_z."""
    pats = np.asarray(support["patterns"]["codes"], dtype=np.int64).reshape(-1, len(sizes))
    keys = pattern_keys(pats, sizes)
    order = np.argsort(keys, kind="stable")
    return keys[order], np.asarray(support["patterns"]["counts"], dtype=np.int64)[order]


def pattern_lookup(support: dict, codes: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """N_z of every row of ``codes`` (0 for a pattern calibration never saw, and for a row
    holding an output the encoders never saw)."""
    out = np.zeros(len(codes), dtype=np.int64)
    cal_keys, cal_counts = calibration_keys(support, sizes)
    if not len(cal_keys) or not len(codes):
        return out
    keys = pattern_keys(codes, sizes)
    pos = np.minimum(np.searchsorted(cal_keys, keys), len(cal_keys) - 1)
    hit = (cal_keys[pos] == keys) & (codes >= 0).all(axis=1)
    out[hit] = cal_counts[pos[hit]]
    return out


def row_support(support: dict, encoders: list[JudgeEncoder], panel: Panel, *,
                table_like: bool, encoded=None) -> RowSupport:
    """Per-row support of ``panel`` against a predictor's ``support`` section (``encoded``:
    the panel already encoded with ``encoders``)."""
    encoded = apply_encoders(panel, encoders) if encoded is None else encoded
    codes = encoded.codes
    cols = {c.name: c for c in panel.judges}
    n = panel.n_rows
    in_range = (codes >= 0).all(axis=1) if len(encoders) else np.ones(n, dtype=bool)
    missing = np.zeros((n, len(encoders)), dtype=bool)
    parse_error = np.zeros((n, len(encoders)), dtype=bool)
    for k, (enc, info) in enumerate(zip(encoders, support["judges"])):
        col = cols[enc.name]
        if col.schema == "continuous":
            missing[:, k] = np.isnan(col.values)
            lo, hi = info.get("range") or (None, None)
            if lo is not None:
                vals = col.values
                inside = np.isnan(vals) | ((vals >= lo) & (vals <= hi))
                in_range &= inside
        else:
            vocab = np.asarray(col.vocab, dtype=object)
            is_missing = np.array([t == MISSING for t in col.vocab], dtype=bool)
            is_error = np.array([str(t).strip().lower() in ERROR_TOKENS for t in vocab], dtype=bool)
            if len(vocab):
                missing[:, k] = is_missing[col.codes]
                parse_error[:, k] = is_error[col.codes]
    N_z = pattern_lookup(support, codes, encoded.alphabet_sizes)
    return RowSupport(codes=codes, N_z=N_z, in_range=in_range,
                      in_support=((N_z > 0) & in_range) if table_like else in_range.copy(),
                      missing=missing, parse_error=parse_error, judges=[e.name for e in encoders])


def prediction_rows(panel: Panel, predictions: np.ndarray, support: RowSupport | None):
    """(header, rows) of a predictions file: ``item_id,prediction`` and, with a support
    section, ``N_z`` (calibration count of the row's joint pattern), ``in_support`` (1/0)
    and ``missing_judges`` (';'-joined judges without an output)."""
    if support is None:
        return ["item_id", "prediction"], ([item, f"{p:.6f}"] for item, p in zip(panel.item_ids, predictions))
    return (["item_id", "prediction", "N_z", "in_support", "missing_judges"],
            ([item, f"{p:.6f}", int(n), int(ok), miss] for item, p, n, ok, miss in
             zip(panel.item_ids, predictions, support.N_z, support.in_support, support.missing_names())))


#: characters that make a CSV field need quoting
_CSV_SPECIAL = (",", '"', "\r", "\n")


def _formula_probe():
    """A pattern finding a field (in a NUL-joined string of fields) that starts like a
    spreadsheet formula (fcps_core.files.csv_writer.FORMULA_STARTS)."""
    import re
    from ..files.csv_writer import FORMULA_STARTS
    return re.compile("(?:^|\x00)[" + re.escape("".join(sorted(FORMULA_STARTS))) + "]")


def predictions_csv(panel: Panel, predictions: np.ndarray, support: RowSupport | None) -> str:
    """The predictions file as CSV text: the one CSV writer's text
    (:func:`fcps_core.files.csv_writer.csv_text`: item ids and judge names neutralised against
    spreadsheet formulas, CRLF line ends, quotes only where needed) for
    :func:`prediction_rows`; built with one string join when no field needs quoting or
    neutralising (a million rows in well under a second)."""
    ids = [str(i) for i in panel.item_ids]
    missing = support.missing_names() if support is not None else []
    probe = "\x00".join(ids) + "\x00" + "\x00".join(set(missing))
    if any(c in probe for c in _CSV_SPECIAL) or _formula_probe().search(probe):
        from ..files.csv_writer import csv_text
        header, rows = prediction_rows(panel, predictions, support)
        return csv_text(header, rows)
    preds = np.asarray(predictions, dtype=float).tolist()
    if support is None:
        body = "\r\n".join(f"{i},{p:.6f}" for i, p in zip(ids, preds))
    else:
        body = "\r\n".join(f"{i},{p:.6f},{z},{o},{m}" for i, p, z, o, m in
                            zip(ids, preds, support.N_z.tolist(), support.in_support.astype(int).tolist(), missing))
    header = ["item_id", "prediction"] + ([] if support is None else ["N_z", "in_support", "missing_judges"])
    return ",".join(header) + "\r\n" + body + ("\r\n" if ids else "")
