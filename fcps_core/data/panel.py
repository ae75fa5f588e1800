"""The Panel: items x judges outputs, labels, groups, optional user blocks.

A panel is built from string columns (what a CSV holds). Each judge column is classified
into an output *schema* (design.md, "Panel files users upload"):

``pairwise``     verdicts A / B / tie / parse_error (case kept: each recorded output is its
                 own table cell value, paper appendix "Prompt and parsing details"), and
                 ordered (graded) verdicts A>>B / A>B / A=B / B>A / B>>A (JudgeBench style;
                 also A<B, A<<B ...): an ordinal pairwise judge whose scalar encoding is
                 the graded share of A (:data:`PAIRWISE_GRADED`, shown by the Upload page).
``binary``       correct/incorrect, safe/unsafe, yes/no, true/false, pass/fail, 0/1, with an
                 optional neutral value (uncertain, unknown, ...).
``rubric``       integer scores with at most ``MAX_RUBRIC_LEVELS`` distinct values (1-5, ...).
``continuous``   any other numeric score (metrics, reward-model scores); binned into
                 quantile bins fitted on the calibration block for table families.
``categorical``  anything else; each output is a cell value, the scalar encoding is a
                 smoothed per-output label mean fitted on the calibration block.

A missing output (empty, NA, NaN, null, None) is a distinct table cell value ``<missing>``.
Labels are mapped to [0, 1]: numbers in [0, 1] as they are; A -> 1, B -> 0 (tie -> 1/2);
binary verdict words; integer rubric labels normalised (y - lo) / (hi - lo) with a declared
or inferred range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Sequence

import numpy as np

from ..errors import PanelError

SCHEMAS = ("pairwise", "binary", "rubric", "continuous", "categorical")
MISSING = "<missing>"
MISSING_TOKENS = frozenset({"", "na", "n/a", "nan", "null", "none"})
PAIRWISE_POSITIVE = frozenset({"a"})
PAIRWISE_NEGATIVE = frozenset({"b"})
NEUTRAL_TOKENS = frozenset({"tie", "draw", "parse_error", "parse-error", "error", "invalid",
                            "uncertain", "unknown", "unsure", "neutral"})
TIE_TOKENS = frozenset({"tie", "draw"})
#: ordered pairwise verdicts (lower case, spaces removed) -> how strongly they favour A:
#: the scalar encoding of an ordinal pairwise judge (A >> B is A clearly better)
PAIRWISE_GRADED = {"a>>b": 1.0, "a>b": 0.75, "a=b": 0.5, "a==b": 0.5, "b>a": 0.25, "b>>a": 0.0,
                   "b<<a": 1.0, "b<a": 0.75, "a<b": 0.25, "a<<b": 0.0}
ERROR_TOKENS = frozenset({"parse_error", "parse-error", "error", "invalid"})
BINARY_POSITIVE = frozenset({"correct", "safe", "yes", "true", "pass", "positive", "good",
                             "1", "1.0", "refusal", "valid"})
BINARY_NEGATIVE = frozenset({"incorrect", "unsafe", "no", "false", "fail", "negative", "bad",
                             "0", "0.0", "wrong", "harmful"})
MAX_RUBRIC_LEVELS = 21
INFERRED_LABEL_NOTE = "integer rubric labels normalised from the observed range"
BLOCK_NAMES = {"s": "S", "selection": "S", "select": "S",
               "m": "M", "calibration": "M", "cal": "M", "calibrate": "M",
               "v": "V", "validation": "V", "val": "V",
               "t": "T", "test": "T"}


def is_missing(token: str) -> bool:
    return token.strip().lower() in MISSING_TOKENS


def columns_listed(names) -> str:
    """"columns are 'a', 'b', ..." for an error naming a file's columns (the first 8)."""
    names = list(names)
    return "columns are " + ", ".join(repr(c) for c in names[:8]) + (" ..." if len(names) > 8 else "")


def parse_float(token: str) -> float | None:
    try:
        return float(token)
    except ValueError:
        return None


@dataclass
class JudgeColumn:
    """One judge's outputs.

    ``codes`` index ``vocab`` for discrete schemas (``<missing>`` is a vocab entry when any
    output is missing). ``values`` holds the numeric output (NaN when missing) for numeric
    schemas. Continuous judges have no fixed vocab: they are binned per calibration block.
    """

    name: str
    schema: str
    codes: np.ndarray | None
    vocab: list[str]
    values: np.ndarray | None
    scalar_map: dict[str, float] = field(default_factory=dict)
    value_range: tuple[float, float] | None = None
    range_declared: bool = False    # rubric: value_range came from the user, not the data

    @property
    def has_missing(self) -> bool:
        if self.schema == "continuous":
            return bool(np.isnan(self.values).any())
        return MISSING in self.vocab

    def raw_outputs(self) -> np.ndarray:
        """Outputs as strings (``<missing>`` for missing), for display and export."""
        if self.schema == "continuous":
            return np.array([MISSING if math.isnan(v) else repr(float(v)) for v in self.values],
                            dtype=object)
        return np.asarray(self.vocab, dtype=object)[self.codes]


def finite_numbers(tokens: Sequence[str]) -> np.ndarray | None:
    """``float(t)`` of every token when every token is a string holding a finite number
    (None otherwise: a missing, non-numeric or infinite output, or a value that is not a
    string), in one C-level pass.

    The fast path of the numeric columns (metric scores, rubric and 0/1 outputs): such a
    column has no missing output (no missing token parses as a finite number), is not
    pairwise, and its values are exactly what the token-by-token reading
    (:func:`parse_float` after :func:`is_missing`) gives, since ``float`` ignores the
    surrounding whitespace that :func:`detect_schema` strips. Any other column takes the
    token-by-token path with its located errors."""
    tokens = np.asarray(tokens, dtype=object)
    if not len(tokens) or set(map(type, tokens.tolist())) != {str}:
        return None
    try:
        values = np.fromiter(map(float, tokens.tolist()), dtype=float, count=len(tokens))
    except ValueError:
        return None
    return values if np.isfinite(values).all() else None


def numeric_schema(values: np.ndarray) -> str:
    """:func:`detect_schema` of a column whose every output is the finite number in
    ``values`` (:func:`finite_numbers`): binary (only 0 and 1), rubric (integers, at most
    ``MAX_RUBRIC_LEVELS`` distinct), else continuous."""
    distinct = np.unique(values)
    if np.all((distinct == 0.0) | (distinct == 1.0)):
        return "binary"
    if np.all(distinct == np.floor(distinct)) and len(distinct) <= MAX_RUBRIC_LEVELS:
        return "rubric"
    return "continuous"


def detect_schema(tokens: Sequence[str]) -> str:
    """Classify a judge column from its distinct non-missing outputs (see module doc)."""
    distinct = {t.strip() for t in tokens if not is_missing(t)}
    if not distinct:
        return "categorical"
    lowered = {t.lower() for t in distinct}
    graded = {_graded_key(t) for t in lowered} & PAIRWISE_GRADED.keys()
    if (lowered & (PAIRWISE_POSITIVE | PAIRWISE_NEGATIVE) or graded) and all(
            t in PAIRWISE_POSITIVE | PAIRWISE_NEGATIVE | TIE_TOKENS | ERROR_TOKENS
            or _graded_key(t) in PAIRWISE_GRADED for t in lowered):
        return "pairwise"
    numbers = [parse_float(t) for t in distinct]
    if all(v is not None and math.isfinite(v) for v in numbers):
        if set(numbers) <= {0.0, 1.0}:
            return "binary"
        if all(float(v).is_integer() for v in numbers) and len(set(numbers)) <= MAX_RUBRIC_LEVELS:
            return "rubric"
        return "continuous"
    if lowered & (BINARY_POSITIVE | BINARY_NEGATIVE) and lowered <= (
            BINARY_POSITIVE | BINARY_NEGATIVE | NEUTRAL_TOKENS):
        return "binary"
    return "categorical"


def _graded_key(token: str) -> str:
    """An ordered pairwise verdict as :data:`PAIRWISE_GRADED` spells it ("A >> B" -> "a>>b")."""
    return "".join(str(token).lower().split())


def pairwise_mapping(judge: "JudgeColumn") -> list[tuple[str, float]]:
    """A pairwise judge's outputs and the value each is read as (A 1, B 0, tie 1/2; graded
    verdicts by :data:`PAIRWISE_GRADED`), ordered from most A to most B, for display."""
    if judge.schema != "pairwise":
        return []
    return sorted(((t, judge.scalar_map.get(t, 0.5)) for t in judge.vocab if t != MISSING),
                  key=lambda tv: (-tv[1], tv[0]))


def _discrete_column(name: str, schema: str, raw: np.ndarray, first_line: int,
                     value_range: tuple[float, float] | None) -> JudgeColumn:
    stripped = np.char.strip(raw.astype(str))
    lowered = np.char.lower(stripped)
    missing = np.isin(lowered, list(MISSING_TOKENS))
    stripped = np.where(missing, MISSING, stripped)
    if schema == "rubric":
        # Rubric outputs are numbers: "4" and "4.0" are the same score.
        values = np.full(len(raw), np.nan)
        for i in np.flatnonzero(~missing):
            v = parse_float(stripped[i])
            if v is None or not math.isfinite(v):
                raise PanelError(f"rubric judge output {str(stripped[i])!r} is not a number",
                                 line=first_line + int(i), column=name,
                                 hint="fix the value or override the schema")
            values[i] = v
        stripped = np.where(missing, MISSING,
                            np.array([_format_number(v) for v in values], dtype=object))
        distinct = sorted({s for s in stripped if s != MISSING}, key=float)
    else:
        distinct = sorted({s for s in stripped if s != MISSING})
        values = None
    vocab = distinct + ([MISSING] if missing.any() else [])
    declared = False
    lookup = {tok: i for i, tok in enumerate(vocab)}
    codes = np.fromiter((lookup[s] for s in stripped), dtype=np.int64, count=len(stripped))
    scalar_map: dict[str, float] = {}
    if schema == "pairwise":
        for tok in vocab:
            low = tok.lower()
            scalar_map[tok] = 1.0 if low in PAIRWISE_POSITIVE else 0.0 if low in PAIRWISE_NEGATIVE else \
                PAIRWISE_GRADED.get(_graded_key(low), 0.5)
    elif schema == "binary":
        for tok in vocab:
            low = tok.lower()
            num = parse_float(tok)
            if low in BINARY_POSITIVE or num == 1.0:
                scalar_map[tok] = 1.0
            elif low in BINARY_NEGATIVE or num == 0.0:
                scalar_map[tok] = 0.0
            else:
                scalar_map[tok] = 0.5
    elif schema == "rubric":
        declared = value_range is not None
        observed = values[~np.isnan(values)]
        lo, hi = value_range if value_range else (
            (float(observed.min()), float(observed.max())) if observed.size else (0.0, 1.0))
        value_range = (lo, hi)
        for tok in vocab:
            if tok == MISSING or hi == lo:
                scalar_map[tok] = 0.5
            else:
                scalar_map[tok] = float(np.clip((float(tok) - lo) / (hi - lo), 0.0, 1.0))
    return JudgeColumn(name=name, schema=schema, codes=codes, vocab=vocab, values=values,
                       scalar_map=scalar_map, value_range=value_range, range_declared=declared)


def _format_number(v: float) -> str:
    if math.isnan(v):
        return MISSING
    return str(int(v)) if float(v).is_integer() else repr(float(v))


def _continuous_column(name: str, raw: np.ndarray, first_line: int) -> JudgeColumn:
    values = np.full(len(raw), np.nan)
    for i, tok in enumerate(raw):
        if is_missing(tok):
            continue
        v = parse_float(tok)
        if v is None or not math.isfinite(v):
            raise PanelError(f"continuous judge output {tok!r} is not a finite number",
                             line=first_line + i, column=name,
                             hint="fix the value, leave it empty for a missing output, or override the schema")
        values[i] = v
    return JudgeColumn(name=name, schema="continuous", codes=None, vocab=[], values=values)


def build_judge_column(name: str, raw: Sequence[str], *, schema: str | None = None,
                       first_line: int = 2,
                       value_range: tuple[float, float] | None = None) -> JudgeColumn:
    """Classify (or take ``schema``) and encode one judge column of strings."""
    raw = np.asarray(raw, dtype=object)
    numbers = finite_numbers(raw) if schema in (None, "continuous") else None
    if numbers is not None:
        # every output a finite number: no missing output, the schema from the values
        schema = schema or numeric_schema(numbers)
        if schema == "continuous":
            return JudgeColumn(name=name, schema="continuous", codes=None, vocab=[], values=numbers)
    if numbers is None and all(is_missing(t) for t in raw):
        raise PanelError("judge column is empty in every row", column=name,
                         hint="drop the column or leave it out of --judges")
    schema = schema or detect_schema(np.unique(raw.astype(str)))
    if schema not in SCHEMAS:
        raise PanelError(f"unknown schema {schema!r}; use one of {', '.join(SCHEMAS)}", column=name)
    if schema == "continuous":
        return _continuous_column(name, raw, first_line)
    return _discrete_column(name, schema, raw, first_line, value_range)


@dataclass
class Panel:
    """Judge outputs for ``n`` items, with labels (NaN = unlabelled), groups and blocks."""

    item_ids: np.ndarray
    group_ids: np.ndarray
    labels: np.ndarray
    judges: list[JudgeColumn]
    blocks: np.ndarray | None = None
    name: str = "panel"
    label_note: str = ""

    def __post_init__(self) -> None:
        n = len(self.item_ids)
        for arr, what in ((self.group_ids, "group_ids"), (self.labels, "labels")):
            if len(arr) != n:
                raise PanelError(f"{what} has {len(arr)} entries for {n} items")
        if not self.judges:
            raise PanelError("the panel has no judge columns",
                             hint="name the judge columns with --judges")
        names = [j.name for j in self.judges]
        if len(set(names)) != len(names):
            dup = next(x for x in names if names.count(x) > 1)
            raise PanelError(f"judge {dup!r} appears twice")

    # -- basic facts -------------------------------------------------------------------
    @property
    def n_rows(self) -> int:
        return len(self.item_ids)

    @property
    def judge_names(self) -> list[str]:
        return [j.name for j in self.judges]

    @property
    def label_range_inferred(self) -> bool:
        """Integer rubric labels were normalised by their observed range (not a declared one)."""
        return self.label_note.startswith(INFERRED_LABEL_NOTE)

    @property
    def labelled(self) -> np.ndarray:
        return ~np.isnan(self.labels)

    @property
    def n_labelled(self) -> int:
        return int(self.labelled.sum())

    @property
    def schema(self) -> str:
        """The panel's schema: the judges' common schema, or ``mixed (a, b)``."""
        kinds = sorted({j.schema for j in self.judges})
        if len(kinds) == 1:
            return kinds[0]
        counts = {k: sum(j.schema == k for j in self.judges) for k in kinds}
        major = max(kinds, key=lambda k: counts[k])
        return f"{major} (mixed: " + ", ".join(f"{counts[k]} {k}" for k in kinds) + ")"

    def judge(self, name: str) -> JudgeColumn:
        for j in self.judges:
            if j.name == name:
                return j
        raise PanelError(f"no judge named {name!r}; judges are {', '.join(self.judge_names[:10])}"
                         + (" ..." if len(self.judges) > 10 else ""))

    def subset_judges(self, names: Sequence[str]) -> "Panel":
        return Panel(item_ids=self.item_ids, group_ids=self.group_ids, labels=self.labels,
                     judges=[self.judge(n) for n in names], blocks=self.blocks,
                     name=self.name, label_note=self.label_note)

    def with_labels(self, labels: np.ndarray) -> "Panel":
        return Panel(item_ids=self.item_ids, group_ids=self.group_ids,
                     labels=np.asarray(labels, dtype=float), judges=self.judges,
                     blocks=self.blocks, name=self.name, label_note=self.label_note)

    def take(self, rows: np.ndarray) -> "Panel":
        """A panel restricted to (or reordered by) ``rows``."""
        rows = np.asarray(rows)
        judges = [JudgeColumn(name=j.name, schema=j.schema,
                              codes=None if j.codes is None else j.codes[rows], vocab=j.vocab,
                              values=None if j.values is None else j.values[rows],
                              scalar_map=j.scalar_map, value_range=j.value_range,
                              range_declared=j.range_declared)
                  for j in self.judges]
        return Panel(item_ids=self.item_ids[rows], group_ids=self.group_ids[rows],
                     labels=self.labels[rows], judges=judges,
                     blocks=None if self.blocks is None else self.blocks[rows],
                     name=self.name, label_note=self.label_note)

    def collapse_neutral(self) -> "Panel":
        """Merge tie and parse_error (and other neutral outputs) into one ``neutral`` cell
        value on pairwise/binary judges (paper Table tab:tie-parse-fairness)."""
        judges = []
        for j in self.judges:
            if j.schema not in ("pairwise", "binary"):
                judges.append(j)
                continue
            merged = ["neutral" if t.lower() in NEUTRAL_TOKENS else t for t in j.vocab]
            vocab = sorted(set(merged), key=merged.index)
            remap = np.array([vocab.index(t) for t in merged], dtype=np.int64)
            scalar_map = {t: (0.5 if t == "neutral" else j.scalar_map[t]) for t in vocab}
            judges.append(JudgeColumn(name=j.name, schema=j.schema, codes=remap[j.codes],
                                      vocab=vocab, values=None, scalar_map=scalar_map))
        return Panel(item_ids=self.item_ids, group_ids=self.group_ids, labels=self.labels,
                     judges=judges, blocks=self.blocks, name=self.name, label_note=self.label_note)


def check_distinct_roles(*, item_column: str, group_column: str, label_column: str,
                         block_column: str | None) -> None:
    """Each role (item id, group, label, block) needs its own column: one column mapped to
    two roles would silently read one meaning as the other."""
    seen: dict[str, str] = {}
    flags = {"item id": "--item-column", "group": "--group-column", "label": "--label-column",
             "block": "--block-column"}
    for role, col in (("item id", item_column), ("group", group_column), ("label", label_column),
                      ("block", block_column)):
        if col is None:
            continue
        if col in seen:
            raise PanelError(f"column {col!r} is mapped to both the {seen[col]} and the {role} role",
                             hint=f"map each role to its own column ({flags[seen[col]]}, {flags[role]})")
        seen[col] = role


def resolve_judge_names(names: Sequence[str], judges: Sequence[str] | None, reserved: set) -> list[str]:
    """The judge columns: ``judges`` if given (each must exist and not be a reserved
    item/group/label/block column), else every non-reserved column."""
    if judges is None:
        judge_names = [c for c in names if c not in reserved]
    else:
        judge_names = list(judges)
        for j in judge_names:
            if j not in names:
                raise PanelError(f"judge column {j!r} is not in the file; {columns_listed(names)}")
            if j in reserved:
                raise PanelError(f"column {j!r} is the item/group/label/block column and cannot be a judge")
    if not judge_names:
        raise PanelError("the panel has no judge columns",
                         hint="every column other than item/group/label/block is a judge")
    return judge_names


def check_duplicate_items(item_ids: np.ndarray, labels: np.ndarray, first_line: int,
                           column: str, group_ids: np.ndarray | None = None) -> None:
    """Repeated item ids must agree: one label, and one group (an item in two groups would
    cross the grouped blocks)."""
    order = np.argsort(item_ids, kind="stable")
    sorted_ids = item_ids[order]
    same = np.flatnonzero(sorted_ids[1:] == sorted_ids[:-1])
    for k in same:
        a, b = int(order[k]), int(order[k + 1])
        la, lb = labels[a], labels[b]
        if not (np.isnan(la) and np.isnan(lb)) and not (la == lb):
            raise PanelError(
                f"item id {item_ids[a]!r} appears on lines {first_line + a} and {first_line + b} "
                f"with different labels ({_fmt(la)} vs {_fmt(lb)})", column=column,
                hint="give each item one label or distinct ids")
        if group_ids is not None and group_ids[a] != group_ids[b]:
            raise PanelError(
                f"item id {item_ids[a]!r} appears on lines {first_line + a} and {first_line + b} "
                f"in groups {group_ids[a]!r} and {group_ids[b]!r}", column=column,
                hint="an item's rows must share one group; give each item one group or distinct ids")


def _fmt(v: float) -> str:
    return "unlabelled" if np.isnan(v) else f"{v:g}"


def parse_blocks(raw: Sequence[str], labels: np.ndarray, first_line: int, column: str) -> np.ndarray:
    out = np.empty(len(raw), dtype=object)
    for i, tok in enumerate(raw):
        t = str(tok).strip().lower()
        if t in MISSING_TOKENS:
            out[i] = ""
            continue
        if t not in BLOCK_NAMES:
            raise PanelError(f"block {tok!r} is not one of S, M, V, T", line=first_line + i,
                             column=column, hint="leave it empty to keep the row out of every block")
        out[i] = BLOCK_NAMES[t]
        if np.isnan(labels[i]):
            raise PanelError(f"row is in block {out[i]} but has no label", line=first_line + i,
                             column=column, hint="label it or leave its block empty")
    return out


def check_header(header: list[str]) -> list[str]:
    """Stripped column names; an empty header, an unnamed or a duplicated column is an error."""
    header = [h.strip() for h in header]
    if not any(header):
        raise PanelError("the header row is empty", line=1)
    seen: dict[str, int] = {}
    for i, h in enumerate(header):
        if h == "":
            raise PanelError(f"column {i + 1} has an empty name", line=1,
                             hint="name every column in the header")
        if h in seen:
            raise PanelError(f"duplicated column name {h!r} (columns {seen[h] + 1} and {i + 1})",
                             line=1, hint="rename one of them")
        seen[h] = i
    return header
