"""``SelectionResult.cell_table`` as it stood at commit 78ada3b (a scan of the rows per
pattern), kept as the oracle of ``tests/test_rows_scaling.py`` for the vectorised version."""

from __future__ import annotations

import numpy as np

from fcps_core.data.encoding import pattern_labels


def cell_table(result, cand=None, *, limit: int | None = None) -> list[dict]:
    """Per-pattern audit of a candidate's prefix: pattern, N_z (M), mean label (M),
    prediction, and V/T frequencies; sorted by N_z descending, unseen cells last."""
    self = result
    if cand is None:
        cand = self.selected
    elif isinstance(cand, int):
        cand = self.candidates[cand]
    feats = self.features(cand)
    ids = feats.patterns[cand.K - 1]
    if ids is None:
        return []
    b = self.blocks
    fit_rows, val_rows = self.fit_rows, self.val_rows
    y = self.panel.labels
    model = self.models[cand.index]
    rows_all = np.unique(np.concatenate([fit_rows, val_rows, b.T]))
    uniq = np.unique(ids[rows_all])
    out = []
    codes = self.encoded.codes[:, list(cand.judge_idx)]
    encoders = [self.encoded.encoders[j] for j in cand.judge_idx]
    first_row = {}
    for r in rows_all:
        first_row.setdefault(int(ids[r]), int(r))
    pred_all = model.predict(feats.take(rows_all))
    pred_by_id: dict[int, list[float]] = {}
    for r, p in zip(rows_all, pred_all):
        pred_by_id.setdefault(int(ids[r]), []).append(float(p))
    n_V, n_T = max(len(val_rows), 1), max(len(b.T), 1)
    for z in uniq:
        z = int(z)
        in_M = fit_rows[ids[fit_rows] == z]
        out.append({
            "pattern": pattern_labels(codes[first_row[z]], encoders),
            "N_z": int(len(in_M)),
            "mean_label": float(y[in_M].mean()) if len(in_M) else None,
            "prediction": float(np.mean(pred_by_id[z])),
            "freq_val": float(np.sum(ids[val_rows] == z) / n_V),
            "freq_test": float(np.sum(ids[b.T] == z) / n_T) if len(b.T) else None,
            "unseen": len(in_M) == 0,
        })
    out.sort(key=lambda d: (d["unseen"], -d["N_z"], -d["freq_val"], d["pattern"]))
    return out[:limit] if limit else out
