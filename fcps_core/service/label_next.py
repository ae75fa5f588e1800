"""The label-next workflow: read a panel, rank its unlabelled items, write the batch; merge the
labelled batch back (shared by ``python -m fcps_core label-next`` and the Label next page).

* :func:`plan_batch` fits the default selection on the panel's labelled rows, with the
  evaluation set E (every labelled row except the items an earlier batch chose actively and
  no audit met since) as its evaluation rows, and draws the next batch
  (:func:`fcps_core.planning.label_next.choose_batch`: a uniform audit sample, by default the
  smallest that keeps E at least half of the labels, plus the greedy
  variance-reducing active part).
* :class:`LabelNextPlan` is the batch: CSV rows (item_id, group_id, the judges' outputs, an
  empty label column to fill, why each was chosen) through :mod:`fcps_core.files.csv_writer`, and the
  JSON summary (docs/json-contract.md, "label-next").
* :func:`read_labelled_batch` reads the filled CSV back; :func:`merge_batch` merges it into a
  stored panel (:meth:`fcps_core.store.Store.merge_labels`) and records which items were
  chosen actively, so the next decision's risks are read on E.
* :func:`decision_summary` is what the page shows before and after a merge: the deployed
  decision, its deployed-risk interval, and the frontier (the result's ``frontier`` when it
  has one, else the best cross-fitted risk at each K).
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass, field

import numpy as np

from ..errors import PanelError
from ..planning.label_next import (DEFAULT_AUDIT_SHARE, LabelBatch, check_batch, choose_batch, pool_rows)

#: the CSV columns before the judges' outputs, and after them
LEAD_COLUMNS = ("item_id", "group_id", "label")
TRAIL_COLUMNS = ("chosen_by", "inclusion_probability", "expected_variance_reduction", "reason")
#: the largest upload the page reads (bytes)
MAX_UPLOAD_BYTES = 50 * 1024 * 1024


def evaluation_mask(panel, active_items=None) -> np.ndarray:
    """E: the labelled rows that are not actively chosen items (``active_items``: item ids)."""
    mask = panel.labelled.copy()
    if active_items:
        active = set(map(str, active_items))
        mask &= ~np.array([str(i) in active for i in panel.item_ids.tolist()], dtype=bool)
    return mask


def test_rows_of(panel) -> np.ndarray:
    """Rows the user's block column puts in the research test block T (never chosen)."""
    if panel.blocks is None:
        return np.zeros(0, dtype=np.int64)
    return np.flatnonzero(np.asarray(panel.blocks, dtype=object) == "T")


def fit_decision(panel, *, seed: int = 0, active_items=None, options: dict | None = None, progress=None):
    """The default selection on the labelled rows, its risks read on E."""
    from ..selection import FCPSSelector
    from ..data.splits import make_blocks
    mask = evaluation_mask(panel, active_items)
    eval_rows = None if mask.sum() == panel.labelled.sum() else mask
    blocks = make_blocks(panel, seed=seed)
    selector = FCPSSelector(seed=seed, progress=progress, eval_rows=eval_rows, **(options or {}))
    return selector.fit(panel, blocks)


@dataclass
class LabelNextPlan:
    """A batch to label: the chosen rows, why, and the decision they were chosen for."""

    panel: object
    batch: LabelBatch
    decision: dict
    seed: int
    info: dict = field(default_factory=dict)

    @property
    def item_ids(self) -> list[str]:
        return [str(self.panel.item_ids[r]) for r in self.batch.rows]

    def header(self) -> list[str]:
        return list(LEAD_COLUMNS) + self.panel.judge_names + list(TRAIL_COLUMNS)

    def rows(self) -> list[list]:
        outs = [j.raw_outputs() for j in self.panel.judges]
        b = self.batch
        table = []
        for k, r in enumerate(b.rows):
            table.append([self.panel.item_ids[r], self.panel.group_ids[r], ""]
                         + ["" if o[r] == "<missing>" else o[r] for o in outs]
                         + ["audit" if b.audit[k] else "active",
                            float(b.inclusion[k]) if b.audit[k] else None,
                            None if b.audit[k] else float(b.gain[k]), b.reasons[k]])
        return table

    def csv_text(self) -> str:
        from ..files.csv_writer import csv_text
        return csv_text(self.header(), self.rows(), lineterminator="\n")

    def write(self, path: str, *, force: bool = False) -> None:
        from ..files.csv_writer import write_csv
        write_csv(path, self.header(), self.rows(), force=force)

    def to_dict(self) -> dict:
        b = self.batch
        items = [{"item_id": str(self.panel.item_ids[r]), "group_id": str(self.panel.group_ids[r]),
                  "chosen_by": "audit" if b.audit[k] else "active",
                  "inclusion_probability": float(b.inclusion[k]) if b.audit[k] else None,
                  "expected_variance_reduction": None if b.audit[k] else float(b.gain[k]),
                  "reason": b.reasons[k]}
                 for k, r in enumerate(b.rows)]
        return {"command": "label-next", "panel": {"name": self.panel.name, "n_rows": int(self.panel.n_rows),
                                                   "n_labelled": int(self.panel.n_labelled)},
                "batch": len(b), "seed": self.seed, "rule": RULE_TEXT,
                "n_audit": b.info.get("n_audit"), "n_active": b.info.get("n_active"),
                "audit_share": b.info.get("audit_share"),
                "free_audit_items": [str(self.panel.item_ids[r]) for r in b.free_audit_rows],
                "decision": self.decision, "items": items, **self.info}


RULE_TEXT = ("a uniform random audit sample (evaluation rows; by default the smallest that keeps them at least "
             "half of the labels) plus greedy expected "
             "reduction of the deployed predictor's integrated prediction variance (V-optimal design)")


def plan_batch(panel, batch: int, *, seed: int = 0, audit_share: float = DEFAULT_AUDIT_SHARE,
               whole_groups: bool = False, active_items=None, options: dict | None = None,
               progress=None) -> LabelNextPlan:
    """The next ``batch`` unlabelled items of ``panel`` to label (see the module doc). The batch
    size is checked before the (long) selection."""
    test = test_rows_of(panel)
    check_batch(panel, batch, pool_rows(panel, test))
    result = fit_decision(panel, seed=seed, active_items=active_items, options=options, progress=progress)
    mask = evaluation_mask(panel, active_items)
    chosen = choose_batch(result, batch, seed=seed, audit_share=audit_share, evaluated=mask,
                          whole_groups=whole_groups, test_rows=test)
    return LabelNextPlan(panel=panel, batch=chosen, decision=decision_of(result), seed=seed)


def decision_of(result) -> dict:
    """The deployed decision in a few numbers: what is deployed, its risk interval, the frontier."""
    dr = result.deployed_risk or {}
    out = {"deployed": [{"family": c.family, "K": int(c.K), "judges": list(c.judges)}
                        for c in result.deployed_members],
           "objective": result.selector.objective,
           "deployed_risk": dr.get("estimate"), "deployed_risk_ci": dr.get("ci"),
           "n_labelled": int(result.panel.n_labelled), "n_evaluation_rows": int(len(result.val_rows))}
    full = result.to_dict()
    if "frontier" in full:
        out["frontier"] = full["frontier"]
        out["frontier_kind"] = "frontier"
    else:
        best: dict[int, float] = {}
        for c in result.candidates:
            if math.isfinite(c.val_risk):
                best[int(c.K)] = min(best.get(int(c.K), math.inf), float(c.val_risk))
        out["frontier"] = [{"K": k, "risk": best[k]} for k in sorted(best)]
        out["frontier_kind"] = "risk_by_K"
    return out


def decision_summary(panel, *, seed: int = 0, active_items=None, options: dict | None = None) -> dict:
    """:func:`decision_of` the default selection on ``panel``'s labels (risks read on E)."""
    return decision_of(fit_decision(panel, seed=seed, active_items=active_items, options=options))


def _unneutralised(text: str) -> str:
    """A cell as written before :func:`fcps_core.files.csv_writer.neutralise_cell` added its apostrophe."""
    from ..files.csv_writer import FORMULA_STARTS
    if len(text) >= 2 and text[0] == "'" and text[1] in FORMULA_STARTS:
        return text[1:]
    return text


def label_range_of(panel) -> tuple[float, float]:
    """The range the panel's numeric labels were normalised from (its label note says
    "[lo, hi]" for rubric labels), else (0, 1): uploaded labels are read on the same scale."""
    import re
    m = re.search(r"\[(-?[0-9.eE+]+), (-?[0-9.eE+]+)\]", panel.label_note or "")
    return (float(m.group(1)), float(m.group(2))) if m else (0.0, 1.0)


def read_labelled_batch(data: bytes | str, *, source: str = "the upload", judges=(),
                        label_range: tuple[float, float] = (0.0, 1.0)) -> tuple[dict, dict]:
    """({item id: label in [0, 1]}, {item id: {judge: output}}) from a filled batch CSV. Rows
    with an empty label are skipped; labels are numbers on the panel's label scale
    (``label_range``, mapped to [0, 1]) or the label words the panel reader knows (A/B,
    yes/no, correct/incorrect ...)."""
    from ..data.labels import map_labels
    if isinstance(data, bytes):
        if len(data) > MAX_UPLOAD_BYTES:
            raise PanelError(f"{source} is larger than {MAX_UPLOAD_BYTES // (1024 * 1024)} MB")
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise PanelError(f"{source} is not UTF-8 text; save the CSV as UTF-8") from None
    reader = csv.reader(io.StringIO(data))
    header = next(reader, None)
    if not header:
        raise PanelError(f"{source} is empty; upload the CSV label-next wrote, with the label column filled")
    header = [h.strip() for h in header]
    for need in ("item_id", "label"):
        if need not in header:
            raise PanelError(f"{source} has no {need!r} column; upload the CSV label-next wrote "
                             "(item_id, group_id, label, the judges' outputs)", column=need)
    i_item, i_label = header.index("item_id"), header.index("label")
    judge_cols = [(header.index(j), j) for j in judges if j in header]
    labels, outputs = {}, {}
    for line, row in enumerate(reader, start=2):
        if not any(c.strip() for c in row):
            continue
        if len(row) != len(header):
            raise PanelError(f"{source}: the row has {len(row)} cells but the header has {len(header)}",
                             line=line)
        item = _unneutralised(row[i_item].strip())
        if item in outputs:
            raise PanelError(f"{source}: item id {item!r} appears twice", line=line, column="item_id")
        outputs[item] = {j: _unneutralised(row[k]) for k, j in judge_cols}
        value = map_labels([row[i_label]], column="label", first_line=line, label_range=label_range)[0][0]
        if not np.isnan(value):
            labels[item] = float(value)
    if not labels:
        raise PanelError(f"{source} has no filled label; fill the label column (numbers from 0 to 1, or "
                         "A/B, yes/no ...) and upload it again", column="label")
    return labels, outputs


def record_plan(store, name: str, plan: LabelNextPlan) -> None:
    """Remember which items of stored panel ``name`` the batch chose actively (they are not
    evaluation rows) and which the audit drew or met (they are)."""
    b = plan.batch
    ids = plan.panel.item_ids
    store.record_label_request(name, active=[str(ids[r]) for r in b.rows[~b.audit]],
                               audited=[str(ids[r]) for r in np.concatenate([b.rows[b.audit], b.free_audit_rows])])


def merge_batch(store, name: str, data: bytes | str, *, overwrite: bool = False,
                source: str = "the upload") -> dict:
    """Merge a filled batch CSV into stored panel ``name`` (:meth:`Store.merge_labels`)."""
    panel = store.load_panel(name)
    labels, outputs = read_labelled_batch(data, source=source, judges=panel.judge_names,
                                          label_range=label_range_of(panel))
    out = store.merge_labels(name, labels, outputs=outputs, overwrite=overwrite)
    return {**out, "labelled_in_file": len(labels)}
