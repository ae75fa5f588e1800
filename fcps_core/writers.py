"""Writers: a panel as wide rows (exports) and as a wide CSV file (synthetic panels)."""

from __future__ import annotations

import csv

import numpy as np

from .panel import Panel


def panel_to_wide_rows(panel: Panel) -> tuple[list[str], list[list[str]]]:
    """Header and rows of a wide CSV for ``panel`` (labels in [0,1], outputs as recorded)."""
    header = ["item_id", "group_id", "label"] + (["block"] if panel.blocks is not None else []) \
        + panel.judge_names
    outs = [j.raw_outputs() for j in panel.judges]
    rows = []
    for i in range(panel.n_rows):
        y = panel.labels[i]
        row = [panel.item_ids[i], panel.group_ids[i], "" if np.isnan(y) else repr(float(y))]
        if panel.blocks is not None:
            row.append(panel.blocks[i])
        row += ["" if o[i] == "<missing>" else o[i] for o in outs]
        rows.append(row)
    return header, rows


def write_wide_csv(panel: Panel, path: str, *, force: bool = False) -> None:
    """The panel as a wide CSV (atomically; an existing file only with ``force``)."""
    from .outputs import atomic_output
    header, rows = panel_to_wide_rows(panel)
    with atomic_output(path, force=force, newline="") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
