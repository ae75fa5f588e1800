"""The menu of candidates and one pass of fits over it (paper Eq. eq:general-selection).

The menu is paths x K x families: the path rules order the judges (built on the selection
rows), every prefix size K up to the family's limit (:func:`k_limit`) and every family (with
its hyperparameter grid) is a candidate. :func:`fit_menu` makes one pass over it on a given
row assignment (:class:`MenuRows`): encoders fitted on the fitting rows, paths on the path
rows, every candidate fitted on the fitting rows and (optionally) scored on the scored rows
(the split protocol's M, S and V). It knows nothing of a
protocol: the split protocol (:mod:`.split_protocol`) calls it once on the paper's blocks,
the cross-fitted protocol (:mod:`.crossfit`) once per fold and once on all deployable
labels. ``settings`` is the menu's configuration (an :class:`.selector.FCPSSelector`, read
only: its fields and its settings-derived helpers ``k_limit``, ``family_grid``,
``family_fixed``, ``family_instance``); nothing here calls back into a protocol or a choice.

Distinct rows. For a prefix whose judges are all discrete, a row's scalar scores are a
function of its joint pattern, so every family sees block M as its distinct
(pattern, label) rows with their counts (``PrefixFeatures.weight``), V and T are scored the
same way with count-weighted losses, and the unlabelled traffic as distinct patterns.
Each family's weighted fit equals its fit on the expanded rows (tests check both and the
whole selection with ``compress=False``), so this changes cost, not results.

Schema-level preprocessing (output vocabularies, the observed rubric range) reads the judge
outputs of all rows, never labels. :func:`checked_panel` holds the block checks both
protocols share.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..measures.diagnostics import PrefixDiagnostics, argmin_with_ties, ids_dense, prefix_diagnostics
from ..data.encoding import EncodedPanel, encode_panel, nominal_cells
from ..errors import MenuError, SplitError
from ..families import REGISTRY
from ..families.base import one_blas_thread, small_pages
from ..data.panel import Panel
from ..measures.judge_paths import SINGLE_JUDGE_RULE, JudgePath, build_paths, dense_ranks, single_judge_paths
from ..data.splits import Blocks, check_blocks
from .path_fits import fit_joint_families, fit_path_families
from .result import Candidate
from .views import (PatternCache, ViewCache, prediction_record, record_se, unscored_record, validation_record,
                    view_kind)


@dataclass
class MenuFit:
    """One pass over the menu: encoders, paths, candidates and their fitted models."""

    encoded: EncodedPanel
    paths: list
    candidates: list
    models: dict
    menu_size: int
    pattern_cache: PatternCache     # joint-pattern ids of any prefix, on demand
    views: ViewCache
    predictions: dict = field(default_factory=dict)   # candidate index -> block -> BlockPrediction
    #: with ``only``: the keys the whole menu offers on these rows (fitted or not), which a
    #: screened candidate must be among to stay in the menu (:mod:`.screening`)
    offered: frozenset | None = None


@dataclass(frozen=True)
class MenuRows:
    """The rows one pass of fits reads, by role (row indices into the panel).

    The split protocol passes its blocks (``MenuRows.of_blocks``: paths on S, fits on M,
    scores on V, the audit on T); a cross-fitted fold passes its training rows as both the
    path rows and the fitting rows and its held-out rows as the scored rows, with no audit
    rows; the final refit fits on every deployable row and scores none. ``unlabelled`` is
    the traffic label-free families (ds_jury's EM) may read: never a scored or audit row.
    """

    path_rows: np.ndarray       # the path rules' selection rows
    fit: np.ndarray             # encoders and every candidate are fitted here
    scored: np.ndarray          # rows predicted while fitting (risks, diagnostics' frequencies)
    audit: np.ndarray           # the research test rows (only the after-the-fact audit reads them)
    unlabelled: np.ndarray      # unlabelled traffic for label-free fits

    @classmethod
    def of_blocks(cls, blocks: Blocks, unlabelled: np.ndarray) -> "MenuRows":
        return cls(path_rows=blocks.S, fit=blocks.M, scored=blocks.V, audit=blocks.T, unlabelled=unlabelled)

    @classmethod
    def of_map(cls, rows: dict) -> "MenuRows":
        """From the block-letter map the views use (S, M, V, T, rest)."""
        return cls(path_rows=rows["S"], fit=rows["M"], scored=rows["V"], audit=rows["T"], unlabelled=rows["rest"])

    def block_map(self) -> dict[str, np.ndarray]:
        """The block-letter map the views (:class:`.views.ViewCache`) are keyed by: S the
        path rows, M the fitting rows, V the scored rows, T the audit rows, rest the
        unlabelled traffic."""
        return {"S": self.path_rows, "M": self.fit, "V": self.scored, "T": self.audit, "rest": self.unlabelled}


def checked_panel(panel: Panel, blocks: Blocks, *, crossfit: bool = False) -> Panel:
    """Block checks shared by both protocols; returns the panel with rubric labels on
    the deployable blocks' scale. Cross-fitting pools S, M and V, so only their union
    must be non-empty."""
    for b in ("S", "M", "V"):
        if not crossfit and len(getattr(blocks, b)) == 0:
            raise SplitError(f"block {b} is empty: FCPS needs selection, calibration and validation labels")
    check_blocks(panel, blocks)
    panel = deployable_label_scale(panel, blocks)
    y = panel.labels
    for b in ("S", "M", "V", "T"):
        rows = getattr(blocks, b)
        if len(rows) and np.isnan(y[rows]).any():
            raise SplitError(f"block {b} contains unlabelled rows")
    return panel


def deployable_label_scale(panel: Panel, blocks: Blocks) -> Panel:
    """Integer rubric labels normalised by their *observed* range used every row, T included.
    Re-scale them to the range of the deployable blocks S, M, V (an affine map of the stored
    labels, so no raw labels are needed); T labels outside that range are clipped."""
    if not panel.label_range_inferred:
        return panel
    rows = np.concatenate([blocks.S, blocks.M, blocks.V])
    lo, hi = float(np.min(panel.labels[rows])), float(np.max(panel.labels[rows]))
    if (lo, hi) == (0.0, 1.0) or hi <= lo:
        return panel
    return panel.with_labels(np.clip((panel.labels - lo) / (hi - lo), 0.0, 1.0))


def menu_key(path_name: str, K: int, family: str, params: dict) -> tuple:
    """A candidate's key, the same in every fold's menu and the final refit's: (path label
    or rule, prefix size K, family, sorted hyperparameters)."""
    return (path_name, K, family, tuple(sorted(params.items())))


def key_family(key: tuple) -> str:
    """The family of a :func:`menu_key` key."""
    return key[2]


def families_of(keys) -> set:
    """The families a refit of candidates ``keys`` (:func:`menu_key` keys) fits: theirs,
    and the families whose fits they share (a residual's base), so each is fitted exactly
    as in the whole menu."""
    out = set()
    for key in keys:
        family = key_family(key)
        out.add(family)
        if REGISTRY[family].shares_base_models:
            out.update(v for name, v in key[3] if name == "base")
    return out


@small_pages()      # also in the cross-fitted protocol's worker processes
@one_blas_thread    # thin products and vector dots: a second BLAS thread waits on a busy core
def fit_menu(settings, panel: Panel, rows: "MenuRows | dict", *, expand_grid: bool = False,
             score_val: bool = True, progress: Callable[[float, str], None] | None = None,
             only: "frozenset | None" = None, diagnostics: bool | None = None,
             fixed_paths: "list | None" = None, encoded: "EncodedPanel | None" = None,
             whole_paths: bool = True) -> "MenuFit":
    """One pass over the menu of ``settings`` on ``rows`` (:class:`MenuRows`, or its block
    map): encoders fitted on the fitting rows, paths built on the path rows, every
    candidate fitted on the fitting rows and scored on the scored rows; the audit rows only
    feed the (after-the-fact) audit views, the unlabelled rows the label-free fits.
    ``expand_grid`` makes every hyperparameter grid point its own candidate (the
    cross-fitted protocol) instead of tuning the grid on the scored rows;
    ``score_val=False`` skips their risks (the cross-fitted protocol scores held-out rows
    itself; they still feed the diagnostics' frequencies). ``only`` (:func:`menu_key`
    keys, as :func:`.crossfit.candidate_key` makes them): the candidates wanted, for a
    refit that only predicts them (the learning-curve correction's half-size refits). The families fitted one prefix at a time
    then fit only the wanted prefixes and parameters, and no diagnostics are computed
    (unless ``diagnostics``: the later repeats' folds after the screen, :mod:`.screening`);
    the families fitted along a path still fit every prefix of it (a path fit's prefixes
    share work), so every wanted model is the one the full menu fits. Below, rows go by
    the views' block letters (:meth:`MenuRows.block_map`). ``fixed_paths``: these
    :class:`JudgePath` orderings instead of the ones the path rules build (no path is built,
    no single-judge path joins): the own-set refits of :class:`.crossfit.OwnSetLevels`.
    ``encoded``: the panel encoded with encoders fitted on the fitting rows with
    ``settings.n_bins`` (what this call would make), when several refits on the same rows
    share one. ``whole_paths=False``: a refit whose paths are not reported (the
    learning-curve correction's half-size refits) orders only the judges of the prefixes up
    to ``settings.k_max`` (:func:`.judge_paths.build_paths`' ``prefix_max``): no longer
    prefix is fitted, and each one fitted is the whole path's."""
    with_diagnostics = only is None if diagnostics is None else diagnostics
    rows = (rows if isinstance(rows, MenuRows) else MenuRows.of_map(rows)).block_map()
    report = progress or (lambda frac, msg: None)
    y = panel.labels
    encoded = encode_panel(panel, rows["M"], n_bins=settings.n_bins) if encoded is None else encoded
    alph = encoded.alphabet_sizes
    report(0.02, "building judge paths on the selection rows")
    paths = list(fixed_paths) if fixed_paths is not None else build_paths(
        list(settings.paths), encoded.codes[rows["S"]], y[rows["S"]], len(rows["M"]),
        table_k_max=min(settings.table_k_max, settings.k_max or settings.table_k_max),
        seed=settings.seed, penalty=settings.complexity_penalty, cfps_max_paths=settings.cfps_max_paths,
        costs=None if settings.judge_costs is None else
        np.array([settings.judge_costs[j]["cost"] for j in panel.judge_names]),
        prefix_max=None if whole_paths else settings.k_max)
    names = panel.judge_names
    # the fixed single-judge candidates ("judge j alone", :func:`single_judge_paths`) join
    # the fits but not the returned paths (they are no ordering of the pool)
    menu_paths = paths + (single_judge_paths(len(names)) if getattr(settings, "single_judge_candidates", False)
                          and fixed_paths is None else [])
    work = []  # (path, K)
    for path in menu_paths:
        top = max(settings.k_limit(f, len(path.judges)) for f in path_families(settings, path))
        for K in path.prefix_sizes:
            if K <= top:
                work.append((path, K))
    if not work:
        raise MenuError("no candidate fits the K limits; raise --k-max")
    fits: dict[tuple, dict] = {}        # cache: (judges, family, params) -> fitted record
    diag_cache: dict[tuple, PrefixDiagnostics | None] = {}
    pattern_cache = PatternCache(encoded)
    views = ViewCache(encoded, rows, y, pattern_cache, settings.compress)
    record = validation_record if score_val else unscored_record
    candidates: list[Candidate] = []
    models: dict[int, object] = {}
    predictions: dict[int, dict] = {}
    menu_size = 0
    has_T = len(rows["T"]) > 0
    # The scalar families fit every prefix of a path at once (nested features); the
    # prefixes each needs per path (a prefix shared with an earlier path is fitted once).
    path_sizes, seen = {}, set()
    # with ``only``, the families fitted are those of the wanted keys and the families
    # whose fits they share; the others are only listed as offered
    fitted_families = None if only is None else families_of(only)
    for path in dict.fromkeys(p for p, _ in work):
        sizes = [k for p, k in work if p is path]
        path_sizes[path] = {}
        for f in path_families(settings, path):
            if REGISTRY[f].needs_patterns or (fitted_families is not None and f not in fitted_families):
                continue
            need = [k for k in sizes if k <= settings.k_limit(f, len(path.judges))
                    and (path.judges[:k], f) not in seen]
            seen.update((path.judges[:k], f) for k in need)
            path_sizes[path][f] = need
    # the judges each path's views span: the longest prefix any family fits along it, as
    # the whole menu (or the families of ``only``) fits it, whatever is cut below
    view_len = {path: max((max(s) for s in sizes.values() if s), default=0) for path, sizes in path_sizes.items()}
    path_keep = None
    if only is not None:
        path_sizes, path_keep = _wanted_path_sizes(settings, path_sizes, work, only)
    report(0.04, "fitting the label-free families along every path")
    prefitted = fit_joint_families(settings, views, [(p.judges, s) for p, s in path_sizes.items()],
                                   keep=None if path_keep is None else [path_keep[p] for p in path_sizes])
    current_path = patterns = ranks = None
    offered = False             # whether the full menu has a candidate (``only`` may want none of them)
    offered_keys: set = set()   # with ``only``: every key the full menu has
    for w, (path, K) in enumerate(work):
        report(0.05 + 0.95 * w / len(work), f"{path.label or path.rule}: K={K}")
        if path is not current_path:
            # The last path's pattern ids can go before this path's are made, and so can
            # the fitting views of M and the unlabelled rows: every candidate and
            # diagnostic of their prefixes is fitted and cached (a later path sharing a
            # prefix reuses those records, not the views).
            patterns = None
            views.release(("M", "rest"))
            current_path = path
            ranks = PatternRanks(encoded.codes, path.judges) if with_diagnostics else None
            fit_path_families(settings, views, path.judges, path_sizes[path], fits,
                              score_val=score_val, has_T=has_T, prefitted=prefitted, view_len=view_len[path],
                              keep=None if path_keep is None else path_keep[path])
        judges = path.judges[:K]
        patterns = _patterns(path, K, pattern_cache)

        def diag_of(judges=judges, K=K, patterns=patterns, ranks=ranks):
            """The prefix's diagnostics, formed when a candidate of it is first offered (a
            refit restricted by ``only`` forms none for prefixes it offers nothing of)."""
            if judges not in diag_cache:
                diag_cache[judges] = None if not with_diagnostics else \
                    _diagnostics(patterns, views, judges, has_T, alph[list(judges)], K <= settings.table_k_max,
                                 ranks=ranks)
            return diag_cache[judges]
        for family in path_families(settings, path):
            cls = REGISTRY[family]
            if K > settings.k_limit(family, len(path.judges)):
                continue
            if cls.needs_patterns and patterns[K - 1] is None:
                continue
            grid = settings.family_grid(family)
            offered = True
            if only is not None:
                keys_here = [menu_key(path.label or path.rule, K, family, p) for p in grid]
                offered_keys.update(keys_here)
                grid = [p for p, k in zip(grid, keys_here) if k in only]
                if not grid:
                    continue
            keys = [(judges, family, tuple(sorted(p.items()))) for p in grid]
            todo = [p for p, k in zip(grid, keys) if k not in fits]
            if todo:
                kind = view_kind(cls)
                vM, vV = views.get(judges, "M", kind), views.get(judges, "V", kind)
                vR = views.get(judges, "rest", kind) if cls.uses_unlabelled else None
                extra = {}
                if cls.shares_base_models:
                    # The residual bases are the scalar families' own fits: share them.
                    extra["base_models"] = {
                        b: _fit_one(settings, fits, views, judges, b, record)["model"]
                        for b in dict.fromkeys(p["base"] for p in todo)}
                fitted = cls.fit_grid(todo, vM.X, vM.y,
                                      vR.X if cls.uses_unlabelled else None,
                                      **settings.family_fixed(family), **extra)
                # each model's V predictions (as ``record`` makes them: unscored, a V without
                # rows is not predicted), the grid's shared parts computed once
                predicted = (cls.predict_grid(fitted, vV.X) if score_val or vV.X.n_rows
                             else [None] * len(fitted))
                for params, model, pV in zip(todo, fitted, predicted):
                    fits[(judges, family, tuple(sorted(params.items())))] = \
                        prediction_record(model, vV, pV, score_val)
            menu_size += len(grid)
            entries = [(fits[k][settings.objective], p, fits[k], i) for i, (p, k) in enumerate(zip(grid, keys))]
            if not expand_grid:
                # Grid entries within rounding of the best are ties: the first (simplest) wins.
                entries = [argmin_with_ties(entries, lambda t: t[0], lambda t: t[3])]
            for risk, params, rec, _ in entries:
                cand = Candidate(
                    index=len(candidates), path_rule=path.rule, path_label=path.label,
                    judges=[names[j] for j in judges], judge_idx=judges, K=K, family=family,
                    params=dict(params), grid_size=len(grid),
                    val_mse=rec["mse"], val_nll=rec["nll"], val_risk=risk,
                    val_se=record_se(rec, settings.objective), diagnostics=diag_of())
                candidates.append(cand)
                models[cand.index] = rec["model"]
                if rec.get("pred"):
                    predictions[cand.index] = rec["pred"]
    if not offered:
        raise MenuError("the menu produced no candidates (every family was out of its K range)")
    pattern_cache.release()         # the views hold what they need of the last path's ids
    views.release_held()            # path views and ids held for readers that did not come
    return MenuFit(encoded=encoded, paths=paths, candidates=candidates, models=models,
                   menu_size=menu_size, pattern_cache=pattern_cache, views=views,
                   predictions=predictions, offered=None if only is None else frozenset(offered_keys))


def _wanted_path_sizes(settings, path_sizes: dict, work: list, only: frozenset) -> tuple[dict, dict]:
    """``path_sizes`` (per path, per family, the prefix sizes fitted along it) cut to what
    a refit of the keys ``only`` reads: a family whose path fit keeps each prefix apart
    (``path_prefixes_apart``) is fitted up to the last prefix of the path that a wanted key,
    or a wanted residual's base, reads (none: not at all); the other families' paths are
    fitted whole when the path has a wanted prefix of theirs, else not at all. Each prefix
    is fitted on the path it is fitted on in the whole menu (``path_sizes`` already lists
    a prefix shared by several paths on the first one only), so every model read is the
    one the whole menu fits. Also returned, per path and family, the set of those sizes a
    wanted key reads (the joint families make only those models: :func:`.path_fits.fit_joint_families`)."""
    wanted: set = set()       # (prefix judges, family) some wanted key reads
    for path, K in work:
        judges = path.judges[:K]
        for family in path_families(settings, path):
            for params in settings.family_grid(family):
                if menu_key(path.label or path.rule, K, family, params) in only:
                    wanted.add((judges, family))
                    if REGISTRY[family].shares_base_models and "base" in params:
                        wanted.add((judges, params["base"]))    # its base's fit is the scalar family's
    out, kept = {}, {}
    for path, sizes in path_sizes.items():
        out[path], kept[path] = {}, {}
        for family, need in sizes.items():
            hit = [k for k in need if (path.judges[:k], family) in wanted]
            kept[path][family] = set(hit)
            if not hit:
                out[path][family] = []
            elif REGISTRY[family].path_prefixes_apart and not REGISTRY[family].joint_paths:
                out[path][family] = [k for k in need if k <= hit[-1]]
            else:
                out[path][family] = need
    return out, kept


#: the family of a fixed single-judge candidate: an isotonic map of the judge's score, the
#: recipe a practitioner fits to one judge (:mod:`.baselines`' ``best_single_judge``)
SINGLE_JUDGE_FAMILY = "mean_iso"


def path_families(settings, path: JudgePath) -> tuple:
    """The families fitted along ``path``: the menu's, or for a fixed single-judge path
    (:data:`SINGLE_JUDGE_RULE`) :data:`SINGLE_JUDGE_FAMILY` alone, whatever the menu's
    families (it is the practitioner's one-judge recipe, offered as itself)."""
    return (SINGLE_JUDGE_FAMILY,) if path.rule == SINGLE_JUDGE_RULE else tuple(settings.families)


def _fit_one(settings, fits: dict, views: "ViewCache", judges: tuple, family: str, record) -> dict:
    """Fit (or fetch) a default-parameter model of ``family`` and its validation record."""
    key = (judges, family, ())
    if key not in fits:
        cls = REGISTRY[family]
        kind = view_kind(cls)
        vM = views.get(judges, "M", kind)
        model = settings.family_instance(family, {}).fit(
            vM.X, vM.y, views.get(judges, "rest", kind).X if cls.uses_unlabelled else None)
        fits[key] = record(model, views.get(judges, "V", kind))
    return fits[key]


def _patterns(path: JudgePath, K: int, cache: PatternCache) -> list:
    """Joint-pattern ids (every row) of each level of the path's K-prefix: the levels of
    a prefix are the first levels of its path, computed once per path and held while
    the path is fitted."""
    return cache.hold(path.judges)[:K]


def _diagnostics(patterns: list, views: "ViewCache", judges: tuple, has_T: bool,
                 alph: np.ndarray, table_sized: bool, ranks: "PatternRanks | None" = None) -> PrefixDiagnostics | None:
    """Prefix diagnostics; table-sized prefixes read the (shared) table views' distinct
    patterns, larger ones the pattern ids of every row (no view is built for them): the raw
    ids when their nominal table is small enough for a count per id (:func:`ids_dense`),
    else their ranks (``ranks``, :class:`PatternRanks`, the path's) when it has them, else
    the raw ids. Either gives the same diagnostics to the bit."""
    ids = patterns[-1]
    if ids is None:
        return None
    if not table_sized:
        rows = views.rows
        Q_K = nominal_cells(alph)
        n_ids = len(rows["M"]) + len(rows["V"]) + (len(rows["T"]) if has_T else 0)
        # raw ids below Q_K that are few enough are counted as they are (the ranks would
        # list the same cells in the same order): no ranks are made for them
        ranked = None if ranks is None or ids_dense(Q_K, n_ids) else ranks.level(len(judges))
        ids = ids if ranked is None else ranked
        return prefix_diagnostics(ids[rows["M"]], ids[rows["V"]], ids[rows["T"]] if has_T else None, Q_K)
    vM, vV = views.get(judges, "M"), views.get(judges, "V")
    vT = views.get(judges, "T") if has_T else None
    # raw-row views share their top level's factorisation with the table fits
    shared = vM.X.codes is not None and vM.ids is vM.X.patterns[-1]
    return prefix_diagnostics(vM.ids, vV.ids, vT.ids if vT is not None else None,
                              nominal_cells(alph), w_M=vM.X.weight, w_V=vV.X.weight,
                              w_T=vT.X.weight if vT is not None else None,
                              codes_M=(lambda: vM.X.pattern_codes(len(judges) - 1)) if shared else None)


class PatternRanks:
    """The ranks of a path's prefixes' joint patterns among those on every row: level K's
    rank of a row is its K-prefix pattern's place among the distinct patterns, in the
    order of the mixed-radix ids (:func:`..data.encoding.prefix_patterns`). Each level
    comes from the one before by a count over (rank, code) keys
    (:func:`..measures.judge_paths.dense_ranks`: at most rows x codes values), where the
    raw ids of a long prefix span far more values than rows and need a sort
    (``np.unique``) and a binary search per held-out row.

    The ranks order the patterns as the ids do, so :func:`.prefix_diagnostics` lists the
    same cells in the same order with the same counts from either, and every diagnostic
    is the same to the bit. A prefix holding a never-seen output (a negative code: its
    raw id is -1, a cell of its own in M that no held-out row matches) has no ranks
    (None): the raw ids serve it."""

    def __init__(self, codes: np.ndarray, judges: tuple):
        self.codes, self.judges = codes, judges
        self._at: tuple[int, np.ndarray | None] = (0, None)     # the last level made: (K, its ranks)
        self._range: tuple[np.ndarray, np.ndarray] | None = None   # each column's lowest and highest code

    def _code_range(self, j: int) -> tuple[int, int]:
        """Column ``j``'s lowest and highest code, from one pass over the whole matrix (a
        path reads most columns; a strided pass per column costs more)."""
        if self._range is None:
            self._range = (self.codes.min(axis=0), self.codes.max(axis=0))
        return int(self._range[0][j]), int(self._range[1][j])

    def level(self, K: int) -> np.ndarray | None:
        """The K-prefix's ranks on every row (None: a code is negative). Only the last
        level is held: the menu asks for a path's prefixes in ascending K."""
        k, ranks = self._at
        if k > K or (k and ranks is None):
            if k <= K:
                return None                 # a shorter prefix holds a negative code
            k, ranks = 0, None
        if not len(self.codes):
            return np.zeros(0, dtype=np.int64)
        while k < K:
            j = self.judges[k]
            low, high = self._code_range(j)
            if low < 0:
                self._at = (K, None)
                return None
            c = self.codes[:, j]
            ranks = dense_ranks(c if ranks is None else ranks * (high + 1) + c)
            k += 1
        self._at = (k, ranks)
        return ranks
