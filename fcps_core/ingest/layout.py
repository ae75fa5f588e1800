"""Long files: layout detection and the vectorised pivot to wide columns."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from ..errors import PanelError
from ..data.panel import columns_listed, is_missing
from .build import factorize_values, strip_values


# -- long layout -----------------------------------------------------------------------------

#: the judge and output columns of a long file unless the user names others
DEFAULT_JUDGE_COLUMN, DEFAULT_OUTPUT_COLUMN = "judge", "output"


def detect_layout(columns, *, judge_column: str = DEFAULT_JUDGE_COLUMN,
                  output_column: str = DEFAULT_OUTPUT_COLUMN) -> str:
    """``long`` when the file has judge and output columns, else ``wide`` (``columns``: the
    column names, or a mapping keyed by them). A judge or output column the user named
    (another name than the default) asks for the long layout, so its absence is an error
    naming the columns there are, not a wide read in which the judge-name column and the
    output column would each become a judge."""
    if judge_column in columns and output_column in columns:
        return "long"
    for name, default, option in ((judge_column, DEFAULT_JUDGE_COLUMN, "--judge-column"),
                                  (output_column, DEFAULT_OUTPUT_COLUMN, "--output-column")):
        if name != default and name not in columns:
            raise PanelError(f"no {name!r} column for {option} (a long-format file's); {columns_listed(columns)}",
                             hint=f"name an existing column with {option}, or leave it out for a wide file")
    return "wide"



def reserved_roles(item_column: str, group_column: str, label_column: str, block_column: str) -> dict:
    """Column name -> the role it plays; a judge may never carry one of these names."""
    return {block_column: "block", group_column: "group", label_column: "label", item_column: "item id"}


def reserved_name_error(judge: str, role: str, judge_column: str) -> PanelError:
    flag = {"item id": "--item-column", "group": "--group-column", "label": "--label-column",
            "block": "--block-column"}[role]
    return PanelError(f"judge name {judge!r} is also the name of the {role} column: its outputs would be "
                      f"read as the {role}s", column=judge_column,
                      hint=f"rename that judge, or name the {role} column differently with {flag}")


def long_to_wide(columns: Mapping[str, Sequence[str]], *, item_column: str = "item_id",
                 judge_column: str = "judge", output_column: str = "output",
                 group_column: str = "group_id", label_column: str = "label",
                 block_column: str = "block", first_line: int = 2,
                 max_judges: int | None = None) -> dict[str, np.ndarray]:
    """Vectorised reference ``long_to_wide`` (same result, same first error)."""
    for needed, option in ((item_column, "--item-column"), (judge_column, "--judge-column"),
                           (output_column, "--output-column")):
        if needed not in columns:
            raise PanelError(f"long-format file has no {needed!r} column; {columns_listed(columns)}",
                             hint=f"name it with {option}")
    items = strip_values(np.asarray(columns[item_column], dtype=object))
    judges = strip_values(np.asarray(columns[judge_column], dtype=object))
    outputs = np.asarray(columns[output_column], dtype=object)
    n = len(items)
    # The first row that breaks any rule wins, as in the row-by-row reader.
    errors: list[tuple[int, PanelError]] = []
    blank = np.flatnonzero(items == "")
    if blank.size:
        errors.append((int(blank[0]), PanelError("empty item id", line=first_line + int(blank[0]),
                                                 column=item_column)))
    blank = np.flatnonzero(judges == "")
    if blank.size:
        errors.append((int(blank[0]), PanelError("empty judge name", line=first_line + int(blank[0]),
                                                 column=judge_column)))
    item_codes, item_list, _ = factorize_values(items)
    judge_codes, judge_list, _ = factorize_values(judges)
    if max_judges is not None and len(judge_list) > max_judges:
        raise PanelError(f"the file has {len(judge_list):,} distinct judges, above the limit of "
                         f"{max_judges:,}", column=judge_column,
                         hint="filter the judges you need, or raise the limit with --max-judges")
    key = item_codes.astype(np.int64) * len(judge_list) + judge_codes
    stripped_out = strip_values(outputs)
    order = np.lexsort((np.arange(n), key))
    same = key[order][1:] == key[order][:-1]
    differ = same & (stripped_out[order][1:] != stripped_out[order][:-1])
    if differ.any():
        r = int(order[1:][differ].min())
        errors.append((r, PanelError(f"judge {judges[r]!r} has two different outputs for item "
                                     f"{items[r]!r}", line=first_line + r, column=output_column)))
    per_item_cols = [c for c in (group_column, label_column, block_column) if c in columns]
    wide_per_item: dict[str, np.ndarray] = {}
    for c in per_item_cols:
        vals = strip_values(np.asarray(columns[c], dtype=object))
        present = np.array([not (v == "" or is_missing(v)) for v in vals], dtype=bool) if n else \
            np.zeros(0, dtype=bool)
        rows = np.flatnonzero(present)
        first_row = np.full(len(item_list), -1, dtype=np.int64)
        # first present row per item (rows are ascending, so reverse assignment keeps the first)
        first_row[item_codes[rows][::-1]] = rows[::-1]
        ref = first_row[item_codes[rows]]
        bad = rows[vals[rows] != vals[ref]]
        if bad.size:
            r = int(bad[0])
            p = int(first_row[item_codes[r]])
            errors.append((r, PanelError(f"item {items[r]!r} has {c} {vals[p]!r} on line "
                                         f"{first_line + p} and {vals[r]!r} here",
                                         line=first_line + r, column=c,
                                         hint="an item's per-item columns must agree")))
        out = np.full(len(item_list), "", dtype=object)
        has = first_row >= 0
        out[has] = vals[first_row[has]]
        wide_per_item[c] = out
    if errors:
        raise min(errors, key=lambda e: e[0])[1]
    wide: dict[str, np.ndarray] = {item_column: item_list}
    wide.update(wide_per_item)
    # the last recorded output of a repeated (item, judge) pair, as the row-by-row reader keeps
    last = np.full(len(item_list) * len(judge_list), -1, dtype=np.int64)
    np.maximum.at(last, key, np.arange(n, dtype=np.int64))
    roles = reserved_roles(item_column, group_column, label_column, block_column)
    for k, j in enumerate(judge_list):
        if j in roles:
            raise reserved_name_error(j, roles[j], judge_column)
        rows = last[np.arange(len(item_list)) * len(judge_list) + k]
        col = np.full(len(item_list), "", dtype=object)
        col[rows >= 0] = outputs[rows[rows >= 0]]
        wide[j] = col
    return wide
