"""What a selection produced: the candidates with their risks and diagnostics, the choice,
the regime, the research-test audit, per-cell tables and the deployable predictor."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..measures.diagnostics import PrefixDiagnostics, losses, theorem1_bound, validation_scale
from ..data.encoding import EncodedPanel, pattern_labels
from ..families import REGISTRY, PrefixFeatures
from ..families.base import one_blas_thread
from .judges_report import judges_report
from ..data.panel import Panel
from ..measures.judge_paths import JudgePath
from ..data.splits import Blocks
from .cost_report import cost_report
from .views import PatternCache, ViewCache, view_kind, weighted_mean_loss


@dataclass
class Candidate:
    """One (path, K, family) entry of the menu with its validation and diagnostic record."""

    index: int
    path_rule: str
    path_label: str
    judges: list[str]
    judge_idx: tuple[int, ...]
    K: int
    family: str
    params: dict
    grid_size: int
    val_mse: float
    val_nll: float
    val_risk: float
    val_se: float
    diagnostics: PrefixDiagnostics | None
    test_mse: float | None = None
    test_nll: float | None = None
    stability: float | None = None   # crossfit: mean Jaccard of the fold judge sets to the deployed one
    #: crossfit: the repeats whose folds fitted it (1 when the screen kept its first repeat's
    #: predictions, :mod:`.screening`)
    repeats: int | None = None

    def to_dict(self) -> dict:
        d = {"index": self.index, "path_rule": self.path_rule, "path": self.path_label or self.path_rule,
             "judges": self.judges, "K": self.K, "family": self.family, "params": self.params,
             "grid_size": self.grid_size, "val_mse": self.val_mse, "val_nll": self.val_nll,
             "val_risk": self.val_risk, "val_se": self.val_se,
             "test_mse": self.test_mse, "test_nll": self.test_nll}
        if self.stability is not None:
            d["judge_set_stability"] = self.stability
        if self.repeats is not None:
            d["repeats"] = self.repeats
        diag = self.diagnostics.to_dict() if self.diagnostics else {
            k: None for k in ("Q_K", "S_K", "H_K", "unseen_val", "unseen_test", "V_cell",
                              "V_proxy", "cell_pressure_sum")}
        d.update(diag)
        return d


def predict_on_rows(model, cand: Candidate, encoded: EncodedPanel, patterns: PatternCache,
                    rows: np.ndarray) -> np.ndarray:
    """A candidate's model on ``rows``: the joint-pattern ids are formed on those rows
    alone, and only for families that read them (the others see the scores)."""
    cols = list(cand.judge_idx)
    ids = (patterns.on_rows(cand.judge_idx, rows) if REGISTRY[cand.family].needs_patterns
           else [None] * len(cols))
    return model.predict(PrefixFeatures(patterns=ids, scores=encoded.scores[np.ix_(rows, cols)]))


def validation_prediction_matrix(panel: Panel, V: np.ndarray, encoded: EncodedPanel, patterns: PatternCache,
                                 candidates: list, models: dict, predictions: dict, *, compress: bool = True):
    """(1, n_V, candidates) validation predictions of the split protocol's candidates,
    stored once per distinct V row (every judge's output and the label, see
    :mod:`.folds`): an :class:`.folds.ExpandedPredictions` that reads as the raw array.
    With ``compress=False`` every V row is its own distinct row. ``predictions`` are those
    made while fitting (:mod:`.path_fits`); other candidates are predicted here."""
    from .folds import ExpandedPredictions, distinct_key, distinct_rows, label_digits, output_digits
    if compress and len(V):
        key, bound = distinct_key(output_digits(encoded, V) + [label_digits(panel.labels[V])], len(V))
        rep, _, inverse = distinct_rows(key, bound)
    else:
        rep, inverse = np.arange(len(V)), None
    # one stored column per model (candidates sharing a model share it)
    column: dict[int, int] = {}
    col = np.array([column.setdefault(id(models[c.index]), len(column)) for c in candidates], dtype=np.int64)
    out = np.empty((1, len(column), len(rep)))            # a stored column per row of memory
    done = set()
    rows_of_view: dict[int, np.ndarray] = {}               # the views' rows of each rep, per view
    for c in candidates:
        k = int(col[c.index])
        if k not in done:
            done.add(k)
            stored = predictions.get(c.index, {}).get("V")
            if stored is not None:
                inv = stored.view.inverse
                if inv is None:
                    out[0, k] = stored.values[rep]
                else:
                    at = rows_of_view.get(id(stored.view))
                    if at is None:
                        at = rows_of_view[id(stored.view)] = inv[rep]
                    out[0, k] = stored.values[at]
            else:
                out[0, k] = predict_on_rows(models[c.index], c, encoded, patterns, V[rep])
    return ExpandedPredictions(out.transpose(0, 2, 1), inverse, col)


def release_validation_sources(predictions: dict, views: "ViewCache | None") -> None:
    """Once the held-out matrix holds every candidate's V predictions: drop the copies
    kept per view while fitting and the fit-time views of M, V and the unlabelled rows
    (T's stay for the audit). Later readers predict again
    (:meth:`SelectionResult.predict_rows`)."""
    for stored in predictions.values():
        stored.pop("V", None)
    if views is not None:
        views.release(("M", "V", "rest"))


@dataclass(frozen=True, eq=False)
class SelectionResult:
    """Everything a selection produced: candidates, the choice, diagnostics, the predictor.

    Under the split protocol candidates are fitted on M (``fit_rows``) and validated on V
    (``val_rows``); under the cross-fitted protocol their risks are out-of-fold risks over
    the deployable rows S+M+V, and ``models`` are the candidates refitted on all of them
    (``fit_rows`` = ``val_rows`` = the deployable rows; ``protocol_info`` says how).

    Frozen: a protocol (:mod:`.split_protocol`, :mod:`.crossfit`) builds it with the choice
    made (:class:`.choice.ChoiceOutcome`) and adds the audit, the assessment and the
    frontier as new values (``dataclasses.replace``); no field holds a placeholder that a
    later step patches. ``selector`` is the :class:`.selector.FCPSSelector` whose settings
    produced it (read only).
    """

    panel: Panel
    blocks: Blocks
    selector: "FCPSSelector"
    encoded: EncodedPanel
    paths: list[JudgePath]
    candidates: list[Candidate]
    models: dict
    menu_size: int
    selected_index: int
    guard: dict | None
    feature_cache: "PatternCache"               # judges -> joint-pattern ids of every row, on demand
    views: "ViewCache | None" = None
    regime: dict = field(default_factory=dict)
    timings: dict = field(default_factory=dict)
    protocol_info: dict | None = None           # None = the paper's split protocol
    fit_rows: np.ndarray | None = None
    val_rows: np.ndarray | None = None
    n_fit: float | None = None                  # rows each candidate was fitted on (mean over folds)
    members: list[int] | None = None            # an average: the averaged candidates
    choice_info: dict = field(default_factory=dict)
    baselines: list = field(default_factory=list)
    deployed_risk: dict | None = None
    tie: dict | None = None
    selected_val: dict | None = None            # risks of an average (not one candidate)
    selected_test: dict | None = None
    heldout: object | None = None               # held-out predictions (crossfit.HeldOut)
    #: member list -> (models, distinct weights) (:func:`.members.deployed_weights`), one
    #: dict shared by every ``replace`` of this result
    weights_memo: dict = field(default_factory=dict, repr=False)
    #: candidate index -> block ('V', 'T') -> predictions made while fitting (path_fits)
    predictions: dict = field(default_factory=dict)
    #: the deployed-risk bootstrap's draws and in-bag choice (honesty._bbc), read by the frontier
    bootstrap: dict | None = field(default=None, repr=False)
    #: the best deployable predictor at every panel size and cost level (selection/frontier.py)
    frontier: list | None = None
    #: the judges report's panel part computed ahead (:class:`.judges_report.PanelReport`:
    #: the cross-fitted protocol's fold workers), or None: ``to_dict`` computes it
    panel_report: object | None = field(default=None, repr=False)

    def __post_init__(self):
        # the split protocol's defaults, set once while the result is being built
        if self.fit_rows is None:
            object.__setattr__(self, "fit_rows", self.blocks.M)
        if self.val_rows is None:
            object.__setattr__(self, "val_rows", self.blocks.V)
        if self.n_fit is None:
            object.__setattr__(self, "n_fit", float(len(self.fit_rows)))

    @property
    def protocol(self) -> str:
        return "split" if self.protocol_info is None else self.protocol_info["protocol"]

    @property
    def selected(self) -> Candidate:
        return self.candidates[self.selected_index]

    @property
    def tied_members(self) -> list[int]:
        """The candidates the choice averaged, by index (the selected one alone for one
        model): every tied member, before :meth:`deployed_weights` counts those that refit
        to one model once. Risks, estimates and their corrections read these."""
        return list(self.members or [self.selected_index])

    @property
    def deployed_members(self) -> list[Candidate]:
        """The distinct models the deployed predictor averages (one unless the choice
        averages tied candidates), in :meth:`deployed_weights`' order: the judges they call
        are the judges the predictor calls."""
        return [self.candidates[i] for i, _ in self.deployed_weights()]

    def deployed_weights(self) -> list[tuple[int, float]]:
        """The deployed predictor's distinct models as ``[(candidate index, weight)]``: the
        selected candidate with weight 1, or the average's members with tied candidates
        that compute the same refitted model counted once, weighted by their share
        (:func:`.members.deployed_weights`; formed once per member list, :attr:`weights_memo`)."""
        from .members import deployed_weights
        return deployed_weights(self, self.tied_members)

    @property
    def n_val(self) -> int:
        return len(self.val_rows)

    @property
    def validation_scale(self) -> float:
        return validation_scale(self.menu_size, self.n_val)

    @property
    def theorem1_bound(self) -> float:
        return theorem1_bound(self.menu_size, self.n_val)

    def features(self, cand: Candidate) -> PrefixFeatures:
        ids = self.feature_cache[cand.judge_idx]
        return PrefixFeatures(patterns=ids, scores=self.encoded.scores[:, list(cand.judge_idx)])

    def predict_rows(self, cand: Candidate, rows: np.ndarray) -> np.ndarray:
        return predict_on_rows(self.models[cand.index], cand, self.encoded, self.feature_cache, rows)

    def predict_deployed(self, rows: np.ndarray) -> np.ndarray:
        """The deployed predictor's predictions (the distinct models' weighted average for an average)."""
        weighted = self.deployed_weights()
        if len(weighted) == 1:
            return self.predict_rows(self.candidates[weighted[0][0]], rows)
        return np.sum([w * self.predict_rows(self.candidates[i], rows) for i, w in weighted], axis=0)

    def val_prediction_matrix(self):
        """(1, n_V, candidates) validation predictions of the split protocol's candidates
        (:func:`validation_prediction_matrix`)."""
        return validation_prediction_matrix(self.panel, self.blocks.V, self.encoded, self.feature_cache,
                                            self.candidates, self.models, self.predictions,
                                            compress=getattr(self.selector, "compress", True))

    def release_validation_sources(self) -> None:
        """Drop the fit-time copies of the validation predictions and views
        (:func:`release_validation_sources`)."""
        release_validation_sources(self.predictions, self.views)

    @one_blas_thread      # its products are vector dots: a second BLAS thread waits on a busy core
    def audit(self) -> dict | None:
        """Research-test audit, after the selection is fixed: records every candidate's T
        metrics on it (``test_mse``, ``test_nll``) and returns the deployed average's own
        (``selected_test``; None for a single candidate or without T)."""
        T = self.blocks.T
        if len(T) == 0:
            return None
        views = self.views or ViewCache(self.encoded, {"M": self.fit_rows, "V": self.val_rows,
                                                       "T": T, "rest": np.zeros(0, dtype=np.int64)},
                                        self.panel.labels, self.feature_cache, False)
        done: dict[int, tuple[float, float]] = {}
        for c in self.candidates:
            mid = id(self.models[c.index])
            if mid not in done:
                stored = self.predictions.get(c.index, {}).get("T")
                if stored is not None:
                    p, y, w = stored.values, stored.view.y, stored.view.X.weight
                else:
                    vT = views.get(c.judge_idx, "T", view_kind(REGISTRY[c.family]))
                    p, y, w = self.models[c.index].predict(vT.X), vT.y, vT.X.weight
                done[mid] = (weighted_mean_loss(losses("mse", y, p), w),
                             weighted_mean_loss(losses("nll", y, p), w))
            c.test_mse, c.test_nll = done[mid]
        if not self.members:
            return None
        p = self.predict_deployed(T)
        y = self.panel.labels[T]
        return {"test_mse": float(np.mean(losses("mse", y, p))), "test_nll": float(np.mean(losses("nll", y, p)))}

    # -- per-cell audit ------------------------------------------------------------------
    def cell_table(self, cand: Candidate | int | None = None, *, limit: int | None = None) -> list[dict]:
        """Per-pattern audit of a candidate's prefix: pattern, N_z (M), mean label (M),
        prediction, and V/T frequencies; sorted by N_z descending, unseen cells last."""
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
        # every pattern's counts and means at once (bincounts over the pattern's rank), not a
        # scan of the rows per pattern
        uniq, first, rank = np.unique(ids[rows_all], return_index=True, return_inverse=True)
        rank = rank.reshape(-1)
        Z = len(uniq)
        codes = self.encoded.codes[:, list(cand.judge_idx)]
        encoders = [self.encoded.encoders[j] for j in cand.judge_idx]
        pred_all = model.predict(feats.take(rows_all))
        pred_mean = np.bincount(rank, weights=pred_all, minlength=Z) / np.bincount(rank, minlength=Z)

        def count(rows, weights=None):
            return np.bincount(np.searchsorted(uniq, ids[rows]), weights=weights, minlength=Z)
        N_z = count(fit_rows)
        label_sum = count(fit_rows, y[fit_rows])
        in_val = count(val_rows)
        in_test = count(b.T) if len(b.T) else None
        n_V, n_T = max(len(val_rows), 1), max(len(b.T), 1)
        # order: seen first, larger N_z, larger V frequency, then the pattern's label; only
        # the patterns that can reach the first ``limit`` places are labelled
        order = np.lexsort((-in_val, -N_z, N_z == 0))
        within = order
        if limit and limit < Z:
            # the order is by those three keys, so the patterns tied with the limit-th are
            # the ones right after it
            k = order[limit - 1]
            tied = (N_z[order[limit:]] == N_z[k]) & (in_val[order[limit:]] == in_val[k])
            within = order[:limit + int(np.count_nonzero(tied))]
        out = []
        for z in within:
            n = int(N_z[z])
            out.append({
                "pattern": pattern_labels(codes[rows_all[first[z]]], encoders),
                "N_z": n,
                "mean_label": float(label_sum[z] / n) if n else None,
                "prediction": float(pred_mean[z]),
                "freq_val": float(in_val[z] / n_V),
                "freq_test": float(in_test[z] / n_T) if in_test is not None else None,
                "unseen": n == 0,
            })
        out.sort(key=lambda d: (d["unseen"], -d["N_z"], -d["freq_val"], d["pattern"]))
        return out[:limit] if limit else out

    # -- deployment ----------------------------------------------------------------------
    def predictor(self):
        """The deployable predictor of the selected candidate under the refit policy."""
        from ..deploy.predictor import FCPSPredictor
        return FCPSPredictor.from_selection(self)

    # -- reporting -----------------------------------------------------------------------
    def selected_dict(self) -> dict:
        """The deployed choice: one candidate, or the average over ``members``."""
        sel = self.selected
        out = {"path_rule": sel.path_rule, "path": sel.path_label or sel.path_rule,
               "judges": sel.judges, "K": sel.K, "family": sel.family,
               "params": sel.params, "val_mse": sel.val_mse, "val_nll": sel.val_nll,
               "test_mse": sel.test_mse, "test_nll": sel.test_nll, "index": sel.index}
        if self.members:
            names = self.panel.judge_names
            union = sorted({j for c in self.deployed_members for j in c.judge_idx})
            from ..defaults import TIE_AVERAGE
            weighted = [(self.candidates[i], w) for i, w in self.deployed_weights()]
            out.update({"family": TIE_AVERAGE, "path_rule": None, "path": TIE_AVERAGE,
                        "judges": [names[j] for j in union], "K": len(union), "params": {},
                        "members": [{"index": c.index, "path_rule": c.path_rule,
                                     "path": c.path_label or c.path_rule, "judges": c.judges,
                                     "K": c.K, "family": c.family, "params": c.params,
                                     "val_risk": c.val_risk, "weight": w}
                                    for c, w in weighted],
                        **(self.selected_val or {}), **(self.selected_test or {})})
        if sel.stability is not None:
            out["judge_set_stability"] = sel.stability
        return out

    def split_dict(self) -> dict:
        if self.protocol_info is not None:
            return {**self.protocol_info, "n_fit": self.n_fit, "seed": self.blocks.seed,
                    "source": self.blocks.source,
                    "groups": {"deployable": int(len(set(self.panel.group_ids[self.fit_rows]))),
                               "T": int(len(set(self.panel.group_ids[self.blocks.T])))}}
        return {**self.blocks.sizes(), "protocol": "split", "n_fit": int(len(self.fit_rows)),
                "seed": self.blocks.seed,
                "source": self.blocks.source,
                "groups": {b: int(len(set(self.panel.group_ids[getattr(self.blocks, b)])))
                           for b in ("S", "M", "V", "T")}}

    def to_dict(self, *, cells_limit: int = 200) -> dict:
        sel = self.selected
        s = self.selector
        return {
            "panel": {"name": self.panel.name, "rows": self.panel.n_rows,
                      "labelled": self.panel.n_labelled, "judges": self.panel.judge_names,
                      "schema": self.panel.schema,
                      "judge_schemas": {j.name: j.schema for j in self.panel.judges},
                      "label_note": self.panel.label_note or None},
            "protocol": self.protocol,
            "choice": s.choice,
            "split": self.split_dict(),
            "menu": {"paths": list(s.paths), "families": list(s.families),
                     "k_max": s.k_max, "table_k_max": s.table_k_max,
                     "pairwise_k_max": s.pairwise_k_max, "alpha": s.alpha,
                     "fallback": s.fallback, "objective": s.objective,
                     "guard": s.guard, "refit": s.refit, "n_bins": s.n_bins,
                     "single_judge_candidates": bool(getattr(s, "single_judge_candidates", False)),
                     "stable_judge_sets": bool(getattr(s, "stable_judge_sets", False)),
                     # the measured, not adopted options (FCPSSelector): what a limit may choose
                     # and how the estimates are levelled
                     "random_under_limits": bool(getattr(s, "random_under_limits", True)),
                     "info_first_under_limits": bool(getattr(s, "info_first_under_limits", False)),
                     "full_limit_sets": bool(getattr(s, "full_limit_sets", False)),
                     "limit_rule_choice": bool(getattr(s, "limit_rule_choice", False)),
                     "limit_escape_z": getattr(s, "limit_escape_z", None),
                     "own_set_level": bool(getattr(s, "own_set_level", False))},
            "menu_size": self.menu_size,
            "n_candidates": len(self.candidates),
            "validation_scale": self.validation_scale,
            "theorem1_bound": self.theorem1_bound,
            "selected": self.selected_dict(),
            "guard": self.guard,
            "deployed_risk": self.deployed_risk,
            "baselines": self.baselines,
            "tie": self.tie,
            "choice_info": self.choice_info,
            "frontier": self.frontier,
            "costs": cost_report(self),
            "paths": [{"rule": p.rule, "label": p.label or p.rule,
                       "judges": [self.panel.judge_names[j] for j in p.judges],
                       "prefix_sizes": list(p.prefix_sizes) if p.rule == "cfps" else None}
                      for p in self.paths],
            "candidates": [c.to_dict() for c in self.candidates],
            "regime": self.regime,
            "cells": self.cell_table(sel, limit=cells_limit),
            "judges_report": judges_report(self),   # its drop-one rows replay the rule, no refit
            "timings": self.timings,
        }
