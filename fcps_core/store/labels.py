"""New human labels merged into a stored panel (the Label next page and ``label-next``).

:meth:`LabelStore.merge_labels` writes labels for items of a stored panel by item id, in one
transaction (an error leaves the panel as it was): unknown item ids are refused, a judge
output that differs from the stored one is refused (the file would describe other items),
and a label that would replace a different stored label is refused unless ``overwrite``.
The panel's label count and version are updated with it; runs computed on the old version
keep pointing at it.

The store also remembers, per panel, the items ``label-next`` chose *actively* and that no
audit walk has met since (:meth:`LabelStore.active_items`, a ``meta`` entry keyed by the
panel's name and version): every other labelled row is in the evaluation set E of
:mod:`fcps_core.planning.label_next`, whose held-out risks stay those of a random sample.
"""

from __future__ import annotations

import json
import math

import numpy as np

from ..wording import count_of, noun_for
from ..errors import StoreError

#: meta key of a panel's actively chosen, not yet audited items
ACTIVE_KEY = "label_next_active/"


class LabelStore:
    """Label methods of :class:`~fcps_core.store.Store`."""

    def active_items(self, name: str) -> set[str]:
        """Item ids of ``name`` that label-next chose actively (not evaluation rows); empty
        when none were recorded for the panel's current version."""
        with self.reading() as cur:
            info = self._panel_row(cur, name)
            row = cur.execute("SELECT value FROM meta WHERE key = ?", [ACTIVE_KEY + name]).fetchone()
        if row is None:
            return set()
        state = json.loads(row[0])
        return set(state["items"]) if state.get("version") == info["version"] else set()

    def record_label_request(self, name: str, *, active: list[str], audited: list[str]) -> None:
        """Remember a batch: ``active`` item ids join the actively chosen set, ``audited``
        ones (audit rows, and labelled rows an audit walk met) leave it."""
        current = self.active_items(name)
        items = (current | set(map(str, active))) - set(map(str, audited))
        with self.transaction() as cur:
            info = self._panel_row(cur, name)
            cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)",
                        [ACTIVE_KEY + name, json.dumps({"version": info["version"], "items": sorted(items)})])

    def merge_labels(self, name: str, labels: dict, *, outputs: dict | None = None,
                     overwrite: bool = False) -> dict:
        """Write ``labels`` ({item id: label in [0, 1]}) into stored panel ``name``.

        ``outputs`` ({item id: {judge: output text}}) are checked against the stored
        outputs first. Returns {"new": n, "replaced": n, "unchanged": n, "version": v}."""
        from ..data.panel import is_missing
        from .panels import panel_version
        panel = self.load_panel(name)
        row_of = {str(item): i for i, item in enumerate(panel.item_ids.tolist())}
        unknown = [k for k in labels if str(k) not in row_of]
        if unknown:
            raise StoreError(f"item id {unknown[0]!r} is not in panel {name!r}"
                             + (f" ({len(unknown)} unknown ids)" if len(unknown) > 1 else "")
                             + "; upload only items of this panel (the file label-next wrote)")
        if outputs:
            stored = {j.name: j.raw_outputs() for j in panel.judges}
            for item, outs in outputs.items():
                r = row_of[str(item)]
                for judge, text in outs.items():
                    if judge not in stored:
                        continue
                    old = stored[judge][r]
                    old = "" if old == "<missing>" else str(old)
                    if not _same_output(old, "" if text is None or is_missing(str(text)) else str(text)):
                        raise StoreError(f"item {item!r}, judge {judge!r}: the file says {text!r} but the "
                                         f"stored output is {old!r}; the file does not describe this panel's "
                                         "items (re-download the batch)")
        new_labels = panel.labels.copy()
        counts = {"new": 0, "replaced": 0, "unchanged": 0}
        changed = []
        for item, value in labels.items():
            v = float(value)
            if not (math.isfinite(v) and 0.0 <= v <= 1.0):
                raise StoreError(f"item {item!r}: label {value!r} is not a number from 0 to 1")
            r = row_of[str(item)]
            old = new_labels[r]
            if np.isnan(old):
                counts["new"] += 1
            elif old == v:
                counts["unchanged"] += 1
                continue
            else:
                counts["replaced"] += 1
            changed.append((r, v))
            new_labels[r] = v
        if counts["replaced"] and not overwrite:
            raise StoreError(f"{count_of(counts['replaced'], 'item')} already {'has' if counts['replaced'] == 1 else 'have'} a different label in panel {name!r}; "
                             "confirm replacing them (overwrite) or drop them from the file")
        version = panel_version(panel.with_labels(new_labels))
        with self.transaction() as cur:
            info = self._panel_row(cur, name)
            cur.executemany("UPDATE items SET label = ? WHERE panel_id = ? AND row_pos = ?",
                            [[v, info["panel_id"], r] for r, v in changed])
            cur.execute("UPDATE panels SET n_labelled = ?, version = ? WHERE panel_id = ?",
                        [int((~np.isnan(new_labels)).sum()), version, info["panel_id"]])
            row = cur.execute("SELECT value FROM meta WHERE key = ?", [ACTIVE_KEY + name]).fetchone()
            if row is not None and json.loads(row[0]).get("version") == info["version"]:
                state = json.loads(row[0])
                state["version"] = version        # the active set carries over to the new labels
                cur.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", [ACTIVE_KEY + name, json.dumps(state)])
        return {**counts, "version": version}


def _same_output(old: str, new: str) -> bool:
    """Equal outputs: the same text, or the same number (a spreadsheet may rewrite 1.0 as 1)."""
    if old.strip() == new.strip():
        return True
    try:
        return float(old) == float(new)
    except ValueError:
        return False
