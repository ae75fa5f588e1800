"""Deployment audit: unlabelled traffic against the calibration support of a predictor.

The paper's cell pressure (Eq. cell-pressure) with target pattern frequencies q(z) in
place of p_z ("Calibration Pressure": "the same inverse-count term can be estimated from
unlabeled target traffic ... by replacing p_z with target pattern frequencies q(z)")::

    V_deploy = sum_{z: N_z > 0} q(z) / N_z  +  u,     u = q(unseen patterns)

where N_z are the calibration counts of the deployed judges' joint patterns (stored in the
predictor's support section) and q(z) the share of traffic rows with pattern z. No label
is needed.

Drift. For the joint pattern and for each judge's output (table codes; continuous judges
by their calibration bins; "never seen" is its own category) the audit reports the total
variation distance TV = 1/2 sum |p - q|, the PSI sum (q - p) log(q / p) (each share floored
at 1e-4), and a chi-square test of homogeneity. Both TV and PSI grow with sampling noise
alone when categories are many and samples small, so a shift is called only when TV
exceeds its **sampling-noise threshold**: the 99% quantile of TV between two samples of the
calibration and traffic sizes drawn from the pooled distribution (a parametric bootstrap
under "no drift", ``n_null`` draws, seeded). Its p-value is reported beside it.

Status (thresholds in :data:`DEFAULT_THRESHOLDS`, each overridable):

* **REFUSE** when the rows the deployed family cannot place exceed ``refuse_unseen`` (every
  family: rows with an output never seen in calibration or a continuous value outside its
  judge's calibration range; table-like families also unseen joint patterns, which get the
  fallback prediction), or when rows with a missing judge output exceed
  ``refuse_missing`` (and more than in calibration; the judges missing that often are
  named);
* **WARN** at ``warn_unseen``, when rows with a missing output exceed calibration's share
  by ``warn_missing``, when a table-like deployment's pressure
  exceeds ``warn_pressure`` (the regime map's table-pressure threshold), when the joint or
  any judge's distribution drifted beyond noise by more than ``warn_drift`` TV, or when a
  judge's missing or parse-error rate rose by more than ``warn_missing`` over calibration;
* **OK** otherwise. Every WARN/REFUSE comes with its reason in plain words.

Traffic outputs are read as ``score`` reads them (:mod:`fcps_core.deploy.outputs`): one that
differs from a calibration output only by case is that output; each judge lists what was so
read (``read_as``) and the outputs calibration never saw with their rows
(``never_seen_outputs``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..wording import count_of, noun_for
from ..measures.diagnostics import PRESSURE_THRESHOLD
from ..data.encoding import pattern_labels
from ..errors import PredictorError
from ..data.panel import ERROR_TOKENS, MISSING, Panel
from .validate import short
from .support import MISSING_BEHAVIOUR, RowSupport, calibration_keys, pattern_keys

if TYPE_CHECKING:
    import pandas as pd

#: documented status thresholds (shares of traffic rows, TV distances)
DEFAULT_THRESHOLDS = {
    "warn_unseen": 0.10, "refuse_unseen": 0.50,
    "warn_missing": 0.05, "refuse_missing": 0.50,
    "warn_pressure": PRESSURE_THRESHOLD,
    "warn_drift": 0.05,
}
#: draws of the no-drift null behind each TV threshold; its quantile
N_NULL, NULL_QUANTILE = 200, 0.99
#: shares below this count as this in PSI (an empty category would make it infinite)
PSI_FLOOR = 1e-4
#: cells kept in the audit's cell table (the most frequent in traffic first)
MAX_CELLS = 2000


@dataclass
class Drift:
    """Drift of one categorical distribution, calibration -> traffic."""

    tv: float
    threshold: float           # the 99% no-drift quantile of TV at these sample sizes
    p_value: float             # share of no-drift draws with a TV at least this large
    psi: float
    chi2_p: float | None
    categories: list[str] = field(default_factory=list)
    calibration: list[float] = field(default_factory=list)
    traffic: list[float] = field(default_factory=list)

    @property
    def shifted(self) -> bool:
        return self.tv > self.threshold

    def to_dict(self) -> dict:
        return {"tv": self.tv, "threshold": self.threshold, "p_value": self.p_value,
                "psi": self.psi, "chi2_p": self.chi2_p, "shifted": self.shifted,
                "categories": self.categories, "calibration": self.calibration,
                "traffic": self.traffic}


def distribution_drift(calibration_counts, traffic_counts, *, seed: int = 0,
                       n_null: int = N_NULL, labels: list[str] | None = None) -> Drift:
    """TV, PSI and chi-square between two count vectors over the same categories, with the
    TV's sampling-noise threshold from a seeded two-sample parametric bootstrap."""
    c = np.asarray(calibration_counts, dtype=float)
    t = np.asarray(traffic_counts, dtype=float)
    N, n = c.sum(), t.sum()
    if N <= 0 or n <= 0:
        return Drift(tv=float("nan"), threshold=float("nan"), p_value=float("nan"),
                     psi=float("nan"), chi2_p=None)
    p, q = c / N, t / n
    tv = 0.5 * float(np.abs(p - q).sum())
    pf, qf = np.maximum(p, PSI_FLOOR), np.maximum(q, PSI_FLOOR)
    psi = float(np.sum((qf - pf) * np.log(qf / pf)))
    keep = (c + t) > 0
    chi2_p = None
    if keep.sum() >= 2:
        from scipy.stats import chi2_contingency
        chi2_p = float(chi2_contingency(np.vstack([c[keep], t[keep]]))[1])
    pooled = (c + t)[keep] / (N + n)
    rng = np.random.default_rng(seed)
    # Bound the null's work on huge pattern sets (many categories x many draws).
    draws = int(max(20, min(n_null, 20_000_000 // max(int(keep.sum()), 1))))
    null = np.empty(draws)
    for b in range(draws):
        cs = rng.multinomial(int(N), pooled) / N
        ts = rng.multinomial(int(n), pooled) / n
        null[b] = 0.5 * np.abs(cs - ts).sum()
    threshold = float(np.quantile(null, NULL_QUANTILE))
    p_value = float((1 + np.sum(null >= tv - 1e-12)) / (draws + 1))
    return Drift(tv=tv, threshold=threshold, p_value=p_value, psi=psi, chi2_p=chi2_p,
                 categories=list(labels or []), calibration=p.tolist(), traffic=q.tolist())


@dataclass
class AuditResult:
    status: str                       # OK / WARN / REFUSE
    reasons: list[str]
    n_rows: int
    predictor: dict                   # family, judges, calibration rows, table_like
    pressure: float                   # sum_{N_z>0} q(z)/N_z + u
    pressure_sum: float               # the first term
    unseen_rate: float                # u: traffic share of patterns calibration never saw
    out_of_range_rate: float          # rows with a never-seen output or a value off range
    out_of_support_rate: float        # what the deployed family needs (see deploy.support)
    missing_rate: float               # rows with at least one missing judge output
    missing_calibration: float        # the same share over calibration
    missing_behaviour: str
    joint_drift: Drift
    judges: list[dict]                # per judge: drift, missing and parse-error rate shift
    cells: list[dict]                 # per traffic pattern (most frequent first)
    n_cells: int
    thresholds: dict
    predictions: np.ndarray | None = None
    support: RowSupport | None = None     # per-row support of the traffic (for the predictions file)

    def to_dict(self, *, cells_limit: int = MAX_CELLS) -> dict:
        return {"status": self.status, "reasons": self.reasons, "rows": self.n_rows,
                "predictor": self.predictor, "pressure": self.pressure,
                "pressure_sum": self.pressure_sum, "unseen_rate": self.unseen_rate,
                "out_of_range_rate": self.out_of_range_rate,
                "out_of_support_rate": self.out_of_support_rate,
                "missing_rate": self.missing_rate,
                "missing_calibration": self.missing_calibration, "missing_behaviour": self.missing_behaviour,
                "joint_drift": {k: v for k, v in self.joint_drift.to_dict().items()
                                if k not in ("categories", "calibration", "traffic")},
                "judges": self.judges, "n_cells": self.n_cells,
                "cells": self.cells[:cells_limit], "thresholds": self.thresholds}


def _off_range(column, info: dict) -> np.ndarray:
    """Rows of a continuous judge's traffic ``column`` whose value lies outside the
    calibration range stored in the support section (``info``); all False otherwise."""
    n = len(column.values) if column.values is not None else len(column.codes)
    lo, hi = (info.get("range") or [None, None])[:2]
    if column.schema != "continuous" or lo is None or hi is None:
        return np.zeros(n, dtype=bool)
    vals = column.values
    return ~np.isnan(vals) & ((vals < lo) | (vals > hi))


def _share(x: float) -> str:
    """A share of rows in words: whole percents, or its digits under 1% (never "0%" for rows
    that are there)."""
    return f"{x:.0%}" if x == 0 or x >= 0.01 else f"{100 * x:.2g}%"


def _outside_words(table_like: bool, unseen_rate: float, judges: list[dict]) -> str:
    """Why rows are outside the support, in words: unseen patterns (tables), and the judges
    whose outputs calibration never saw or whose values lie off its range (worst first)."""
    parts = []
    if table_like and unseen_rate > 0:
        parts.append(f"{_share(unseen_rate)} have a joint pattern calibration never saw (the table gives them "
                     "its fallback)")
    worst = sorted(judges, key=lambda j: -(j["off_range_traffic"] + j["never_seen_traffic"]))
    for j in worst[:3]:
        if j["off_range_traffic"] > 0:
            lo, hi = j["calibration_range"]
            parts.append(f"judge {short(j['judge'])} is outside its calibration range [{lo:.4g}, {hi:.4g}] on "
                         f"{_share(j['off_range_traffic'])} of rows")
        if j["never_seen_traffic"] > 0:
            parts.append(f"judge {short(j['judge'])} gives an output calibration never saw on "
                         f"{_share(j['never_seen_traffic'])} of rows")
    return "; ".join(parts) if parts else "outputs calibration never saw"


def _missing_words(judges: list[dict], share: float) -> str:
    """The judges missing on at least ``share`` of the traffic, named (empty when none)."""
    named = [f"{short(j['judge'])} {j['missing_traffic']:.0%} missing" for j in judges
             if j["missing_traffic"] >= share and j["missing_traffic"] > j["missing_calibration"]]
    return (": judge " + ", ".join(named)) if named else ""


def missing_behaviour(predictor) -> str:
    """What the deployed families do with a missing judge output, in words. An average over
    families that do different things says which models do which (it read "a missing output
    is its own cell value ...; a missing output is an abstention ...; a missing output gets
    the judge's neutral score ..." for one predictor, as if all three held at once)."""
    from ..families import fitted_family
    from ..reports.names import family_name
    fams = list(dict.fromkeys(predictor.families))
    kinds = {"table": [f for f in fams if fitted_family(f).table_like],
             "ds_jury": [f for f in fams if f == "ds_jury"],
             "scalar": [f for f in fams if not fitted_family(f).table_like and f != "ds_jury"]}
    kinds = {k: v for k, v in kinds.items() if v}
    if len(kinds) <= 1:
        return "; ".join(MISSING_BEHAVIOUR[k] for k in kinds)

    def which(members: list[str]) -> str:
        names = [family_name(f) for f in members]
        listed = names[0] if len(names) == 1 else ", ".join(names[:-1]) + " and " + names[-1]
        return f"In the {listed} model{'s' if len(names) > 1 else ''}"
    # one sentence per kind: the table's own text holds a "; otherwise"
    return ". ".join(f"{which(members)}, {MISSING_BEHAVIOUR[k]}" for k, members in kinds.items())


def audit_traffic(predictor, traffic: Panel | pd.DataFrame | np.ndarray, *, thresholds: dict | None = None,
                  seed: int = 0) -> AuditResult:
    """Audit ``traffic`` (labels not needed) against ``predictor``'s calibration support.
    ``traffic``: a Panel, a pandas DataFrame (one column per judge) or a 2-D numpy array
    (columns in the predictor's judges order), NaN a missing output
    (``FCPSPredictor.as_panel``)."""
    traffic = predictor.as_panel(traffic)
    if predictor.support is None:
        raise PredictorError("this predictor file has no calibration support (it was made by an "
                             "older fcps): run select again and save the new predictor to audit it")
    th = {**DEFAULT_THRESHOLDS, **(thresholds or {})}
    unknown = set(th) - set(DEFAULT_THRESHOLDS)
    if unknown:
        raise PredictorError(f"unknown audit {noun_for(len(unknown), 'threshold')}: {', '.join(sorted(unknown))}; "
                             f"use {', '.join(DEFAULT_THRESHOLDS)}")
    if traffic.n_rows == 0:
        raise PredictorError("the traffic has no rows to audit")
    support = predictor.support
    encoders = predictor.support_encoders()
    # outputs differing from calibration's only by case are read as them (deploy.outputs)
    traffic, readings = predictor.read_outputs(traffic)
    readings = {r.judge: r.to_dict() for r in readings}
    pred, rs = predictor.score(traffic)
    n = traffic.n_rows
    N = int(support["rows"])

    # -- cells: q(z), N_z, prediction (Eq. cell-pressure with q in place of p) ------------
    sizes = np.array([e.alphabet_size for e in encoders], dtype=np.int64)
    keys = pattern_keys(rs.codes, sizes)
    _, first, inverse, rows_per = np.unique(keys, return_index=True, return_inverse=True,
                                            return_counts=True)
    inverse = np.asarray(inverse).reshape(-1)
    distinct = rs.codes[first]
    N_cell = rs.N_z[first]
    q = rows_per / n
    seen = N_cell > 0
    pressure_sum = float(np.sum(q[seen] / N_cell[seen]))
    unseen_rate = float(q[~seen].sum())
    pred_mean = np.bincount(inverse, weights=pred, minlength=len(distinct)) / rows_per
    order = np.argsort(-rows_per, kind="stable")
    cells = [{"pattern": pattern_labels(distinct[i], encoders), "N_z": int(N_cell[i]),
              "p_z": float(N_cell[i] / N) if N else 0.0, "q_z": float(q[i]),
              "traffic_rows": int(rows_per[i]), "prediction": float(pred_mean[i]),
              "unseen": bool(not seen[i])} for i in order[:MAX_CELLS]]

    # -- joint drift: calibration patterns + one bucket per unseen traffic pattern --------
    cal_keys, cal_counts = calibration_keys(support, sizes)
    cal_counts = cal_counts.astype(float)
    traffic_counts = np.zeros(len(cal_keys))
    if len(cal_keys):
        pos = np.minimum(np.searchsorted(cal_keys, keys[first]), len(cal_keys) - 1)
        np.add.at(traffic_counts, pos[seen], rows_per[seen])
    extra = rows_per[~seen].astype(float)      # one category per unseen traffic pattern
    joint = distribution_drift(np.concatenate([cal_counts, np.zeros(len(extra))]),
                               np.concatenate([traffic_counts, extra]), seed=seed)

    # -- per judge: output distribution, missing and parse-error rates -------------------
    judges = []
    columns = {c.name: c for c in traffic.judges}
    for k, (enc, info) in enumerate(zip(encoders, support["judges"])):
        codes = rs.codes[:, k]
        off_range = _off_range(columns[enc.name], info)
        cal = np.append(np.asarray(info["counts"], dtype=float), float(info.get("unseen", 0)))
        traf = np.append(np.bincount(codes[codes >= 0], minlength=enc.alphabet_size).astype(float),
                         float((codes < 0).sum()))
        labels = list(enc.vocab) + ["<never seen>"]
        drift = distribution_drift(cal, traf, seed=seed + 1 + k, labels=labels)
        cal_rows = max(float(cal.sum()), 1.0)
        miss_code = enc.vocab.index(MISSING) if MISSING in enc.vocab else None
        err_codes = [i for i, t in enumerate(enc.vocab) if str(t).strip().lower() in ERROR_TOKENS]
        judges.append({"judge": enc.name, "schema": enc.schema, **drift.to_dict(),
                       "missing_calibration": 0.0 if miss_code is None else float(cal[miss_code] / cal_rows),
                       "missing_traffic": float(rs.missing[:, k].mean()),
                       "parse_error_calibration": float(cal[err_codes].sum() / cal_rows) if err_codes else 0.0,
                       "parse_error_traffic": float(rs.parse_error[:, k].mean()),
                       # outputs calibration never saw (not missing), values off the calibration range
                       "never_seen_traffic": float(((codes < 0) & ~rs.missing[:, k]).mean()),
                       "off_range_traffic": float(off_range.mean()),
                       "calibration_range": info.get("range"),
                       # outputs read as a calibration output (case), and those never seen, with rows
                       "read_as": readings.get(enc.name, {}).get("read_as", []),
                       "never_seen_outputs": readings.get(enc.name, {}).get("never_seen", [])})

    # -- status --------------------------------------------------------------------------
    table_like = predictor.table_like
    # the rows' own shares (1 - mean can print a digit below the unseen share of the same rows)
    out_of_range = float(np.mean(~rs.in_range))
    out_of_support = float(np.mean(~rs.in_support))
    missing_rows = rs.missing.any(axis=1)
    missing_rate = float(missing_rows.mean())
    pressure = pressure_sum + unseen_rate
    what = _outside_words(table_like, unseen_rate, judges)
    refuse, warn = [], []
    if out_of_support >= th["refuse_unseen"]:
        refuse.append(f"{out_of_support:.0%} of traffic rows are outside the calibration support: {what} "
                      f"(refuse at {th['refuse_unseen']:.0%})")
    elif out_of_support >= th["warn_unseen"]:
        warn.append(f"{out_of_support:.0%} of traffic rows are outside the calibration support: {what} "
                    f"(warn at {th['warn_unseen']:.0%})")
    # Missing outputs count against traffic only beyond what calibration already had.
    cal_missing = float(support.get("missing_rows", 0)) / max(N, 1)
    missing_rise = missing_rate - cal_missing
    if missing_rate >= th["refuse_missing"] and missing_rise > 0:
        refuse.append(f"{missing_rate:.0%} of rows lack a judge output (calibration: {cal_missing:.0%}; "
                      f"refuse at {th['refuse_missing']:.0%})" + _missing_words(judges, th["refuse_missing"]))
    elif missing_rise >= th["warn_missing"]:
        warn.append(f"{missing_rate:.0%} of rows lack a judge output, {missing_rise:.0%} more than in "
                    f"calibration (warn at +{th['warn_missing']:.0%})")
    if table_like and pressure > th["warn_pressure"]:
        warn.append(f"deployment cell pressure {pressure:.3f} is above {th['warn_pressure']:g} "
                    "(the table's estimation cost on this traffic is high)")
    if joint.shifted and joint.tv - joint.threshold > th["warn_drift"]:
        warn.append(f"the joint output pattern drifted (TV {joint.tv:.3f}, noise threshold {joint.threshold:.3f})")
    for j in judges:
        if j["shifted"] and j["tv"] - j["threshold"] > th["warn_drift"]:
            warn.append(f"judge {short(j['judge'])} output distribution drifted (TV {j['tv']:.3f}, "
                        f"noise threshold {j['threshold']:.3f})")
        rise = max(j["missing_traffic"] - j["missing_calibration"],
                   j["parse_error_traffic"] - j["parse_error_calibration"])
        if rise > th["warn_missing"]:
            warn.append(f"judge {short(j['judge'])} missing/parse-error rate rose by {rise:.0%} over calibration")
    status = "REFUSE" if refuse else "WARN" if warn else "OK"
    info = {"family": predictor.family, "display_name": predictor.display_name, "judges": predictor.judges, "table_like": table_like,
            "calibration_rows": N, "panel": predictor.metadata.get("panel"),
            "members": predictor.families if len(predictor.members) > 1 else None}
    return AuditResult(status=status, reasons=refuse + warn, n_rows=n, predictor=info,
                       pressure=pressure, pressure_sum=pressure_sum, unseen_rate=unseen_rate,
                       out_of_range_rate=out_of_range, out_of_support_rate=out_of_support,
                       missing_rate=missing_rate, missing_calibration=cal_missing,
                       missing_behaviour=missing_behaviour(predictor),
                       joint_drift=joint, judges=judges, cells=cells, n_cells=len(distinct),
                       thresholds=th, predictions=pred,
                       support=rs)
