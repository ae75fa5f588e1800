"""The cross-fitted protocol: every deployable label serves both fitting and validation.

Deployable rows D = S + M + V (every labelled row outside the research test block T). They
are split into ``folds`` grouped folds (a group never straddles two folds), ``repeats``
times with independent shuffles. For each fold the whole menu is built on the fold's
training groups only: continuous bins and encoders, judge paths (the path rules see the
training rows as their selection rows), and every candidate (path rule, K, family, grid
point) is fitted on them; the fold's held-out rows are only predicted. Label-free work that
is identical in every fold (raw output codes) is all that is shared. T's labels never
enter a fit or a choice; ds_jury's label-free EM sees the training rows plus the panel's
unlabelled rows, never held-out or T rows.

A candidate's cross-fitted risk is the mean over D of its held-out loss (averaged over the
repeats); its diagnostics (H_K, unseen rate, V_cell, V_proxy) are averaged over folds, with
N_z from the fold's training part and frequencies from its held-out part. The deployed
predictor is the chosen candidate refitted on all of D, with the judge set its path rule
gives on D; ``judge_set_stability`` is the mean Jaccard overlap between the judges a
candidate used in each fold and the deployed judge set.

Every step is linear (or n log n) in rows. Groups are integer codes in sorted-id order
(:func:`group_codes`). A fold's models read a held-out row only through its judge outputs,
so each fold predicts one row per *table row* (outputs and that repeat's fold,
:class:`TableRows`) into one (repeats, candidates, table rows) buffer
(:class:`.folds.RepeatTables`); losses and sums are kept on the *distinct held-out rows*
(outputs, label and every repeat's fold, :class:`DistinctRows`), gathered a block of
columns at a time, and the bootstrap works on per-unit sums (:mod:`.honesty`). With worker
processes the final refit runs in this process while the workers fit the first repeat's
folds, and after the screen this process runs the later folds a last round would leave to
one worker (:func:`own_share`).
"""

from __future__ import annotations

import time
from contextlib import ExitStack
from dataclasses import replace
from itertools import chain, islice

import numpy as np

from ..measures.diagnostics import PrefixDiagnostics
from ..measures.judge_paths import SINGLE_JUDGE_RULE
from ..errors import SplitError
from ..data.panel import Panel
from ..data.splits import Blocks
from ..data.encoding import INT64_SAFE, encode_panel
from ..process_memory import release_freed_memory
from ..worker_pool import closes_its_tasks, pool_workers, run_tasks, wait_for_pool_turn
from .baselines import baseline_predictions
from .folds import (HeldOut, RepeatTables, distinct_key, distinct_rows, grouped_folds, label_digits,
                    panel_output_digits)
from .choice import choose_deployed, default_prior
from .constraints import JudgeBits, is_stable, on_info_first_path, selector_constraint
from .screening import Screen, first_repeat_risks, screen_candidates
from ..families import REGISTRY
from ..families.base import one_blas_thread
from .judges_report import PanelReport, selection_panel_report
from .honesty import UNIT_SUM_CELLS, assess, nested_estimate, own_set_shifted, training_size_corrected
from .evaluation_rows import restrict_heldout
from .menu import MenuRows, checked_panel, fit_menu, menu_key
from .result import SelectionResult, predict_on_rows
from . import frontier
from .split_protocol import with_frontier

_DIAG_FIELDS = ("Q_K", "S_K", "H_K", "unseen_val", "V_cell", "V_proxy", "pressure_sum")


def candidate_key(c) -> tuple:
    """Candidate ``c``'s key in every fold's menu (:func:`.menu.menu_key`)."""
    return menu_key(c.path_label or c.path_rule, c.K, c.family, c.params)


def _predict_candidates(menu, rows: np.ndarray, *, rows_are_V: bool = False, pick: np.ndarray | None = None,
                        keys=None) -> dict[tuple, np.ndarray]:
    """Each candidate's predictions on ``rows`` (those made while fitting when ``rows`` is
    the menu's V block), at positions ``pick`` of ``rows`` only (None: all), for the
    candidates whose key is in ``keys`` only (None: all). A prediction reads a row alone,
    so predicting the picked rows equals picking from the predictions of all rows."""
    out, done = {}, {}
    at = rows if pick is None else rows[pick]
    for c in menu.candidates:
        key = candidate_key(c)
        if keys is not None and key not in keys:
            continue
        model = menu.models[c.index]
        if id(model) not in done:
            stored = menu.predictions.get(c.index, {}).get("V") if rows_are_V else None
            if stored is not None:
                inv = stored.view.inverse
                if pick is None:
                    done[id(model)] = stored.raw()
                else:
                    done[id(model)] = stored.values[pick] if inv is None else stored.values[inv[pick]]
            else:
                done[id(model)] = predict_on_rows(model, c, menu.encoded, menu.pattern_cache, at)
        out[key] = done[id(model)]
    return out


def group_codes(groups: np.ndarray) -> np.ndarray:
    """Each row's group as an integer in [0, groups): codes follow the sorted group ids
    (``np.unique``'s order), so grouped folds, units and bootstrap draws over codes are
    those over the ids, and every later step compares integers, not Python objects."""
    if len(groups) == 0:
        return np.zeros(0, dtype=np.int64)
    return np.unique(groups, return_inverse=True)[1].reshape(-1).astype(np.int64)


class DistinctRows:
    """The deployable rows' distinct held-out rows (:func:`heldout_key`): ``rep`` a
    representative position in D of each, ``inverse`` each position's distinct row (None:
    every row its own), ``counts`` rows per distinct row: the rows every held-out loss and
    sum is kept on (the folds predict the coarser :class:`TableRows`)."""

    def __init__(self, key: tuple | None, n: int):
        if key is None:
            self.rep, self.inverse, self.counts = np.arange(n), None, np.ones(n)
        else:
            self.rep, counts, self.inverse = distinct_rows(*key)
            self.counts = np.asarray(counts, dtype=float)

    def __len__(self) -> int:
        return len(self.rep)


def fold_numbers(selector, fold_list: list, n: int) -> list[np.ndarray]:
    """Per repeat, each position of D's fold (0 .. folds-1)."""
    out = []
    for r in range(selector.repeats):
        fold = np.zeros(n, dtype=np.int64)
        for k, (rr, _, va) in enumerate(f for f in fold_list if f[0] == r):
            fold[va] = k
        out.append(fold)
    return out


def heldout_key(selector, panel: Panel, D: np.ndarray, fold_list: list,
                output_digits: list | None = None) -> tuple | None:
    """Rows of D with the same judge outputs, label and fold in every repeat get the same
    held-out prediction from every candidate and baseline (each fold's models see a row
    only through its outputs), so :class:`.folds.HeldOut` keeps them once (None with
    ``compress=False``). ``output_digits``: :func:`.folds.panel_output_digits` of D when
    the caller has them."""
    if not selector.compress or not len(D):
        return None
    digits = list(panel_output_digits(panel, D) if output_digits is None else output_digits)
    digits.append(label_digits(panel.labels[D]))
    digits += [(fold, selector.folds) for fold in fold_numbers(selector, fold_list, len(D))]
    return distinct_key(digits, len(D))


class TableRows:
    """Per repeat, the table rows of :class:`.folds.RepeatTables`: D's positions with the
    same judge outputs in the same fold of that repeat share every candidate's held-out
    prediction there (the fold's models read a row only through its outputs). ``rep[r]``
    a representative position of each table row, ``inverse[r]`` each position's table row;
    with ``compress=False`` every position is its own table row."""

    def __init__(self, selector, D: np.ndarray, fold_list: list, output_digits: list | None):
        n = len(D)
        self.rep, self.inverse = [], []
        for fold in fold_numbers(selector, fold_list, n):
            if output_digits is None or not n:
                rep, inverse = np.arange(n), np.arange(n)
            else:
                rep, _, inverse = distinct_rows(*distinct_key(list(output_digits) + [(fold, selector.folds)], n))
            self.rep.append(rep)
            self.inverse.append(np.asarray(inverse, dtype=np.int64))

    @property
    def n_table_rows(self) -> int:
        return max((len(rep) for rep in self.rep), default=0)

    def in_fold(self, r: int, va: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(table rows of repeat ``r`` held out by the fold ``va``, their representatives'
        positions in ``va``); a table row lies in one fold, so it is held out once."""
        tv = np.unique(self.inverse[r][va])
        return tv, np.searchsorted(va, self.rep[r][tv])

    def index(self, positions: np.ndarray) -> np.ndarray:
        """(repeats, len(positions)): the table row of D's ``positions`` in each repeat."""
        return np.stack([inv[positions] for inv in self.inverse]) if self.inverse else \
            np.zeros((0, len(positions)), dtype=np.int64)


#: panels smaller than this (deployable rows x judges) run their folds in one process: the
#: start-up of worker processes would cost more than it saves
PARALLEL_MIN_CELLS = 10_000


def fold_work(selector, panel: Panel, D: np.ndarray, tr: np.ndarray, va: np.ndarray,
              unlabelled: np.ndarray, progress=None, pick: np.ndarray | None = None,
              only: frozenset | None = None) -> dict:
    """Everything one fold contributes, in small arrays: each candidate's held-out
    predictions (at positions ``pick`` of the held-out rows only: one row of each distinct
    held-out row), its judge set and diagnostics, and the baselines' held-out predictions.
    ``only``: the candidate keys to fit (the later repeats after the screen,
    :mod:`.screening`; None: the whole menu)."""
    empty = np.zeros(0, dtype=np.int64)
    # the fold: paths and fits on its training rows, its held-out rows scored, no audit rows
    rows = MenuRows(path_rows=D[tr], fit=D[tr], scored=D[va], audit=empty, unlabelled=unlabelled)
    menu = fit_menu(selector, panel, rows, expand_grid=True, score_val=False, progress=progress,
                    only=only, diagnostics=True)
    out = {"preds": _predict_candidates(menu, D[va], rows_are_V=True, pick=pick), "judges": {}, "diag": {},
           "base": {}, "offered": menu.offered}
    for c in menu.candidates:
        key = candidate_key(c)
        out["judges"][key] = frozenset(c.judge_idx)
        if c.diagnostics is not None:
            out["diag"][key] = np.array([getattr(c.diagnostics, f) for f in _DIAG_FIELDS], dtype=float)
    if selector.with_baselines:
        out["base"] = baseline_predictions(menu.encoded.scores, panel.labels, D[tr], D[va], unlabelled)
    return out


def _n_jobs(selector, panel: Panel, n_rows: int) -> int:
    jobs = selector.n_jobs
    if jobs is None:
        jobs = -1 if n_rows * len(panel.judges) >= PARALLEL_MIN_CELLS else 1
    return jobs


def own_share(n_tasks: int, workers: int) -> int:
    """How many of ``n_tasks`` equal tasks the selecting process runs itself beside
    ``workers`` worker processes, when it has nothing else to do meanwhile: the remainder a
    last round would leave to fewer workers than there are (``n_tasks`` mod ``workers``,
    none when the tasks fit in one round).
    With it the cores stay busy to the end: the processes share them while all run
    (5 later folds, 2 workers: each worker 2, this process 1, together 5/2 folds' time
    instead of 3). Every task's seed and data are fixed before it starts, so where a task
    runs changes no result."""
    return n_tasks % workers if n_tasks > workers else 0


def _shared_start(jobs: int, workers: int, func, tasks: list[tuple], then: tuple = ()) -> tuple:
    """:func:`~fcps_core.worker_pool.run_tasks` of ``tasks`` shared with this process: the
    workers take the first ones, this process runs its :func:`own_share` of the last ones now
    (the workers run meanwhile) and hands its freed memory back. Returns (the workers' results, with what
    ``then`` queued behind them; every task's result in task order)."""
    own = own_share(len(tasks), workers) if jobs != 1 and len(tasks) > 1 else 0
    results = run_tasks(jobs, func, tasks[:len(tasks) - own], then=then)
    mine = [func(*t) for t in tasks[len(tasks) - own:]]
    if mine:
        release_freed_memory()
    return results, chain(islice(results, len(tasks) - own), mine)


def _queued_result(results):
    """The next result of ``results`` (a task queued behind the folds), or None when there
    is none or its worker died: every fold's result is in by then, and what was queued is
    computed where it is read (``to_dict`` forms the judges report itself)."""
    from concurrent.futures import BrokenExecutor      # loky's TerminatedWorkerError is one
    try:
        return next(results, None)
    except BrokenExecutor:
        return None


def panel_report_or_none(panel: Panel, blocks: Blocks, settings) -> dict | None:
    """:func:`.judges_report.selection_panel_report`, or None where it raises: a worker's
    error would stop the pool the other tasks share, and ``to_dict`` computes the report (and
    raises) as it did without workers."""
    try:
        return selection_panel_report(panel, blocks, settings)
    except Exception:   # reported where the report is read, as before
        return None


def _fold_label(selector, u: int, r: int) -> str:
    return f"fold {u % selector.folds + 1}/{selector.folds}, repeat {r + 1}/{selector.repeats}"


class _TableStore:
    """The candidates' held-out predictions on the table rows (:class:`TableRows`), written
    fold by fold into one (repeats, slots, table rows) buffer: a slot per candidate the
    first fold offers (a candidate it does not offer is not offered in every fold, so it is
    never kept), NaN until a fold writes it. The buffer becomes
    :class:`.folds.RepeatTables`' values: no per-candidate arrays, no copy.

    With ``screened`` (the screen runs after the first repeat, :mod:`.screening`) the later
    repeats' slots are set to NaN only once the screen has marked the slots they never
    write (:meth:`mark_first_repeat_only`): the buffer is zeroed memory the operating system
    maps on first touch, so the screened slots of the later repeats (no reader reads them:
    :class:`.folds.RepeatTables` reads a first-repeat-only slot's first repeat) take no
    memory and no time."""

    def __init__(self, R: int, n_rows: int, keys, screened: bool = False):
        self.slot = {k: i for i, k in enumerate(keys)}
        self.values = np.zeros((R, len(self.slot), n_rows))      # a slot's rows together
        self.values[:1] = np.nan
        self._later_set = not screened                            # the later repeats' NaN written
        if self._later_set:
            self.values[1:] = np.nan
        self.filled = np.zeros((R, n_rows), dtype=bool)               # table rows some fold wrote
        # slots of the candidates the later repeats do not refit (:mod:`.screening`): they
        # read their first repeat's predictions in every repeat
        self.first_repeat_only = np.zeros(len(self.slot), dtype=bool)

    def mark_first_repeat_only(self, keys) -> None:
        """The slots of ``keys`` read their first repeat in every repeat (:mod:`.screening`);
        the other slots of the later repeats become NaN until a fold writes them."""
        for k in keys:
            s = self.slot.get(k)
            if s is not None:
                self.first_repeat_only[s] = True
        self._set_later()

    def _set_later(self) -> None:
        if not self._later_set:
            self.values[1:, ~self.first_repeat_only] = np.nan
            self._later_set = True

    def forget(self, keys) -> None:
        """``keys`` are not offered in every fold: no candidate reads their slots."""
        for k in keys:
            self.slot.pop(k, None)

    def write(self, r: int, tv: np.ndarray, preds: dict) -> None:
        if r:
            self._set_later()      # a later repeat before any screen: every slot NaN first
        self.filled[r, tv] = True
        for key, p in preds.items():
            s = self.slot.get(key)
            if s is not None:
                self.values[r, s, tv] = p

    def complete(self, key, repeats: int | None = None) -> bool:
        """Offered (and predicted) on every table row of every repeat (of the first
        ``repeats``; a first-repeat-only slot: of the first)."""
        s = self.slot.get(key)
        if s is None:
            return False
        R = 1 if self.first_repeat_only[s] else (repeats or self.values.shape[0])
        return not np.isnan(self.values[:R, s][self.filled[:R]]).any()

    def columns(self, keys: list) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(vcol, col, first) for candidates ``keys``: each candidate's stored column (the
        first slot equal to its own), its distinct column, and the stored column of each
        distinct column. Slots are equal when every value on the table rows is (an exact
        hash of the bits, then :func:`numpy.array_equal` within a hash bucket, as
        :func:`.folds.distinct_columns` compares); every table row is some distinct
        held-out row's, so slots are equal exactly when their held-out columns are. Distinct
        columns are numbered by first appearance in ``keys``, as
        :func:`.folds.distinct_columns` numbers them. A first-repeat-only slot is compared
        on its first repeat with the other first-repeat-only slots (its later repeats are
        copies, :class:`.folds.RepeatTables`)."""
        R, _, V = self.values.shape
        mult = np.random.default_rng(0x5EED).integers(1, 2 ** 62, size=R * V, dtype=np.uint64) | np.uint64(1)
        mult[~self.filled.reshape(-1)] = 0                       # padding rows do not count
        col = np.empty(len(keys), dtype=np.int64)
        first: list[int] = []
        buckets: dict[tuple, list[int]] = {}
        for c, key in enumerate(keys):
            s = self.slot[key]
            single = bool(self.first_repeat_only[s])
            vals = self.values[:1, s] if single else self.values[:, s]
            filled = self.filled[:1] if single else self.filled
            flat = np.ascontiguousarray(vals).reshape(-1)
            h = (int((flat.view(np.uint64) * mult[:flat.size]).sum(dtype=np.uint64)), single)
            for k in buckets.setdefault(h, []):
                other = self.values[:1, first[k]] if single else self.values[:, first[k]]
                if np.array_equal(other[filled], vals[filled]):
                    col[c] = k
                    break
            else:
                col[c] = len(first)
                buckets[h].append(len(first))
                first.append(s)
        first_arr = np.asarray(first, dtype=np.int64)
        return first_arr[col], col, first_arr


class _FoldOutputs:
    """What the folds' results add up to, fold by fold: the predictions' store, each
    candidate's summed diagnostics and fold count, its judge set in each fold, and the
    baselines' held-out predictions."""

    def __init__(self, R: int, table_rows: TableRows, n: int, screened: bool = False):
        self.R, self.table_rows, self.n, self.screened = R, table_rows, n, screened
        self.store: _TableStore | None = None
        self.diag_sum: dict[tuple, np.ndarray] = {}
        self.diag_n: dict[tuple, int] = {}
        self.judge_sets: dict[tuple, list] = {}
        self.base: dict[str, np.ndarray] = {}
        #: the keys every fold fitted with ``only`` would have offered with the whole menu
        self.offered: frozenset | None = None

    def collect(self, fold_list: list, picks: list, units, results, done=None) -> None:
        """Read the results of folds ``units`` (in order) from ``results``."""
        units = list(units)
        for u, out in zip(units, islice(results, len(units))):
            (r, _, va), (tv, _) = fold_list[u], picks[u]
            if done is not None:
                done(u, r)
            if out.get("offered") is not None:
                self.offered = out["offered"] if self.offered is None else self.offered & out["offered"]
            if self.store is None:
                self.store = _TableStore(self.R, self.table_rows.n_table_rows, out["preds"], self.screened)
            self.store.write(r, tv, out["preds"])
            for key, judges in out["judges"].items():
                self.judge_sets.setdefault(key, []).append(judges)
            for key, vals in out["diag"].items():
                self.diag_sum[key] = self.diag_sum.get(key, 0.0) + vals
                self.diag_n[key] = self.diag_n.get(key, 0) + 1
            for name, p in out["base"].items():
                if name not in self.base:
                    self.base[name] = np.full((self.R, self.n) + p.shape[1:], np.nan)
                self.base[name][r, va] = p
            del out


def _screen(settings, panel: Panel, D: np.ndarray, groups: np.ndarray, final, store: "_TableStore",
            table_rows: TableRows) -> Screen:
    """:func:`.screening.screen_candidates` over the final refit's candidates that every
    fold of the first repeat offered, with the refit's judge sets, on the first repeat's
    held-out matrix, restricted to D's evaluation rows as the final one is: its distinct rows
    are the rows with the same table row of that repeat and the same label, its columns the
    candidates' stored columns
    (:func:`.screening.first_repeat_risks`). The references b(c) are the candidates every
    fold offers whatever its rows: path rules that order every judge, in families without
    joint patterns or at a K whose table fits every fold's pattern ids (the K largest
    alphabets of all deployable rows, which bound a fold's, below half the id range)."""
    sizes = sorted((int(a) for a in final.encoded.alphabet_sizes), reverse=True)
    table_fits, product = 0, 1
    for a in sizes:
        product *= max(a, 1)
        if product > INT64_SAFE // 2:
            break
        table_fits += 1
    keys, seen, judge_sets, steady, cands = [], set(), [], [], []
    for c in final.candidates:
        key = candidate_key(c)
        if key in seen or not store.complete(key, repeats=1):
            continue
        seen.add(key)
        keys.append(key)
        cands.append(c)
        judge_sets.append(tuple(c.judge_idx))
        steady.append(c.path_rule != "cfps" and (not REGISTRY[c.family].needs_patterns or c.K <= table_fits))
    table_row, y = table_rows.inverse[0], panel.labels[D]
    if settings.compress and len(D):
        rep, _, inverse = distinct_rows(*distinct_key([(table_row, table_rows.n_table_rows), label_digits(y)],
                                                      len(D)))
        inverse = np.asarray(inverse, dtype=np.int64)
    else:
        rep, inverse = np.arange(len(D)), None
    slots = np.array([store.slot[k] for k in keys], dtype=np.int64)
    first = HeldOut(rows=D, values=None, inverse=inverse, vcol=slots, baselines={}, y=y, groups=groups,
                    tables=RepeatTables(store.values[:1], table_row[rep][None, :]))
    first._cache["columns"] = (np.arange(len(keys)), slots)
    first, _ = restrict_heldout(first, None, D, settings.eval_rows)    # read on the evaluation rows, as the risks
    means, se = first_repeat_risks(first, settings.objective)
    guard = (settings.prior_family or default_prior(panel)) if settings.guard == "one_se" else None
    limit = selector_constraint(settings)
    # the drop-one references read the user's limits before the full-limit filter: without a
    # judge that filter may fall back to every candidate within them (:mod:`.drop_one`)
    admissible = limit.limits_only().mask(cands, JudgeBits(cands, panel.judge_names))
    on_info_first = np.array([on_info_first_path(c) for c in cands], dtype=bool) if limit.full_limit else None
    return screen_candidates(means, se, keys, judge_sets, len(panel.judge_names), steady=np.asarray(steady),
                             admissible=admissible, with_costs=settings.judge_costs is not None,
                             guard_family=guard, full_limit=on_info_first, z=settings.screen_se)


@one_blas_thread
@closes_its_tasks
def fit_crossfit(panel: Panel, blocks: Blocks, settings) -> SelectionResult:
    """Run the cross-fitted protocol over the deployable rows S+M+V of ``blocks`` (T the
    research audit) under ``settings`` (an :class:`.selector.FCPSSelector`, validated by its
    caller, read only). The result is built once the choice is made
    (:func:`.choice.choose_deployed` on the cross-fitted risks); the audit, the assessment
    (with the learning-curve correction or the nested estimate) and the frontier are added
    as new values of the frozen result.

    BLAS runs on one thread in this process throughout: its products here are thin
    (the held-out matrix's column sums and the screen's and risks' vector products, a block
    of columns at a time), and a second BLAS thread mostly waits for the core a fold's
    worker process holds (as in the fits, :func:`.families.base.one_blas_thread`)."""
    t0 = time.perf_counter()
    report = settings.progress or (lambda frac, msg: None)
    D = np.sort(np.concatenate([blocks.S, blocks.M, blocks.V])).astype(np.int64)
    if len(D) == 0:
        raise SplitError("no labelled rows outside the test block: cross-fitting needs labels")
    panel = checked_panel(panel, blocks, crossfit=True)
    T = np.asarray(blocks.T, dtype=np.int64)
    labelled_or_test = np.zeros(panel.n_rows, dtype=bool)
    labelled_or_test[D] = labelled_or_test[T] = True
    unlabelled = np.flatnonzero(~labelled_or_test)
    empty = np.zeros(0, dtype=np.int64)
    groups = group_codes(panel.group_ids[D])
    fold_list = grouped_folds(groups, settings.folds, settings.repeats, settings.seed)
    R, n_units = settings.repeats, len(fold_list) + 1
    # Held-out predictions are kept once per distinct held-out row from the start: a fold
    # predicts one row of each distinct row it holds out.
    digits = panel_output_digits(panel, D) if settings.compress and len(D) else None
    distinct = DistinctRows(heldout_key(settings, panel, D, fold_list, digits), len(D))
    # a fold predicts one row of each table row it holds out (outputs and fold: far fewer
    # than the distinct held-out rows, which also key on the label and the other repeats)
    table_rows = TableRows(settings, D, fold_list, digits)
    picks = [table_rows.in_fold(r, va) for r, _, va in fold_list]
    jobs = _n_jobs(settings, panel, len(D))
    parallel = jobs != 1 and len(fold_list) > 1
    bare = replace(settings, progress=None) if parallel else settings
    # with the screen (:mod:`.screening`) the first repeat's folds run first, then the later
    # repeats' folds fit the candidates it kept
    screened = settings.screen_se is not None and R > 1 and selector_constraint(settings).screenable
    n_first = settings.folds if screened else len(fold_list)

    def task(u: int, selector, only=None) -> tuple:
        (r, tr, va), (_, pick) = fold_list[u], picks[u]
        unit = u + 1 if screened and not parallel and u >= n_first else u     # the refit's unit comes first
        return (selector, panel, D, tr, va, unlabelled, None if parallel else
                (lambda f, m: report(0.92 * (unit + f) / n_units, f"{_fold_label(settings, u, r)}: {m}")),
                pick, only)
    # the judges report's panel part reads no fit: the first worker done with its folds
    # computes it while the other finishes, instead of this process after the folds
    queued = ((panel_report_or_none, (panel, blocks, bare)),) if parallel else ()
    if parallel:            # another selection of this process may have the pool: say so while waiting
        wait_for_pool_turn(lambda: report(0.0, "waiting for another selection in this process to finish "
                                               "with the worker processes"))
    results = run_tasks(jobs, fold_work, [task(u, bare) for u in range(n_first)],
                        then=queued if n_first == len(fold_list) else ())
    # the final refit: paths and fits on every deployable row, none scored (the risks come
    # from the folds), T for the audit
    rows = MenuRows(path_rows=D, fit=D, scored=empty, audit=T, unlabelled=unlabelled)

    def refit(start: float):
        report(0.92 * start / n_units, "refitting the menu on all deployable labels"
               + (" (the folds run in worker processes meanwhile)" if parallel else ""))
        # its prefixes' diagnostics are the folds' averages; of its own only the unseen rate
        # on T is read, so without T it forms none
        return fit_menu(settings, panel, rows, expand_grid=True, score_val=False, diagnostics=len(T) > 0,
                        progress=lambda f, m: report(0.92 * (start + f) / n_units, f"final refit: {m}"))
    # In parallel the final refit runs here once a worker has no fold left to start (the
    # first batch's last folds run while it refits): before that both cores are the
    # workers', so the refit takes the core the last folds leave idle. (This process takes
    # no fold of this batch: the refit is its share, and a fold before it would put both
    # in this process one after the other.)
    workers = pool_workers(jobs) if parallel else 1
    final = refit(0) if parallel and n_first < workers else None

    def done(u: int, r: int) -> None:
        nonlocal final
        report(0.92 * (u + 2) / n_units, f"{_fold_label(settings, u, r)} done")
        if final is None and u < n_first and n_first - (u + 1) < workers:
            final = refit(u + 1)
    folds = _FoldOutputs(R, table_rows, len(D), screened)
    folds.collect(fold_list, picks, range(n_first), results, done if parallel else None)
    screen = None
    if screened:
        if final is None:
            final = refit(n_first)
        screen = _screen(settings, panel, D, groups, final, folds.store, table_rows)
        folds.store.mark_first_repeat_only(screen.screened)
        later = range(n_first, len(fold_list))
        # the workers take the first later folds, this process (idle until they are in)
        # the last :func:`own_share` of them, at the same time
        results, later_results = _shared_start(jobs, workers, fold_work,
                                               [task(u, bare, screen.kept) for u in later], then=queued)
        folds.collect(fold_list, picks, later, later_results, done if parallel else None)
        # a screened key some later fold's whole menu would not offer (a cfps subset of
        # another size) is left out, as it is without the screen
        folds.store.forget(screen.screened - (folds.offered or frozenset()))
    if final is None:
        final = refit(n_units - 1)
    # the folds' results are in the store: what their reading (and any fold or refit run
    # here) freed goes back to the system before the choice and the bootstrap allocate
    release_freed_memory()
    store, diag_sum, diag_n, judge_sets, base = folds.store, folds.diag_sum, folds.diag_n, folds.judge_sets, folds.base
    n_folds_total = len(fold_list)
    kept, models, columns, predictions = [], {}, [], {}
    for c in final.candidates:
        key = candidate_key(c)
        if not store.complete(key):
            continue      # not offered in every fold (e.g. a cfps frontier of another size)
        old_index = c.index
        c.index = len(kept)
        models[c.index] = final.models[old_index]
        if old_index in final.predictions:
            predictions[c.index] = final.predictions[old_index]
        if key in diag_sum and diag_n[key] == (settings.folds if store.first_repeat_only[store.slot[key]]
                                               else n_folds_total):
            m = diag_sum[key] / diag_n[key]
            final_diag = c.diagnostics
            c.diagnostics = PrefixDiagnostics(
                Q_K=float(m[0]), S_K=float(m[1]), H_K=float(m[2]), unseen_val=float(m[3]),
                unseen_test=final_diag.unseen_test if final_diag is not None else None,
                V_cell=float(m[4]), V_proxy=float(m[5]), pressure_sum=float(m[6]))
        else:
            c.diagnostics = None
        deployed = set(c.judge_idx)
        c.stability = float(np.mean([len(s & deployed) / len(s | deployed) for s in judge_sets[key]]))
        c.repeats = 1 if store.first_repeat_only[store.slot[key]] else R
        kept.append(c)
        columns.append(key)
    if not kept:
        raise SplitError("no candidate was offered in every fold; use fixed path rules")
    # the held-out matrix (repeats, distinct rows, candidates) reads the store's tables
    vcol, col, first = store.columns(columns)
    heldout = HeldOut(rows=D, values=None, inverse=distinct.inverse, vcol=vcol, baselines=base,
                      y=panel.labels[D], groups=groups,
                      tables=RepeatTables(store.values, table_rows.index(distinct.rep),
                                          store.first_repeat_only if store.first_repeat_only.any() else None))
    heldout._cache["columns"] = (col, first)
    del store
    # risks, ties and the estimate read the evaluation rows only (None: all of D)
    heldout, distinct = restrict_heldout(heldout, distinct, D, settings.eval_rows)
    fields = {"mse": "val_mse", "nll": "val_nll"}
    # Every column's per-unit loss sums are formed once and held to the end (when they fit
    # in UNIT_SUM_CELLS): the SEs, the choice's paired SEs, the bootstrap and the frontier
    # read them, each of which would otherwise form them again (the same sparse products).
    held = ExitStack()
    held.enter_context(heldout.grouped(settings.objective).unit_sums_held(UNIT_SUM_CELLS))
    means, se = heldout.column_risks(settings.objective)
    for c in kept:
        setattr(c, fields[settings.objective], float(means[c.index]))
        c.val_risk, c.val_se = float(means[c.index]), float(se[c.index])
    # The other objective's risks (means only: its loss matrix formed a block of columns at
    # a time, never whole) fill a field only the answer reports: they are formed on a thread
    # while this one chooses, bootstraps and builds the frontier (numpy and the sparse
    # products release the GIL in their loops), and read before the result is returned.
    other = next(o for o in fields if o != settings.objective)
    other_means = _in_background(heldout.column_means, other)
    report(0.93, f"choosing ({settings.choice}) on the cross-fitted risks")
    chosen = choose_deployed(kept, settings, panel, heldout)
    result = SelectionResult(
        panel=panel, blocks=blocks, selector=settings, encoded=final.encoded, paths=final.paths,
        candidates=kept, models=models, menu_size=len(kept), feature_cache=final.pattern_cache,
        views=final.views, predictions=predictions,
        protocol_info={"protocol": "crossfit", "folds": settings.folds, "repeats": R,
                       "n_deployable": int(len(D)), "n_T": int(len(T)),
                       **({} if screen is None else {"screen": screen.info()})},
        fit_rows=D, val_rows=heldout.rows, n_fit=float(np.mean([len(tr) for _, tr, _ in fold_list])),
        heldout=heldout, **chosen.fields())
    result = replace(result, selected_test=result.audit())
    # the learning-curve correction's refits start now (when there will be an estimate to
    # correct: assess needs two groups): with worker processes they run while this process
    # computes the bootstrap estimate they correct
    wants_correction = settings.estimate == "bbc" and heldout.grouped(settings.objective).n_groups >= 2
    # the frontier's levels are decided now (no bootstrap needed): the default's refits also
    # predict the points' members its configuration fits anyway, and the other members'
    # refits start behind them on the same halves, read only when the points are built (they
    # run while this process computes the bootstrap and the frontier's replays)
    choices = frontier.FrontierChoices(result, heldout) if wants_correction and frontier.POINT_CORRECTIONS else None
    correction = (start_training_size_correction(settings, panel, D, fold_list, result, unlabelled,
                                                  groups=groups, table_rows=table_rows, jobs=jobs,
                                                  also=None if choices is None else choices.member_sets())
                  if wants_correction else None)
    point_refits = (start_point_refits(settings, panel, D, correction, unlabelled, jobs=jobs)
                    if choices is not None else None)
    report(0.95, "bias-corrected risk estimate (bootstrap over groups, no refits)")
    assessment = assess(result, heldout)
    dr = assessment["deployed_risk"]
    # the frontier's bootstrap replays read the draws, not the correction: they run now, while
    # this process would otherwise wait for the refits
    replays = (frontier.frontier_replays(replace(result, **assessment), heldout, choices)
               if choices is not None and dr is not None else None)
    point_correction = None
    if correction is not None and dr is None:
        correction.discard()
        if point_refits is not None and point_refits is not correction:
            point_refits.discard()
    elif correction is not None:
        report(0.97, "learning-curve correction (deployed configuration at half the training rows)")
        correction = correction.finish(settings, panel, D, heldout, distinct)
        if point_refits is not None:
            point_correction = point_refits.reader(settings, panel, D, heldout, distinct)
        assessment["deployed_risk"] = training_size_corrected(dr, correction)
    if settings.estimate == "nested":
        assessment["deployed_risk"] = nested_estimate(settings, panel, blocks, D, report)
    levels = None
    if getattr(settings, "own_set_level", False) and settings.estimate == "bbc" and \
            assessment["deployed_risk"] is not None:
        # the estimates' level read on the members' own fixed judge sets (off by default)
        levels = OwnSetLevels(settings, panel, D, fold_list, heldout, unlabelled, kept)
        assessment["deployed_risk"] = own_set_shifted(assessment["deployed_risk"],
                                                      levels.shift(result.tied_members))
    result = with_frontier(replace(result, **assessment), heldout, choices=choices, corrections=point_correction,
                           replays=replays, levels=None if levels is None else levels.shift)
    # queued behind the folds: long done by now (none when the last batch ran in this process)
    panel_report = _queued_result(results) if queued else None
    if panel_report is not None:
        result = replace(result, panel_report=PanelReport.of(panel, blocks, settings, panel_report))
    held.close()
    means = other_means()
    for c in kept:
        setattr(c, fields[other], float(means[c.index]))
    result = replace(result, timings={**result.timings, "select_seconds": time.perf_counter() - t0})
    report(1.0, "done")
    return result


def _in_background(func, *args):
    """``func(*args)`` started on a thread of this process; returns the call that waits for
    its result (and raises its error). The thread runs under this thread's BLAS limit (a
    process-wide setting), so its result is a sequential call's."""
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(max_workers=1)
    future = pool.submit(func, *args)
    pool.shutdown(wait=False)
    return future.result


def training_size_correction(selector, panel: Panel, D: np.ndarray, fold_list: list, result,
                             heldout: HeldOut, unlabelled: np.ndarray, *, groups: np.ndarray | None = None,
                             distinct: DistinctRows | None = None, table_rows: TableRows | None = None,
                             jobs: int = 1) -> dict:
    """How much better the deployed configuration gets between the folds' training size and
    all deployable labels.

    Held-out risks come from models fitted on (folds-1)/folds of D, but the deployed
    predictor is fitted on all of D, so the bootstrap estimate leans pessimistic where the
    learning curve is still steep. The estimation term of the risk scales as 1/n (the cell
    pressure sum_z p_z/N_z of Eq. eq:cell-pressure, and the parametric rate of the
    stackers), so r(n) = a + b/n. The first repeat's folds are refitted for the deployed
    configuration only (its path rules and families, paths rebuilt) on half of each fold's
    training groups; the paired held-out risks at n_half and n_train give b, and the
    correction is max(b, 0) * (1/n_train - 1/n_D), b at most r(n_train) n_train (the floor
    a = r(n_train) - b/n_train of a loss curve is never negative). No T row is read.

    Groups are integer codes (``groups``, :func:`group_codes`), so a fold's half is a mask
    over codes, not a set test over ids. Both risks are count-weighted sums over the
    distinct held-out rows (``distinct``); the half-size models predict one row of each of
    the first repeat's table rows (``table_rows``, :class:`TableRows`), and only the
    deployed members are predicted. The fold refits run in worker processes
    when ``jobs`` allows (their halves are drawn first, in fold order, from one seeded
    generator, so the result equals a sequential run): :func:`start_training_size_correction`
    starts them, :meth:`CorrectionRefits.finish` computes the correction from them.
    """
    distinct = DistinctRows(None, len(D)) if distinct is None else distinct
    return start_training_size_correction(selector, panel, D, fold_list, result, unlabelled, groups=groups,
                                          table_rows=table_rows, jobs=jobs).finish(selector, panel, D, heldout,
                                                                                   distinct)


def _deployed_configuration(selector, members, others) -> tuple[tuple, list, list]:
    """The default's half-size refit configuration, as a (sub-selector, keys) pair, and which
    of ``others`` (the frontier points' members) it predicts and which it leaves.

    The deployed configuration is the default's own (its members' path rules and families,
    every prefix); it also predicts every other member it fits anyway (the same family and
    path rule: a prediction, no fit). The rest get :func:`_rule_configurations`. A member's
    predictions depend only on its path rule, K, family and parameters (paths are built per
    rule, prefixes are nested), so the grouping changes no prediction, only the work.
    Returns (configuration, the others it predicts, the others it leaves)."""
    fams = tuple(dict.fromkeys(c.family for c in members))
    rules = tuple(dict.fromkeys(c.path_rule for c in members))
    inside = [c for c in others if c.family in fams and c.path_rule in rules]
    rest = [c for c in others if not (c.family in fams and c.path_rule in rules)]
    first = (_sub_selector(selector, fams, rules),
             frozenset(candidate_key(c) for c in list(members) + inside))
    return first, inside, rest


def _rule_configurations(selector, rest) -> list[tuple]:
    """One half-size refit configuration per path rule of ``rest`` (the members the
    deployed configuration does not fit): the families its members use and their prefixes
    up to the largest K among them (``k_max``), so a point needing a one-judge isotonic fit
    does not refit every family along every path at full length."""
    configs = []
    for rule in dict.fromkeys(c.path_rule for c in rest):
        group = [c for c in rest if c.path_rule == rule]
        top = max(c.K for c in group)
        configs.append((replace(_sub_selector(selector, tuple(dict.fromkeys(c.family for c in group)), (rule,)),
                                k_max=top if selector.k_max is None else min(top, selector.k_max)),
                        frozenset(candidate_key(c) for c in group)))
    return configs


def _sub_selector(selector, families: tuple, rules: tuple):
    """``selector`` restricted to ``families`` and the path ``rules`` (the fixed
    single-judge candidates' rule, :data:`SINGLE_JUDGE_RULE`, is the
    ``single_judge_candidates`` switch rather than a path rule), with no progress."""
    return replace(selector, families=families, paths=tuple(r for r in rules if r != SINGLE_JUDGE_RULE),
                   single_judge_candidates=SINGLE_JUDGE_RULE in rules, progress=None)


def half_fold_configurations(configs: list, panel: Panel, D: np.ndarray, half: np.ndarray, va: np.ndarray,
                             unlabelled: np.ndarray, pick: np.ndarray | None) -> dict:
    """One fold of the learning-curve correction over several configurations
    (:func:`_deployed_configuration`, :func:`_rule_configurations`): each key's half-size predictions on the held-out rows
    ``va`` at positions ``pick``, or the string that says why it has none.

    Every configuration fits on the same rows, so one encoding of the panel serves those of
    one ``n_bins``; their paths are not reported, so each orders only the judges of the
    prefixes it fits (``fit_menu``'s ``whole_paths=False``)."""
    empty = np.zeros(0, dtype=np.int64)
    out = {}
    encodings: dict = {}        # n_bins -> the panel encoded on the half
    for sub, keys in configs:
        rows = MenuRows(path_rows=D[half], fit=D[half], scored=empty, audit=empty, unlabelled=unlabelled)
        try:
            if sub.n_bins not in encodings:
                encodings[sub.n_bins] = encode_panel(panel, rows.fit, n_bins=sub.n_bins)
            menu = fit_menu(sub, panel, rows, expand_grid=True, score_val=False, only=keys,
                            encoded=encodings[sub.n_bins], whole_paths=False)
        except ValueError as exc:       # too few rows for a path rule or a fit: no correction
            out.update(dict.fromkeys((k for k in keys if k not in out), f"not computed: {exc}"))
            continue
        preds = _predict_candidates(menu, D[va], pick=pick, keys=keys)
        for k in keys:
            if k not in out:
                out[k] = preds.get(k, "the deployed configuration is not offered at half size")
    return out


def _halves(selector, D: np.ndarray, fold_list: list, groups: np.ndarray, table_rows: TableRows) -> list:
    """Per fold of the first repeat: (half of its training rows, its held-out rows, their
    table rows, their positions to predict, the two sizes). Half the fold's training groups,
    drawn in fold order from one generator seeded by ``selector.seed``, so every caller gets
    the same halves."""
    rng = np.random.default_rng(np.random.SeedSequence([selector.seed, 1, 2]))
    in_half = np.zeros(int(groups.max(initial=-1)) + 1, dtype=bool)
    out = []
    for r, tr, va in fold_list:
        if r != 0:
            continue
        g = np.unique(groups[tr])
        keep = rng.permutation(g)[: max(1, len(g) // 2)]
        in_half[:] = False
        in_half[keep] = True
        half = tr[in_half[groups[tr]]]
        tv, pick = table_rows.in_fold(0, va)
        out.append((half, va, tv, pick, len(half), len(tr)))
    return out


def half_folds_configurations(configs: list, panel: Panel, D: np.ndarray, unlabelled: np.ndarray,
                              folds: list) -> list:
    """:func:`half_fold_configurations` of several folds, ``folds`` (half, held-out rows,
    positions) triples, in one task: their results in fold order."""
    return [half_fold_configurations(configs, panel, D, half, va, unlabelled, pick) for half, va, pick in folds]


class _FoldResults:
    """The per-fold results of tasks that each ran several folds
    (:func:`half_folds_configurations`), in fold order; ``close`` stops the tasks not yet
    run, as closing the pool's generator does."""

    def __init__(self, batches):
        self.batches = batches

    def __iter__(self):
        return (r for batch in self.batches for r in batch)

    def close(self) -> None:
        close = getattr(self.batches, "close", None)
        if close is not None:
            close()


def _refits(configs: list, members, others, panel, D, unlabelled, halves, table_rows, jobs,
            tasks_at_most: int | None = None) -> "CorrectionRefits":
    """The half-size refits of ``configs`` on every fold's half (:func:`_halves`), queued in
    the worker processes behind what runs there. ``tasks_at_most``: the folds grouped into
    this many tasks (consecutive folds per task, every fold's result as alone), so fewer
    workers take them."""
    every = list(members) + list(others)
    folds = [(half, va, pick) for half, va, _, pick, _, _ in halves]
    if tasks_at_most is not None and jobs != 1 and len(folds) > tasks_at_most:
        tasks = [(configs, panel, D, unlabelled, [folds[i] for i in g])
                 for g in np.array_split(np.arange(len(folds)), tasks_at_most)]
        results = _FoldResults(run_tasks(jobs, half_folds_configurations, tasks, queue_all=True, background=True))
    else:
        tasks = [(configs, panel, D, half, va, unlabelled, pick) for half, va, pick in folds]
        results = run_tasks(jobs, half_fold_configurations, tasks, queue_all=True)
    return CorrectionRefits(members=members, keys=[candidate_key(c) for c in every], table_rows=table_rows,
                            halves=halves, results=results, indices=[c.index for c in every])


def start_training_size_correction(selector, panel: Panel, D: np.ndarray, fold_list: list, result,
                                   unlabelled: np.ndarray, *, groups: np.ndarray | None = None,
                                   table_rows: TableRows | None = None, jobs: int = 1,
                                   also: list | None = None) -> "CorrectionRefits":
    """The half-size refits of :func:`training_size_correction`, started (in worker
    processes when ``jobs`` allows; otherwise each runs when :meth:`CorrectionRefits.finish`
    asks for it). They read the deployed members (chosen before this call) and the folds,
    never the bootstrap estimate, so the caller computes that meanwhile.

    ``also``: more member sets (lists of candidate indices: the frontier's points,
    :meth:`.frontier.FrontierChoices.member_sets`). Those members the deployed
    configuration fits anyway are predicted with it; :func:`start_point_refits` refits the
    rest on the same halves. A member's half-size prediction depends only on its own path
    rule, K, family and parameters and the half's rows, so every set's correction is the one
    a selection deploying that set (``--max-judges``) computes."""
    # every tied member, as the choice averaged them (members merged into one deployed
    # model agree on the deployable rows, not necessarily when refitted on half of them)
    members = [result.candidates[i] for i in result.tied_members]
    others, seen = [], {c.index for c in members}
    for group in also or ():
        for i in group:
            if i not in seen:
                seen.add(i)
                others.append(result.candidates[i])
    first, inside, rest = _deployed_configuration(selector, members, others)
    groups = group_codes(panel.group_ids[D]) if groups is None else groups
    table_rows = TableRows(selector, D, fold_list, None) if table_rows is None else table_rows
    refits = _refits([first], members, inside, panel, D, unlabelled,
                     _halves(selector, D, fold_list, groups, table_rows), table_rows, jobs)
    refits.rest = rest
    return refits


def start_point_refits(selector, panel: Panel, D: np.ndarray, base: "CorrectionRefits", unlabelled: np.ndarray,
                       *, jobs: int = 1) -> "CorrectionRefits":
    """The half-size refits of the frontier's members the deployed configuration does not
    fit (``base.rest``, :func:`start_training_size_correction` with ``also``), started as
    their own tasks on the same halves so the default's correction never waits for them;
    their :meth:`CorrectionRefits.correction` reads ``base``'s predictions too.

    They run as one task per worker process (each task runs its folds one after the
    other), so they spread over every worker while this process computes the bootstrap
    estimate and the frontier's replays. Under the full-limit rule each limited level
    deploys its own prefix, and on a panel of many judges the refits take longer than the
    bootstrap and the replays: held to one worker, this process then waited for them
    (docs/performance.md, "the points' refits on every worker"); on every worker they
    share the cores with this process for a shorter time. Every fold's result is the one
    it gets as its own task."""
    if not base.rest:
        return base
    refits = _refits(_rule_configurations(selector, base.rest), [], base.rest, panel, D, unlabelled,
                     base.halves, base.table_rows, jobs, tasks_at_most=pool_workers(jobs))
    refits.base = base
    return refits


class CorrectionRefits:
    """The started half-size refits of the learning-curve correction
    (:func:`start_training_size_correction`) and what their results are read with."""

    def __init__(self, *, members, keys, table_rows, halves, results, indices=None):
        self.members, self.keys, self.table_rows = members, keys, table_rows
        # the candidate index of each key (keys[i] is the key of candidate indices[i])
        self.key_of = dict(zip(indices if indices is not None else [c.index for c in members], keys))
        # per fold of the first repeat (:func:`_halves`): the half, its held-out rows, their
        # table rows, positions and the two sizes; later refits reuse them
        self.halves, self.results = halves, results
        self.held = [h[2] for h in halves]
        self.n_half, self.n_train = [h[4] for h in halves], [h[5] for h in halves]
        self._small: dict | None = None      # per key its half-size predictions, or why there are none
        self._read = None
        self.rest: list = []                 # members left to :func:`start_point_refits`
        self.base: CorrectionRefits | None = None     # refits whose predictions these read too

    def discard(self) -> None:
        """No correction is wanted: stop the refits that have not run."""
        close = getattr(self.results, "close", None)
        if close is not None:
            close()

    def _collect(self) -> dict:
        """Every key's half-size predictions per table row of the first repeat (NaN where no
        fold held the row out), or the reason there are none (a string); the refits are read
        once."""
        if self._small is None:
            small = {k: np.full(len(self.table_rows.rep[0]), np.nan) for k in self.keys}
            for tv, preds in zip(self.held, self.results):
                for k in self.keys:
                    if isinstance(small[k], str):
                        continue
                    if isinstance(preds[k], str):
                        small[k] = preds[k]
                    else:
                        small[k][tv] = preds[k]
            self._small = small
        return self._small

    def _half_size(self, index: int):
        """Candidate ``index``'s half-size predictions (or why there are none), from these
        refits or their ``base``."""
        if index in self.key_of:
            return self._collect()[self.key_of[index]]
        return self.base._half_size(index)

    def finish(self, selector, panel: Panel, D: np.ndarray, heldout: HeldOut, distinct: DistinctRows) -> dict:
        """The correction (:func:`training_size_correction`) from the refits' predictions."""
        return self.reader(selector, panel, D, heldout, distinct)(self.members)

    def reader(self, selector, panel: Panel, D: np.ndarray, heldout: HeldOut, distinct: DistinctRows):
        """:meth:`correction`, to be called later: the refits are waited for at its first
        call, not now."""
        self._read = (selector, panel, D, heldout, distinct)
        return self.correction

    def correction(self, members) -> dict:
        """The correction of the predictor averaging ``members`` (candidates, or indices
        into the result's candidates that were among the deployed members or ``also``),
        after :meth:`finish`: r(n) = a + b/n through the paired held-out risks at the
        half and the training size, delta = max(b, 0) * (1/n_train - 1/n_D), with the floor a
        kept >= 0 (a loss is never negative: b at most r(n_train) n_train)."""
        selector, panel, D, heldout, distinct = self._read
        index = [int(m) if isinstance(m, (int, np.integer)) else m.index for m in members]
        halves = [self._half_size(i) for i in index]
        for h in halves:
            if isinstance(h, str):       # a member has no half-size refit
                return {"delta": 0.0, "note": h}
        table_rows = self.table_rows
        small = np.mean(halves, axis=0)
        small = small[table_rows.inverse[0][distinct.rep]]          # per distinct held-out row
        first_repeat = np.ascontiguousarray(heldout.stored(heldout.vcol[index])[0])
        full = first_repeat.mean(axis=1)
        obj = selector.objective
        from ..measures.diagnostics import losses
        y = panel.labels[D][distinct.rep]
        n = distinct.counts
        r_small = float(n @ losses(obj, y, small) / n.sum())
        r_full = float(n @ losses(obj, y, full) / n.sum())
        nh, nt, nd = float(np.mean(self.n_half)), float(np.mean(self.n_train)), float(len(D))
        slope = (r_small - r_full) / (1.0 / nh - 1.0 / nt)
        # a loss is never negative, so neither is the curve's floor a = r_full - b/n_train: a
        # curve falling faster than 1/n between the two sizes (a near-noiseless label) is
        # extrapolated with a = 0 through the training size's risk, b = r_full n_train
        rising = max(slope, 0.0)
        b = min(rising, max(r_full, 0.0) * nt)
        delta = b * (1.0 / nt - 1.0 / nd)
        return {"delta": float(delta), "risk_half": r_small, "risk_train": r_full, "n_half": nh,
                "n_train": nt, "n_deployable": nd, "model": "a + b/n" if b == rising else "b/n (a >= 0)"}


#: the label of the fixed paths the own-set refits fit (:class:`OwnSetLevels`)
OWN_SET_LABEL = "own-set"


class OwnSetLevels:
    """The own-set level of a deployed predictor (``FCPSSelector(own_set_level=True)``).

    A path prefix's held-out column is the path *rule's*: each fold's rule builds its own
    judge set, and the refit on all deployable rows deploys the set the rule builds there.
    Where some fold built another set (judge-set stability < 1) the column is not the
    deployed members' own. :meth:`shift` refits the members (family, parameters) with their
    deployed judge sets fixed in every fold of the selection (``fold_list``, every repeat;
    a member the screen kept at its first repeat reads that repeat in every repeat, as its
    column does) and returns own - held-out, the two risks read on the same held-out rows.
    The refits run here, one :func:`.menu.fit_menu` per fold and (judge set, rule) on one
    fixed path, only for predictors with an unstable member, each model once."""

    def __init__(self, settings, panel: Panel, D: np.ndarray, fold_list: list, heldout: HeldOut,
                 unlabelled: np.ndarray, candidates: list):
        self.settings, self.panel, self.D, self.fold_list = settings, panel, D, fold_list
        self.heldout, self.unlabelled, self.candidates = heldout, unlabelled, candidates
        self.at = np.searchsorted(D, heldout.rows)          # the held-out rows' positions in D
        self._preds: dict[int, np.ndarray] = {}             # candidate -> (repeats, len(D)) own predictions
        self._shift: dict[tuple, dict | None] = {}

    def _refit(self, cands: list) -> None:
        """Own predictions of ``cands`` (candidates without them), grouped by judge set and rule."""
        from ..measures.judge_paths import JudgePath
        groups: dict[tuple, list] = {}
        for c in cands:
            groups.setdefault((tuple(c.judge_idx), c.path_rule), []).append(c)
        D, n_rows = self.D, len(self.D)
        empty = np.zeros(0, dtype=np.int64)
        R = max(r for r, _, _ in self.fold_list) + 1
        for (judges, rule), members in groups.items():
            path = JudgePath(rule, judges, (len(judges),), label=OWN_SET_LABEL)
            keys = {c.index: menu_key(OWN_SET_LABEL, len(judges), c.family, c.params) for c in members}
            only = frozenset(keys.values())
            out = {i: np.full((R, n_rows), np.nan) for i in keys}
            for r, tr, va in self.fold_list:
                if all(c.repeats == 1 for c in members) and r > 0:
                    continue
                rows = MenuRows(path_rows=D[tr], fit=D[tr], scored=empty, audit=empty, unlabelled=self.unlabelled)
                menu = fit_menu(self.settings, self.panel, rows, expand_grid=True, score_val=False, only=only,
                                diagnostics=False, fixed_paths=[path])
                preds = _predict_candidates(menu, D[va], keys=only)
                for i, key in keys.items():
                    out[i][r, va] = preds[key]
            for c in members:
                p = out[c.index]
                if c.repeats == 1:
                    p[:] = p[0]
                self._preds[c.index] = p

    def shift(self, members) -> dict | None:
        """``{"shift", "own_risk", "heldout_risk"}`` of the predictor averaging ``members``
        (candidate indices), shift = own - held-out; None when every member is stable (its
        column is its own: the shift would be 0)."""
        key = tuple(sorted(int(m) for m in members))
        if key in self._shift:
            return self._shift[key]
        cands = [self.candidates[i] for i in key]
        if all(is_stable(c) for c in cands):
            self._shift[key] = None
            return None
        self._refit([c for c in cands if c.index not in self._preds])
        from ..measures.diagnostics import losses
        obj = self.settings.objective
        h = self.heldout
        y = h.y
        own_p = np.mean([self._preds[i] for i in key], axis=0)[:, self.at]          # (repeats, held-out rows)
        own = float(np.mean([losses(obj, y, own_p[r]) for r in range(own_p.shape[0])], axis=0).mean())
        rule_d = h.average_losses(obj, list(key))                                   # per distinct held-out row
        rule = float((rule_d if h.inverse is None else rule_d[h.inverse]).mean())
        self._shift[key] = {"shift": own - rule, "own_risk": own, "heldout_risk": rule}
        return self._shift[key]

