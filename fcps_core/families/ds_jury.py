"""``ds_jury``: unsupervised Dawid-Skene jury, oriented and isotonic-calibrated
(paper Table tab:jury-baseline).

Model: a latent binary truth T with prior pi; judge j votes 1 with probability
sensitivity_j when T = 1 and votes 0 with probability specificity_j when T = 0; votes are
conditionally independent given T. Votes are scalar scores binarised at 1/2 (1/2 =
abstain). The parameters are fitted by EM (Laplace-smoothed M-step) on the calibration rows
plus **all unlabelled traffic the selector passes** (every row outside M and the research
test block T), without labels. The posterior log-odds is then oriented (its sign is
flipped if it correlates negatively with the calibration labels) and isotonic-calibrated on
the calibration block. Prediction on new rows uses the fitted parameters (no refit).

Labels. The EM is unsupervised and the labels serve only the orientation and the
calibration, so the family is semi-supervised: rows with a NaN label (unlabelled) join the
EM's rows with the unlabelled traffic, and the labelled rows orient and calibrate. With no
label at all (``fit(X, None)`` or every label NaN) the model is the plain unsupervised
Dawid-Skene jury: oriented as the EM's majority-vote start (judges better than chance),
uncalibrated (``iso_`` is None: ``predict`` is the EM posterior P(T = 1 | votes)), and
``ybar_`` is the posterior mean over the EM's rows. ``n_iter_`` is the number of EM
iterations of a single fit (:meth:`fit`; the path fits do not record it).

EM starts from the majority vote and stops when one EM step moves no row's posterior by
``tol`` or after ``max_iter`` iterations (:mod:`.ds_em`: the EM and its runners). Along a
judge path (:meth:`DawidSkeneJury.fit_paths`) every prefix runs its own EM, the same
iterates as on its own up to rounding: short prefixes with repeated vote patterns on those
patterns, all in lockstep; the others on the path's rows, in chunks of nested prefixes on
matrix products.
"""

from __future__ import annotations

import numpy as np

from ..measures.judge_paths import extend_ids
from .base import IsotonicMap, label_ranks
from . import ds_em
from .ds_em import BATCH_CELLS, distinct_votes, em_fit, em_fit_batched, em_fit_nested_many
from .estimator import Aggregator
from .fitted import DSJuryModel, vote_dots


def _weighted_corr(a: np.ndarray, b: np.ndarray, weight: np.ndarray | None) -> float:
    if weight is None:
        return float(np.corrcoef(a, b)[0, 1])
    w = weight / weight.sum()
    da, db = a - w @ a, b - w @ b
    return float((w * da) @ db / np.sqrt((w * da) @ da * ((w * db) @ db)))


class DawidSkeneJury(DSJuryModel, Aggregator):
    complexity_rank = 7
    ladder = 1
    uses_unlabelled = True
    needs_labels = False
    joint_paths = True
    path_prefixes_apart = False     # chunks of prefixes share each EM step's products

    def _fit(self, X, y, unlabelled):
        votes, count = self._em_rows(X, unlabelled)
        *params, _, self.n_iter_ = em_fit(votes, count, max_iter=self.max_iter, tol=self.tol,
                                         return_n_iter=True)
        self._finish(X, y, params)

    def _fit_without_labels(self, unlabelled):
        """The unsupervised jury on label-free rows only: EM, no orientation flip, no
        calibration (the EM posterior is the prediction)."""
        if unlabelled.weight is not None and np.any(unlabelled.weight <= 0):
            raise ValueError("row weights must be positive, one per row")
        votes, count = distinct_votes(unlabelled.scores, unlabelled.w)
        self.prior_logit_, self.w1_, self.w0_, post, self.n_iter_ = em_fit(
            votes, count, max_iter=self.max_iter, tol=self.tol, return_n_iter=True)
        self.ybar_ = float(count @ post / count.sum())
        self.orientation_ = 1.0
        self.iso_ = None

    @staticmethod
    def _em_rows(X, unlabelled):
        """EM input: distinct vote rows of the calibration rows plus the unlabelled traffic."""
        S = X.scores if unlabelled is None else np.vstack([X.scores, unlabelled.scores])
        w = X.w if unlabelled is None else np.concatenate([X.w, unlabelled.w])
        return distinct_votes(S, w)

    def _finish(self, X, y, params, raw=None, y_rank=None) -> None:
        """Orientation and isotonic calibration of the EM log-odds on the calibration rows
        (``y_rank``: the labels' :func:`~.base.label_ranks`, shared by a path's prefixes)."""
        self.prior_logit_, self.w1_, self.w0_ = params
        if raw is None:
            raw = self._logodds(X.scores)
        self.orientation_ = 1.0
        if np.ptp(raw) > 0 and np.ptp(y) > 0 and _weighted_corr(raw, y, X.weight) < 0:
            self.orientation_ = -1.0
        self.iso_ = IsotonicMap().fit(self.orientation_ * raw, y, X.weight, y_rank=y_rank)

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, **params):
        """Every prefix in ``sizes`` fitted as on its own (EM from the majority vote), from
        the path's vote rows, oriented and calibrated with one pass over the columns."""
        return cls.fit_paths([(X, y, unlabelled, sizes)], **params)[0]

    @classmethod
    def fit_paths(cls, jobs, keep=None, **params):
        """:meth:`fit_path` for several paths: the same fits as each prefix on its own (up
        to rounding, and the nested runner's single-precision products). Prefixes with few
        vote cells whose rows repeat (at most half as many distinct patterns as the path
        has rows), or with at most ``ds_em.NESTED_MIN_CELLS`` cells, run on their patterns,
        all paths' in lockstep (:func:`em_fit_batched`, double precision); the others run
        on the path's rows in chunks of nested prefixes (:func:`em_fit_nested_many`).

        ``keep`` (per job, a set of prefix sizes or None for all): only these prefixes'
        models are made, the others' entries are None (a refit restricted to some
        candidates, :func:`.selection.menu.fit_menu` with ``only``). The batches and chunks
        are formed from every size as without ``keep`` and only the EMs of kept prefixes
        run in them, so each kept model is bit for bit the one made without ``keep``: a
        prefix's lockstep iterates read its own rows alone (:func:`em_fit_batched`), a
        chunk with no kept prefix is skipped whole, the others run as they are."""
        keep = [None] * len(jobs) if keep is None else list(keep)
        proto = cls(**params)
        problems, owners, runs = [], [], []
        by_job: list[dict] = [{} for _ in jobs]
        paths = []                  # per job: (votes, count, long prefix sizes)
        jobs = [(*cls._labelled_rows(X, y, U), sizes) for X, y, U, sizes in jobs]
        if any(len(y) == 0 for _, y, _, _ in jobs):     # a job without labels: fits one by one
            return [super(DawidSkeneJury, cls).fit_path(X, y, U, sizes, **params)
                    for X, y, U, sizes in jobs]
        for i, (X, y, unlabelled, sizes) in enumerate(jobs):
            proto._start_fit(X, y)
            K_max = max(sizes)
            S, w = X.scores[:, :K_max], X.w
            if unlabelled is not None:
                S, w = np.vstack([S, unlabelled.scores[:, :K_max]]), np.concatenate([w, unlabelled.w])
            votes, count = distinct_votes(S, w)
            digits = (votes[:, 0::2] + 2 * votes[:, 1::2]).astype(np.int64)
            group = np.zeros(len(count), dtype=np.int64)   # each row's vote pattern on the prefix
            long = []
            for K in range(1, K_max + 1):
                group = extend_ids(group, digits[:, K - 1])
                if K not in sizes:
                    continue
                n_groups = int(group.max()) + 1 if len(group) else 0
                if 4 * n_groups * 2 * K > BATCH_CELLS or (2 * n_groups > len(count)
                                                          and n_groups * 2 * K > ds_em.NESTED_MIN_CELLS):
                    long.append(K)                           # few repeated patterns: the path's rows
                    if n_groups == len(count):
                        # every row its own pattern, on every longer prefix too: their
                        # test then grows with K alone, so they are all long
                        long.extend(k for k in range(K + 1, K_max + 1) if k in sizes)
                        break
                else:
                    first = np.empty(n_groups, dtype=np.int64)
                    first[group[::-1]] = np.arange(len(group) - 1, -1, -1)
                    problems.append((votes[first, :2 * K], np.bincount(group, weights=count, minlength=n_groups)))
                    owners.append((i, K))
                    runs.append(keep[i] is None or K in keep[i])
            paths.append((votes, count, long))
        for (i, K), em in zip(owners, em_fit_batched(problems, max_iter=proto.max_iter, tol=proto.tol,
                                                                run=runs)):
            if em is not None:
                by_job[i][K] = em[:3]
        nested = em_fit_nested_many([(votes, count, long) for votes, count, long in paths],
                                    max_iter=proto.max_iter, tol=proto.tol,
                                    keep=[None if k is None else [K in k for K in long]
                                          for k, (_, _, long) in zip(keep, paths)])
        for i, ((_, _, long), ems) in enumerate(zip(paths, nested)):
            for K, em in zip(long, ems):
                if em is not None:
                    by_job[i][K] = em[:3]
        out = []
        for (X, y, _, sizes), fits, kept in zip(jobs, by_job, keep):
            y = np.asarray(y, dtype=float)
            y_rank = label_ranks(y)
            made = [K for K in sizes if kept is None or K in kept]
            raw = vote_dots(X.scores, [fits[K][1] for K in made], [fits[K][2] for K in made],
                            [fits[K][0] for K in made])
            models = dict.fromkeys(sizes)
            for i, K in enumerate(made):
                model = cls(**params)
                model._start_fit(X, y)
                model._finish(X.first(K), y, fits[K], raw=raw[:, i], y_rank=y_rank)
                models[K] = model
            out.append([models[K] for K in sizes])
        return out

    @classmethod
    def predict_path(cls, models, sizes, X):
        raw = vote_dots(X.scores, [m.w1_ for m in models], [m.w0_ for m in models],
                        [m.prior_logit_ for m in models])
        return np.column_stack([np.clip(m._calibrated(m.orientation_ * raw[:, i]), 0.0, 1.0)
                                for i, m in enumerate(models)])
