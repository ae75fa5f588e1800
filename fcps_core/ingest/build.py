"""The distinct-value fast path from string columns to a Panel (same panel and errors as the reference row-by-row construction)."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

import numpy as np

from ..errors import PanelError
from ..data.labels import check_label_map, describe_labels, map_labels
from ..data.panel import (check_distinct_roles, columns_listed, MISSING, JudgeColumn, Panel, check_duplicate_items, parse_blocks, build_judge_column, resolve_judge_names, is_missing, parse_float,
                     finite_numbers)
from .files import ImportLimits


# -- distinct-value fast path for Panel construction -------------------------------------------

#: up to this many values of plain strings are factorized without pandas (same codes)
_DICT_FACTORIZE_MAX = 4096


def factorize_values(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(codes, uniques in order of first appearance, row of each unique's first appearance)."""
    raw = np.asarray(raw, dtype=object)
    if len(raw) <= _DICT_FACTORIZE_MAX and all(type(v) is str for v in raw):
        # A few plain strings (the traffic reader's distinct outputs): a dict numbers them
        # in order of first appearance as pandas does (no missing values to group), and
        # scoring never pays pandas' import.
        index: dict[str, int] = {}
        codes = np.fromiter((index.setdefault(v, len(index)) for v in raw), dtype=np.intp, count=len(raw))
        uniques = np.empty(len(index), dtype=object)
        uniques[:] = list(index)
    else:
        import pandas as pd      # here, not at module level: scoring reads traffic without pandas
        codes, uniques = pd.factorize(raw, use_na_sentinel=False)
    first = np.full(len(uniques), len(codes), dtype=np.int64)
    np.minimum.at(first, codes, np.arange(len(codes), dtype=np.int64))
    return codes, np.asarray(uniques, dtype=object), first


def _relocate(exc: PanelError, first: np.ndarray, first_line: int) -> PanelError:
    """An error raised on the distinct values, moved to the first row holding the value."""
    if exc.line is None:
        return exc
    row = int(first[exc.line])
    return PanelError(exc.detail, line=first_line + row, column=exc.column, hint=exc.hint)


def labels_from_strings(raw: Sequence[str], *, column: str = "label", first_line: int = 2,
                        label_range: tuple[float, float] | None = None,
                        label_map: Mapping[str, float | None] | None = None) -> tuple[np.ndarray, str]:
    """:func:`fcps_core.data.labels.map_labels` computed on the distinct values."""
    labels, note, _ = labels_with_report(raw, column=column, first_line=first_line,
                                         label_range=label_range, label_map=label_map)
    return labels, note


def labels_with_report(raw: Sequence[str], *, column: str = "label", first_line: int = 2,
                       label_range: tuple[float, float] | None = None,
                       label_map: Mapping[str, float | None] | None = None) -> tuple[np.ndarray, str, dict]:
    """(labels, note, :func:`fcps_core.data.labels.describe_labels` report), on the distinct values."""
    codes, uniques, first = factorize_values(raw)
    counts = np.bincount(codes, minlength=len(uniques))
    try:
        mapped, note = map_labels(uniques, column=column, first_line=0, label_range=label_range,
                                  counts=counts, label_map=label_map)
    except PanelError as exc:
        raise _relocate(exc, first, first_line) from None
    report = describe_labels(uniques, mapped, counts, note=note, label_range=label_range, label_map=label_map)
    return mapped[codes], note, report


def remap_outputs(col: JudgeColumn, output_map: Mapping[str, float | None] | None) -> JudgeColumn:
    """A pairwise or binary judge whose scalar encoding follows ``output_map`` (word ->
    value in [0, 1], case-insensitive; None entries are ignored): the label word mapping
    applied to judge outputs, so a judge saying ``good`` keeps meaning what the label
    ``good`` means. Other schemas are returned unchanged."""
    words = {k: v for k, v in check_label_map(output_map).items() if not np.isnan(v)}
    if not words or col.schema not in ("pairwise", "binary"):
        return col
    scalar_map = {tok: words.get(tok.lower(), v) for tok, v in col.scalar_map.items()}
    if scalar_map == col.scalar_map:
        return col
    return JudgeColumn(name=col.name, schema=col.schema, codes=col.codes, vocab=col.vocab, values=col.values,
                       scalar_map=scalar_map, value_range=col.value_range, range_declared=col.range_declared)


def _too_many_outputs(name: str, n_distinct: int, max_distinct: int) -> PanelError:
    return PanelError(f"judge has {n_distinct:,} distinct outputs, above the limit of "
                      f"{max_distinct:,} for a non-numeric judge (free text cannot form "
                      "table cells)", column=name,
                      hint="map its outputs to a few verdicts, leave it out with --judges, "
                           "or raise the limit with --max-distinct")


def judge_column(name: str, raw: Sequence[str], *, schema: str | None = None,
                 first_line: int = 2, value_range: tuple[float, float] | None = None,
                 max_distinct: int | None = None) -> JudgeColumn:
    """:func:`fcps_core.data.panel.build_judge_column` computed on the distinct values.

    Vocabulary, schema, scalar map and value range depend only on the set of distinct
    outputs, so encoding the distinct values and broadcasting the codes back is exact.
    """
    codes, uniques, first = factorize_values(raw)
    if max_distinct is not None and schema != "continuous" and len(uniques) > max_distinct \
            and finite_numbers(uniques) is None:     # (numbers are never free text)
        # Free text: refused on the distinct values, before any per-output work (schema
        # detection, vocabularies, scalar maps) is spent on them.
        texts = sum(1 for u in uniques if not is_missing(str(u)) and parse_float(str(u)) is None)
        if texts > max_distinct:
            raise _too_many_outputs(name, texts, max_distinct)
    try:
        col = build_judge_column(name, uniques, schema=schema, first_line=0,
                                 value_range=value_range)
    except PanelError as exc:
        raise _relocate(exc, first, first_line) from None
    if max_distinct is not None and col.schema != "continuous":
        n_distinct = len(col.vocab) - (MISSING in col.vocab)
        if n_distinct > max_distinct:
            raise _too_many_outputs(name, n_distinct, max_distinct)
    return JudgeColumn(name=col.name, schema=col.schema,
                       codes=None if col.codes is None else col.codes[codes], vocab=col.vocab,
                       values=None if col.values is None else col.values[codes],
                       scalar_map=col.scalar_map, value_range=col.value_range,
                       range_declared=col.range_declared)


def name_key(name: str) -> str:
    """A column name without case, spaces or invisible characters (NFKC, casefolded; every
    whitespace and format character such as a zero-width space or a byte-order mark
    removed): ``" LABEL\u200b"`` and ``"label"`` have the same key."""
    import unicodedata
    text = unicodedata.normalize("NFKC", str(name)).casefold()
    return "".join(c for c in text if not (c.isspace() or unicodedata.category(c) in ("Cf", "Zs")))


def same_name(a: str, b: str) -> bool:
    return name_key(a) == name_key(b)


#: what tools append to a duplicated column's name: pandas ``.1``, DuckDB ``_1``, a merge's
#: ``_x``/``_y``, a spreadsheet's ``(2)``, "copy"
_COPY_SUFFIX = re.compile(r"(?:[._]\d+|_[xy]|\(\d+\)|[._]?copy\d*)")


def is_label_lookalike(name: str, label_column: str) -> bool:
    """Whether ``name`` is the label column's name up to case, spaces and invisible
    characters, or that name with a duplicate column's suffix (``label.1``, ``label_1``,
    ``Label (2)``, ``label_y``): most likely a second copy of the labels."""
    key, label = name_key(name), name_key(label_column)
    return key == label or (key.startswith(label) and bool(_COPY_SUFFIX.fullmatch(key[len(label):])))


def label_lookalikes(judge_names: Sequence[str], label_column: str) -> list[str]:
    return [j for j in judge_names if is_label_lookalike(j, label_column)]


def check_label_lookalikes(judge_names: Sequence[str], label_column: str) -> None:
    """Refuse a judge named like the label column (:func:`is_label_lookalike`: ``LABEL`` or
    ``label.1`` beside ``label``): a second copy of the labels read as a judge leaks them into
    the selection, which would then report a perfect judge. Naming the judges (``--judges``)
    takes it as meant."""
    for j in label_lookalikes(judge_names, label_column):
        raise PanelError(f"judge {j!r} is named like the label column {label_column!r} (the same up to "
                         "case, spaces or a duplicate column's suffix): read as a judge, a second copy of the "
                         "labels would leak them into the selection",
                         hint=f"remove or rename {j!r}; if it really is a judge, name the judges with --judges")


def check_judge_lookalikes(judge_names: Sequence[str]) -> None:
    """Refuse two judges whose names are the same up to case, Unicode normalisation (NFC
    ``café`` beside NFD ``café``) or invisible characters (``j\u200b1`` beside ``j1``). A
    reader sees one name twice in every table, and the panel cannot be exported and read
    back: Parquet and JSON Lines column names ignore case (DuckDB renames ``J1`` to ``J1_1``,
    this package's JSON Lines reader refuses the pair), as this reader already refuses such
    columns in those formats. Naming the judges (``--judges``) takes them as meant."""
    seen: dict[str, str] = {}
    for j in judge_names:
        key = name_key(j)
        first = seen.get(key)
        if first is not None:
            how = "by case" if first.casefold() == str(j).casefold() else \
                "by case, spaces, Unicode form or invisible characters"
            a, b = ascii(first), ascii(j)          # escaped: the two names look the same
            raise PanelError(f"the judges {a} and {b} differ only {how}: they would show as one "
                             "name, and Parquet and JSON Lines column names ignore case", column=j,
                             hint="give every judge its own name before importing, or name the judges "
                                  "with --judges to keep both")
        seen[key] = j


#: a column of at least this many rows whose text values are mostly distinct is read as an id
#: or free text, not as a judge (with fewer rows every categorical output may be rare)
ID_LIKE_MIN_ROWS = 20


def _mostly_numbers(values: Sequence[str]) -> bool:
    """Whether most values read as numbers (a decimal comma allowed, inf and nan included): a
    numeric judge left as text by a few bad cells or a decimal mark, which its own checks
    name, not an id."""
    return 2 * sum(parse_float(str(v).strip().replace(",", ".")) is not None for v in values) > len(values)


def check_id_lookalikes(judge_cols: Sequence, has_item_column: bool) -> None:
    """Refuse a judge column of text (schema ``categorical``) most of whose values occur once:
    an item id, a prompt or a response text, not a judge's outputs. A categorical judge is
    read through the label mean of each output, which needs outputs that recur; a column of
    distinct texts read as a judge only adds a candidate that cannot learn (the selection
    would name it among "all N judges"). Naming the judges (``--judges``) takes it as meant."""
    for col in judge_cols:
        if col.schema != "categorical" or col.codes is None:
            continue
        n = len(col.codes)
        if n < ID_LIKE_MIN_ROWS or 2 * len(col.vocab) <= n or _mostly_numbers(col.vocab):
            continue
        every_row = len(col.vocab) >= n
        what = "an item id" if every_row else "an id or free text (a prompt, a response)"
        hint = (f"name it with --item-column {col.name!r}" if every_row and not has_item_column
                else f"drop the column, or name the judges with --judges")
        raise PanelError(f"{len(col.vocab):,} different values in {n:,} rows, as {what} has, "
                         "not a judge's outputs (a judge's text outputs must recur for the selection to learn "
                         "what each says)", column=col.name, hint=hint)


def strip_values(values: np.ndarray) -> np.ndarray:
    """``str(x).strip()`` of every value, computed once per distinct value."""
    codes, uniques, _ = factorize_values(values)
    return np.array([str(u).strip() for u in uniques] + [""], dtype=object)[codes]


def build_panel(columns: Mapping[str, Sequence[str]], *, judges: Sequence[str] | None = None,
                item_column: str = "item_id", group_column: str = "group_id",
                label_column: str = "label", block_column: str | None = "block",
                schema: str | Mapping[str, str] | None = None,
                label_range: tuple[float, float] | None = None,
                judge_range: tuple[float, float] | None = None,
                require_labels: bool = True, name: str = "panel", first_line: int = 2,
                limits: ImportLimits | None = None,
                label_map: Mapping[str, float | None] | None = None,
                output_map: Mapping[str, float | None] | None = None) -> Panel:
    """The panel the reference ``panel_from_columns`` builds from the same string columns (same
    checks in the same order, same errors), computed on distinct values; plus the judge
    count and distinct-output limits when ``limits`` is given.

    ``label_map`` declares label words (:func:`fcps_core.data.labels.map_labels`) and
    ``output_map`` the scalar value of pairwise/binary judge outputs (:func:`remap_outputs`).
    The panel carries ``label_mapping``: how its labels were read
    (:func:`fcps_core.data.labels.describe_labels`; ``kind`` ``none`` without a label column)."""
    check_distinct_roles(item_column=item_column, group_column=group_column, label_column=label_column,
                         block_column=block_column)
    names = list(columns)
    if not names:
        raise PanelError("no columns")
    cols = {k: np.asarray(v, dtype=object) for k, v in columns.items()}
    n = len(cols[names[0]])
    if n == 0:
        raise PanelError("the panel has a header but no data rows")
    if label_column not in cols:
        if require_labels:
            alike = [c for c in names if same_name(c, label_column)]
            raise PanelError(f"no label column {label_column!r}; {columns_listed(names)}",
                             hint=f"name it with --label-column {alike[0]!r}" if len(alike) == 1
                             else "name it with --label-column")
        labels, note = np.full(n, np.nan), ""
        report = {"kind": "none", "words": [], "unlabelled": [], "numbers": None, "rows": n, "labelled": 0,
                  "note": ""}
    else:
        labels, note, report = labels_with_report(cols[label_column], column=label_column,
                                                  first_line=first_line, label_range=label_range,
                                                  label_map=label_map)
    if item_column in cols:
        item_ids = strip_values(cols[item_column])
        blank = np.flatnonzero(item_ids == "")
        if blank.size:
            raise PanelError("empty item id", line=first_line + int(blank[0]), column=item_column)
    else:
        item_ids = np.array([str(i + 1) for i in range(n)], dtype=object)
    if group_column in cols:
        group_ids = strip_values(cols[group_column])
        group_ids = np.where(group_ids == "", item_ids, group_ids)
    else:
        group_ids = item_ids.copy()
    import pandas as pd
    if len(pd.unique(item_ids)) < n:     # the exact (slower) check only when ids repeat
        check_duplicate_items(item_ids, labels, first_line, item_column, group_ids)
    blocks = None
    use_block = block_column if (block_column and block_column in cols) else None
    if use_block:
        blocks = parse_blocks(cols[use_block], labels, first_line, use_block)
    judge_names = resolve_judge_names(names, judges, {item_column, group_column, label_column, use_block})
    if judges is None and label_column in cols:
        check_label_lookalikes(judge_names, label_column)
    if judges is None and require_labels:
        check_judge_lookalikes(judge_names)
    if limits is not None and len(judge_names) > limits.max_judges:
        raise PanelError(f"the panel has {len(judge_names):,} judges, above the limit of "
                         f"{limits.max_judges:,}",
                         hint="keep the judges you need with --judges, or raise the limit with --max-judges")
    judge_cols = []
    for j in judge_names:
        s = schema.get(j) if isinstance(schema, Mapping) else schema
        col = judge_column(j, cols[j], schema=s, first_line=first_line, value_range=judge_range,
                           max_distinct=limits.max_distinct_outputs if limits else None)
        judge_cols.append(remap_outputs(col, output_map))
    if judges is None and require_labels:
        # a panel to select on; traffic to score keeps such columns (its predictor reads its own judges)
        check_id_lookalikes(judge_cols, item_column in cols)
    panel = Panel(item_ids=item_ids, group_ids=group_ids, labels=labels, judges=judge_cols,
                  blocks=blocks, name=name, label_note=note)
    panel.label_mapping = report        # not a field: derived panels (take, subset) drop it
    return panel
