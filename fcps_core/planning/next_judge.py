"""The next judge: what adding or dropping one judge would change, given the labels at hand.

Starting from a deployment (a fitted :class:`~fcps_core.selection.SelectionResult`, a stored
run, or a configuration given by hand), the deployed candidate's family and hyperparameters
are refitted under the selection's own protocol -- the same grouped folds (folds x repeats,
same seed) over the deployable labelled rows S+M+V under ``crossfit``, fit on M and score V
under ``split``; the research test block T is never read -- on

* the deployed prefix (an average of tied candidates is represented by its best member);
* the prefix plus judge j, appended last, for every pool judge j outside it;
* the prefix minus judge d, for every deployed judge d (K >= 2).

Encoders are fitted on each fold's training rows, as in the selection. **Risk change** is
the paired mean of per-row held-out losses (the selection's objective, averaged over the
repeats) minus the deployed prefix's on the same rows, with the group-clustered paired SE
of :class:`~fcps_core.selection.choice.GroupedLosses` and a normal 95 % interval.
**Table-pressure change** is the change of V_proxy = H_K / n_M + unseen rate of the joint
pattern (H_K on each fold's training rows, the unseen rate on its held-out rows, averaged
over folds: the selection's own diagnostic). The judge set is held fixed across folds (it
was chosen on all deployable labels), so every risk is conditional on it; the paired
differences compare like with like.

**Calibrate, don't curate.** (a) The whole pool calibrated by the best scalar stacker
(:data:`POOL_FAMILIES`; the best of them on these held-out rows, so slightly optimistic)
against (b) the curated top-k judges, k = the deployed K, ranked by single-judge accuracy
(hard decision score > 1/2 against the label; a tie or abstention counts one half) on each
fold's *training* rows and calibrated by the deployed family: both cross-fitted, with the
paired difference (curated - pool) and its clustered SE.

**Judges without labels.** A judge whose outputs exist only on unlabelled traffic (a
traffic file holding the deployed judges plus extra columns, or a pool judge with no output
on any labelled row) gets what needs no label: its table-pressure change on traffic and its
agreement with the deployed panel. Pressure on traffic is H / n_cal + u, H the effective
support of the traffic's joint pattern, n_cal the deployed model's calibration rows, u the
share of traffic whose deployed pattern is unseen in calibration; with the extra judge e the
unseen rate adds, for traffic rows of a seen pattern z, the chance (1 - q(e | z))^N_z that
calibration's N_z rows of z never showed the row's output of e (q from traffic: what the
calibration rows would show had they been run through e). Its risk effect needs labels.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np
from threadpoolctl import threadpool_limits

from ..wording import count_of, noun_for
from ..measures.diagnostics import effective_support, prefix_diagnostics, risk_tolerance
from ..data.encoding import JudgeEncoder, encode_panel, nominal_cells, prefix_patterns
from ..errors import FCPSError, MenuError, SplitError
from ..families import REGISTRY, PrefixFeatures, get_family
from ..data.panel import MISSING, Panel
from ..measures.judge_paths import dense_ids, extend_ids
from ..selection.choice import GroupedLosses, row_losses
from ..selection.folds import grouped_folds
from ..selection.honesty import Z95
from ..defaults import judges_count
from ..reports.names import family_name
from ..data.splits import Blocks
from ..deploy.outputs import read_known_outputs

#: the scalar stackers that calibrate the whole pool (pairwise stackers grow as K^2, and the
#: Dawid-Skene EM over a large pool costs more than every other fit together)
POOL_FAMILIES = ("mean_iso", "one_coin_iso", "ridge_iso", "logistic")
NEEDS_LABELS = ("its risk effect needs labels: label some traffic rows (or collect its outputs on "
                "the labelled rows) and plan again")


@dataclass
class Deployment:
    """The deployed configuration a plan starts from.

    ``panel`` carries labels on the deployable scale (``FCPSSelector.checked_panel``);
    ``judges`` are panel judge indices in prefix order; ``selector`` supplies the protocol
    (folds, repeats, seed), objective, bins and fixed family options; ``predictor`` (optional)
    returns the deployed :class:`~fcps_core.deploy.predictor.FCPSPredictor` for the traffic agreement
    (None, or returning None: the deployed configuration is refitted on its calibration rows)."""

    panel: Panel
    blocks: Blocks
    judges: tuple
    family: str
    params: dict
    selector: object
    note: str = ""
    selection_risk: float | None = None
    predictor: Callable | None = None

    @property
    def names(self) -> list[str]:
        return [self.panel.judge_names[j] for j in self.judges]

    @property
    def fit_rows(self) -> np.ndarray:
        """The rows the deployed model learned from: S+M+V under crossfit, M under split."""
        b = self.blocks
        if self.selector.protocol == "crossfit":
            return np.sort(np.concatenate([b.S, b.M, b.V])).astype(np.int64)
        return np.asarray(b.M, dtype=np.int64)

    @property
    def calibration_rows(self) -> np.ndarray:
        """The rows the deployed predictor was calibrated on (a refitted split deployment:
        S+M+V); traffic support is counted against them."""
        b = self.blocks
        if self.selector.protocol != "crossfit" and getattr(self.selector, "refit", "frozen") == "refit":
            return np.sort(np.concatenate([b.S, b.M, b.V])).astype(np.int64)
        return self.fit_rows


def average_note(n_members: int, family: str, K: int) -> str:
    """What a plan says when the deployment is an average: it plans its best member (a
    selection's or a stored run's, :func:`fcps_core.service.plan.deployment_from_run`)."""
    return (f"the deployment averages {n_members} statistically tied models; the plan uses its best member, "
            f"{family_name(family)} over {judges_count(K)}")


def deployment_of(result) -> Deployment:
    """The deployment of a fitted selection (an average's best member, said in ``note``)."""
    cand = result.selected
    note = average_note(len(result.deployed_weights()), cand.family, cand.K) if result.members else ""
    return Deployment(panel=result.panel, blocks=result.blocks, judges=tuple(cand.judge_idx),
                      family=cand.family, params=dict(cand.params), selector=result.selector, note=note,
                      selection_risk=float(cand.val_risk), predictor=result.predictor)


def make_deployment(panel: Panel, blocks: Blocks, judges, family: str, params: dict | None = None, *,
                    selector=None, note: str = "", selection_risk: float | None = None,
                    predictor: Callable | None = None, **selector_options) -> Deployment:
    """A deployment given by hand: ``judges`` (names, in prefix order) calibrated by ``family``
    with ``params``, under ``selector`` (an :class:`~fcps_core.selection.FCPSSelector`, e.g. a
    stored run's) or one made of ``selector_options`` (protocol, folds, repeats, seed,
    objective, n_bins, alpha, ...)."""
    from ..selection import FCPSSelector
    get_family(family)
    if selector is None:
        selector = FCPSSelector(families=(family,), **selector_options)
    selector.validate(len(panel.judges))
    names = panel.judge_names
    unknown = [j for j in judges if j not in names]
    if unknown or not judges or len(set(judges)) != len(judges):
        raise MenuError("the deployed judges must be distinct panel judges"
                        + (f"; unknown: {', '.join(map(repr, unknown))}" if unknown else ""))
    panel = selector.checked_panel(panel, blocks, crossfit=selector.protocol == "crossfit")
    return Deployment(panel=panel, blocks=blocks, judges=tuple(names.index(j) for j in judges),
                      family=family, params=dict(params or {}), selector=selector, note=note,
                      selection_risk=selection_risk, predictor=predictor)


@dataclass
class NextJudgePlan:
    """The plan: the deployed prefix, each add/drop, calibrate-vs-curate, label-free judges."""

    settings: dict
    deployed: dict
    add: list = field(default_factory=list)
    drop: list = field(default_factory=list)
    calibrate_vs_curate: dict | None = None
    unlabelled: dict | None = None
    timings: dict = field(default_factory=dict)

    def to_dict(self) -> dict:
        return {"settings": self.settings, "deployed": self.deployed, "add": self.add, "drop": self.drop,
                "calibrate_vs_curate": self.calibrate_vs_curate, "unlabelled": self.unlabelled,
                "timings": self.timings}


# -- the protocol ------------------------------------------------------------------------------
def protocol_folds(dep: Deployment) -> tuple[np.ndarray, list, int, np.ndarray]:
    """(evaluated rows, [(repeat, training rows, held-out positions)], repeats, unlabelled
    rows) of the deployment's protocol, exactly as the selection drew them (never T)."""
    sel, b, panel = dep.selector, dep.blocks, dep.panel
    T = np.asarray(b.T, dtype=np.int64)
    if sel.protocol == "crossfit":
        D = dep.fit_rows
        if len(D) == 0:
            raise SplitError("no labelled rows outside the test block: the plan needs labels")
        folds = [(r, D[tr], va) for r, tr, va in grouped_folds(panel.group_ids[D], sel.folds, sel.repeats, sel.seed)]
        known = np.zeros(panel.n_rows, dtype=bool)
        known[D] = known[T] = True
        return D, folds, sel.repeats, np.flatnonzero(~known)
    M, V = np.asarray(b.M, dtype=np.int64), np.asarray(b.V, dtype=np.int64)
    if len(M) == 0 or len(V) == 0:
        raise SplitError("the split protocol needs non-empty calibration (M) and validation (V) blocks")
    outside = np.ones(panel.n_rows, dtype=bool)
    outside[M] = outside[T] = False
    return V, [(0, M, np.arange(len(V)))], 1, np.flatnonzero(outside)


def missing_mask(col) -> np.ndarray:
    """Rows where a judge gave no output."""
    if col.schema == "continuous":
        return np.isnan(col.values)
    if MISSING not in col.vocab:
        return np.zeros(len(col.codes), dtype=bool)
    return col.codes == col.vocab.index(MISSING)


def hard_accuracy(scores: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each column's accuracy as a hard decision (score > 1/2 says 1) against soft labels y;
    a score of exactly 1/2 (tie, abstention, missing) counts one half."""
    y = np.asarray(y, float)[:, None]
    return (y * (scores > 0.5) + (1 - y) * (scores < 0.5) + 0.5 * (scores == 0.5)).mean(axis=0)


def _verdict(diff: float, lo: float, hi: float, scale: float) -> str:
    """Where the risk change's 95% interval lies; a change within rounding of 0 (the same
    predictions reached two ways) is no change."""
    if not (np.isfinite(lo) and np.isfinite(hi)):
        return "undetermined"
    if abs(diff) <= risk_tolerance(scale):
        return "no clear change"
    return "lowers risk" if hi < 0 else "raises risk" if lo > 0 else "no clear change"


def _num(v) -> float | None:
    return float(v) if v is not None and np.isfinite(v) else None


# -- the plan ----------------------------------------------------------------------------------
def plan_next_judge(source, *, traffic: Panel | None = None,
                    progress: Callable[[float, str], None] | None = None) -> NextJudgePlan:
    """The next-judge plan of ``source`` (a :class:`Deployment` or a fitted
    ``SelectionResult``); ``traffic`` (optional): unlabelled rows holding the deployed judges
    plus extra judge columns, for the label-free view of the extras.

    Cost: (1 + pool - K + K + 5) fits per fold, each of one small model; BLAS runs on one
    thread meanwhile (threads cost more than they save on matrices this small)."""
    with threadpool_limits(1, user_api="blas"):
        return _plan(source, traffic, progress)


def _plan(source, traffic, progress) -> NextJudgePlan:
    t0 = time.perf_counter()
    dep = source if isinstance(source, Deployment) else deployment_of(source)
    report = progress or (lambda frac, msg: None)
    sel, panel = dep.selector, dep.panel
    rows, folds, R, unlabelled = protocol_folds(dep)
    fit_rows = dep.fit_rows
    names = panel.judge_names
    base = list(dep.judges)
    K = len(base)
    # judges with no output on any deployable labelled row: only a label-free view
    labelled_rows = np.concatenate([fit_rows, rows])
    no_labels = [j for j, c in enumerate(panel.judges)
                 if j not in base and missing_mask(c)[labelled_rows].all()]
    pool = [j for j in range(len(names)) if j not in no_labels]
    configs = [("deployed", None, tuple(base), dep.family)]
    configs += [("add", j, tuple(base + [j]), dep.family) for j in pool if j not in base]
    if K >= 2:
        configs += [("drop", d, tuple(b for b in base if b != d), dep.family) for d in base]
    configs += [("pool", None, tuple(pool), f) for f in POOL_FAMILIES]
    configs.append(("curated", None, None, dep.family))
    cal = encode_panel(panel, fit_rows, n_bins=sel.n_bins)
    overall_top = _curated(cal.scores[fit_rows], panel.labels[fit_rows], pool, K)
    P = np.full((R, len(rows), len(configs)), np.nan)
    vproxy = np.zeros(len(configs))
    n_pressure = np.zeros(len(configs))
    fold_sets = []
    uses_unl = any(REGISTRY[f].uses_unlabelled for _, _, _, f in configs)
    for u, (r, train, held_pos) in enumerate(folds):
        held = rows[held_pos]
        enc = encode_panel(panel, train, n_bins=sel.n_bins)
        need = np.concatenate([train, held] + ([unlabelled] if uses_unl else []))
        codes, scores, alph = enc.codes[need], enc.scores[need], enc.alphabet_sizes
        y_tr = panel.labels[train]
        n_tr, n_ho = len(train), len(held)
        top = _curated(scores[:n_tr], y_tr, pool, K)
        fold_sets.append(frozenset(top))
        base_ids = dense_ids(codes[:n_tr + n_ho][:, base])
        for c, (kind, j, judges, family) in enumerate(configs):
            report(0.9 * (u + c / len(configs)) / len(folds),
                   f"fold {u + 1}/{len(folds)}: {kind}" + (f" {names[j]}" if j is not None else ""))
            cols = list(judges) if judges is not None else top
            pred = _fit_predict(sel, family, dep.params if family == dep.family else {}, codes, scores,
                                alph, cols, n_tr, n_ho, y_tr)
            if pred is not None:
                P[r, held_pos, c] = pred
            if kind in ("pool",):
                continue
            ids = extend_ids(base_ids, codes[:n_tr + n_ho, j]) if kind == "add" else \
                base_ids if kind == "deployed" else dense_ids(codes[:n_tr + n_ho][:, cols])
            d = prefix_diagnostics(ids[:n_tr], ids[n_tr:], None, nominal_cells(alph[cols]))
            vproxy[c] += d.V_proxy
            n_pressure[c] += 1
    report(0.92, "paired risk differences")
    vproxy = np.where(n_pressure > 0, vproxy / np.maximum(n_pressure, 1), np.nan)
    y, groups = panel.labels[rows], panel.group_ids[rows]
    grouped = GroupedLosses(row_losses(sel.objective, y, P), groups)
    means = grouped.means()
    se_base = grouped.paired_se(0, means=means)
    se_abs = grouped.mean_se(means)
    limit = sel.k_limit(dep.family, len(names))

    def entry(c):
        kind, j, judges, _ = configs[c]
        diff, se = means[c] - means[0], se_base[c]
        lo, hi = diff - Z95 * se, diff + Z95 * se
        out = {"judge": names[j], "judges": [names[i] for i in judges], "K": len(judges),
               "risk": _num(means[c]), "risk_change": _num(diff), "se": _num(se),
               "ci": [_num(lo), _num(hi)],
               "verdict": _verdict(diff, lo, hi, means[0]) if np.isfinite(diff) else "not fitted",
               "V_proxy": _num(vproxy[c]), "pressure_change": _num(vproxy[c] - vproxy[0]),
               "beyond_menu_limit": bool(len(judges) > limit)}
        if not np.isfinite(diff):
            out["note"] = "the joint table is too large to index"
        return out
    add = sorted((entry(c) for c, cf in enumerate(configs) if cf[0] == "add"),
                 key=lambda e: (e["risk_change"] is None, e["risk_change"] or 0.0, e["judge"]))
    drop = sorted((entry(c) for c, cf in enumerate(configs) if cf[0] == "drop"),
                  key=lambda e: (e["risk_change"] is None, e["risk_change"] or 0.0, e["judge"]))
    deployed = {"judges": dep.names, "K": K, "family": dep.family, "params": dep.params, "note": dep.note,
                "risk": _num(means[0]), "risk_se": _num(se_abs[0]), "selection_risk": _num(dep.selection_risk),
                "V_proxy": _num(vproxy[0])}
    cvc = _calibrate_vs_curate(configs, grouped, means, se_abs, names, overall_top, fold_sets, dep, pool)
    unl = None
    if traffic is not None:
        report(0.95, "label-free view of the traffic's extra judges")
        unl = unlabelled_judges(dep, traffic, source="traffic")
    elif no_labels:
        outside = np.setdiff1d(np.flatnonzero(~panel.labelled), np.asarray(dep.blocks.T))
        if len(outside):
            report(0.95, "label-free view of the judges without labelled outputs")
            unl = unlabelled_judges(dep, panel.take(outside), source="the panel's unlabelled rows",
                                    extras=[names[j] for j in no_labels])
        else:
            unl = {"source": None, "judges": [{"judge": names[j], "risk_effect": NEEDS_LABELS} for j in no_labels],
                   "note": "these judges have outputs on no labelled and no unlabelled row"}
    settings = {"panel": panel.name, "protocol": sel.protocol, "objective": sel.objective,
                "folds": sel.folds if sel.protocol == "crossfit" else None,
                "repeats": R, "seed": sel.seed, "rows": int(len(rows)), "groups": int(grouped.n_groups),
                "n_fit": float(np.mean([len(t) for _, t, _ in folds])), "pool_judges": len(pool),
                "menu_k_limit": int(limit), "interval": "normal 95% from the group-clustered paired SE"}
    report(1.0, "done")
    return NextJudgePlan(settings=settings, deployed=deployed, add=add, drop=drop, calibrate_vs_curate=cvc,
                         unlabelled=unl, timings={"seconds": time.perf_counter() - t0})


def _curated(scores: np.ndarray, y: np.ndarray, pool: list, k: int) -> list:
    """The top-k pool judges by hard single-judge accuracy (ties: panel order), best first."""
    acc = hard_accuracy(scores[:, pool], y)
    order = np.lexsort((np.arange(len(pool)), -acc))
    return [pool[i] for i in order[:k]]


def _fit_predict(sel, family, params, codes, scores, alph, cols, n_tr, n_ho, y_tr):
    """Fit ``family`` on the first n_tr rows of the fold's matrices and predict the next n_ho
    (the rows after them are unlabelled traffic for label-free fits); None when a table over
    ``cols`` is too large to index."""
    cls = REGISTRY[family]
    pats = prefix_patterns(codes[:, cols], alph[cols]) if cls.needs_patterns else [None] * len(cols)
    if cls.needs_patterns and pats[-1] is None:
        return None
    X = PrefixFeatures(patterns=pats, scores=scores[:, cols])
    U = X.take(np.arange(n_tr + n_ho, X.n_rows)) if cls.uses_unlabelled and X.n_rows > n_tr + n_ho else None
    model = sel.family_instance(family, params).fit(X.take(np.arange(n_tr)), y_tr, U)
    return model.predict(X.take(np.arange(n_tr, n_tr + n_ho)))


def _calibrate_vs_curate(configs, grouped, means, se_abs, names, overall_top, fold_sets, dep, pool) -> dict:
    pool_cols = [c for c, cf in enumerate(configs) if cf[0] == "pool"]
    cur = len(configs) - 1
    best = min(pool_cols, key=lambda c: (not np.isfinite(means[c]), means[c]))
    se_pool = grouped.paired_se(best, means=means)
    diff = means[cur] - means[best]
    lo, hi = diff - Z95 * se_pool[cur], diff + Z95 * se_pool[cur]
    dd = means[0] - means[best]
    dlo, dhi = dd - Z95 * se_pool[0], dd + Z95 * se_pool[0]
    verdict = ("no clear winner" if abs(diff) <= risk_tolerance(means[best]) or not np.isfinite(diff)
               else "calibrate the pool" if lo > 0 else "curate" if hi < 0 else "no clear winner")
    agree = float(np.mean([s == frozenset(overall_top) for s in fold_sets]))
    return {
        "pool": {"family": configs[best][3], "n_judges": len(pool), "risk": _num(means[best]),
                 "se": _num(se_abs[best]),
                 "families": [{"family": configs[c][3], "risk": _num(means[c]), "se": _num(se_abs[c])}
                              for c in pool_cols],
                 "note": f"the best of {len(pool_cols)} scalar stackers over every judge on these held-out "
                         "rows (the pick makes it slightly optimistic)"},
        "curated": {"family": dep.family, "k": len(dep.judges), "judges": [names[j] for j in overall_top],
                    "risk": _num(means[cur]), "se": _num(se_abs[cur]), "fold_agreement": agree,
                    "rule": "top-k judges by single-judge accuracy (hard decision against the label) on "
                            "each fold's training rows, calibrated by the deployed family"},
        "difference": _num(diff), "se": _num(se_pool[cur]), "ci": [_num(lo), _num(hi)], "verdict": verdict,
        "deployed_minus_pool": {"difference": _num(dd), "se": _num(se_pool[0]), "ci": [_num(dlo), _num(dhi)]},
        "reading": "difference = curated risk - pool risk; above 0: calibrating the whole pool beats curating"}


# -- judges without labels -------------------------------------------------------------------
def unlabelled_judges(dep: Deployment, traffic: Panel, *, source: str = "traffic",
                      extras: list[str] | None = None) -> dict:
    """Label-free view of the judges ``extras`` (default: every judge of ``traffic`` the
    deployed predictor does not use): each one's table-pressure change on the traffic and its
    agreement with the deployed panel."""
    names = dep.names
    predictor = dep.predictor() if dep.predictor is not None else None
    deployed = set(names) | set(predictor.judges if predictor is not None else [])
    missing = [n for n in sorted(deployed, key=str) if n not in traffic.judge_names]
    if missing:
        raise FCPSError(f"the traffic lacks deployed judge {noun_for(len(missing), 'column')} " + ", ".join(map(repr, missing))
                        + ": it must hold the deployed judges plus the judges to consider")
    if extras is None:
        extras = [n for n in traffic.judge_names if n not in deployed]
    if not extras:
        raise FCPSError("the traffic holds no judge beyond the deployed ones ("
                        + ", ".join(names) + "): add the columns of the judges to consider")
    if traffic.n_rows == 0:
        raise FCPSError("the traffic has no rows")
    fit_rows = dep.calibration_rows
    cal = encode_panel(dep.panel.subset_judges(names), fit_rows, n_bins=dep.selector.n_bins)
    # the deployed judges' outputs read as scoring reads traffic: an output differing from a
    # calibration output only by case is that output (:mod:`fcps_core.deploy.outputs`)
    traffic, _ = read_known_outputs(traffic, {e.name: set(e.vocab) | set(e.scalar_map) for e in cal.encoders},
                                    {e.name: e.schema for e in cal.encoders})
    t_codes = np.column_stack([e.codes_for(traffic.judge(n)) for e, n in zip(cal.encoders, names)])
    t_scores = np.column_stack([e.scores_for(traffic.judge(n)) for e, n in zip(cal.encoders, names)])
    joint = dense_ids(np.vstack([cal.codes[fit_rows], t_codes]))
    n_cal, n = len(fit_rows), traffic.n_rows
    N_z = np.bincount(joint[:n_cal], minlength=int(joint.max()) + 1)
    z = joint[n_cal:]
    Nz_row = N_z[z]
    seen = (Nz_row > 0) & (t_codes >= 0).all(axis=1)
    u_base = 1.0 - float(seen.mean())
    zt = dense_ids(t_codes)
    cnt_z = np.bincount(zt)
    H_base = effective_support(cnt_z)
    p_base = H_base / n_cal + u_base
    pred = _deployed_predictions(dep, predictor, traffic, cal, t_codes, t_scores)
    d_pred = _decision(pred)
    out = []
    for e in extras:
        col = traffic.judge(e)
        enc = JudgeEncoder.fit(col, np.arange(n), np.full(n, 0.5), n_bins=dep.selector.n_bins)
        ce, se = enc.codes_for(col), enc.scores_for(col)
        ze = extend_ids(zt, ce)
        cnt_ze = np.bincount(ze)
        q = cnt_ze[ze] / cnt_z[zt]
        extra_unseen = float(np.mean(np.where(seen, (1.0 - q) ** Nz_row, 0.0)))
        H = effective_support(cnt_ze)
        p = H / n_cal + u_base + extra_unseen
        row = {"judge": e, "in_pool": e in dep.panel.judge_names, "schema": col.schema,
               "H_K": H, "H_K_deployed": H_base, "unseen_rate": u_base + extra_unseen,
               "pressure": p, "pressure_change": p - p_base, "risk_effect": NEEDS_LABELS}
        if col.schema == "categorical":
            row.update({"agreement_with_deployed": None, "agreement_by_judge": None,
                        "correlation_with_deployed": None,
                        "note": "categorical outputs have no label-free direction: no agreement"})
        else:
            d_e = _decision(se)
            row.update({"agreement_with_deployed": _agreement(d_e, d_pred),
                        "agreement_by_judge": {m: _agreement(d_e, _decision(t_scores[:, k]))
                                               for k, m in enumerate(names)},
                        "correlation_with_deployed": _correlation(se, pred)})
        out.append(row)
    out.sort(key=lambda r: (r["pressure_change"], r["judge"]))
    return {"source": source, "rows": int(n), "n_cal": int(n_cal), "deployed_judges": names,
            "H_K_deployed": H_base, "unseen_rate_deployed": u_base, "pressure_deployed": p_base,
            "judges": out,
            "pressure": "H / n_cal + unseen rate on the traffic; the extra judge's unseen share assumes "
                        "calibration rows would show its outputs as the traffic does, pattern by pattern",
            "agreement": "share of rows where both give a decision (score above or below 1/2) and agree"}


def _deployed_predictions(dep, predictor, traffic, cal, t_codes, t_scores) -> np.ndarray:
    """The deployed predictor on the traffic (the deployment's own, or the deployed
    configuration refitted on its calibration rows when none is at hand)."""
    if predictor is not None:
        return np.asarray(predictor.predict(traffic), dtype=float)
    fit_rows = dep.calibration_rows
    k = len(dep.judges)
    codes = np.vstack([cal.codes[fit_rows], t_codes])
    scores = np.vstack([cal.scores[fit_rows], t_scores])
    cols = list(range(k))
    pred = _fit_predict(dep.selector, dep.family, dep.params, codes, scores, cal.alphabet_sizes, cols,
                        len(fit_rows), len(t_codes), dep.panel.labels[fit_rows])
    return np.full(len(t_codes), np.nan) if pred is None else pred


def _decision(x: np.ndarray) -> np.ndarray:
    return np.where(x > 0.5, 1.0, np.where(x < 0.5, 0.0, np.nan))


def _agreement(a: np.ndarray, b: np.ndarray) -> float | None:
    both = ~np.isnan(a) & ~np.isnan(b)
    return float(np.mean(a[both] == b[both])) if both.any() else None


def _correlation(a: np.ndarray, b: np.ndarray) -> float | None:
    ok = np.isfinite(a) & np.isfinite(b)
    if ok.sum() < 3 or np.ptp(a[ok]) == 0 or np.ptp(b[ok]) == 0:
        return None
    return float(np.corrcoef(a[ok], b[ok])[0, 1])
