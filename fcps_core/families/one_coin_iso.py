"""``one_coin_iso``: supervised one-coin reliability vote + isotonic (paper, Experiments).

The paper's exact recipe:
1. Binarise labels and scalarised verdicts at 1/2: a score above 1/2 votes +1, below 1/2
   votes -1, exactly 1/2 (tie, parse_error, missing) abstains; a label above 1/2 is
   class 1, below is class 0, exactly 1/2 is left out of the counts.
2. Each judge's calibration accuracy over its non-abstaining votes on labelled,
   non-neutral rows is Laplace-smoothed, (correct + 1) / (votes + 2), clipped to
   [0.05, 0.95]; its symmetric weight is w_j = log(acc_j / (1 - acc_j)).
3. The score is the Laplace-smoothed class prior log-odds plus sum_j w_j v_j, with
   prior = (positives + 1) / (labelled non-neutral + 2).
4. The score is isotonic-calibrated on the calibration block (against the original y).
"""

from __future__ import annotations

import numpy as np

from .base import IsotonicMap, label_ranks
from .estimator import Aggregator
from .fitted import OneCoinModel, votes


class OneCoinIsotonic(OneCoinModel, Aggregator):
    complexity_rank = 2
    ladder = 1
    #: a judge's weight reads its own column (weighted counts: sums of row multiplicities,
    #: exact in any order) and a prefix's score is a running sum, so a path cut after
    #: prefix K fits the prefixes up to K alike
    path_prefixes_apart = True
    path_keeps_prefixes = True

    def _fit(self, X, y, unlabelled):
        self.weights_, self.prior_logit_ = self._judge_weights(votes(X.scores), y, X.w)
        self.iso_ = IsotonicMap().fit(self._score(X), y, X.weight)

    @staticmethod
    def _judge_weights(v: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, float]:
        """Each judge's log-odds weight (from its own column only) and the prior log-odds;
        ``w`` are row multiplicities, so counts are weighted sums."""
        yb = np.sign(y - 0.5)           # +1 / -1 / 0 (neutral label, left out)
        usable = (v != 0) & (yb != 0)[:, None]
        correct = w @ ((v == yb[:, None]) & usable)
        total = w @ usable
        acc = np.clip((correct + 1.0) / (total + 2.0), 0.05, 0.95)
        pos, neg = float(w @ (yb > 0)), float(w @ (yb < 0))
        prior = (pos + 1.0) / (pos + neg + 2.0)
        return np.log(acc / (1.0 - acc)), float(np.log(prior / (1.0 - prior)))

    @staticmethod
    def _prefix_scores(v: np.ndarray, weights: np.ndarray, prior_logit: float) -> np.ndarray:
        """Column K-1: the K-prefix score prior + sum_{j<K} w_j v_j, accumulated in the order
        of ``rowwise_dot`` (so bit for bit the same as scoring each prefix on its own)."""
        terms = np.empty((v.shape[0], v.shape[1] + 1))
        terms[:, 0] = prior_logit
        np.multiply(v, weights, out=terms[:, 1:])
        return np.cumsum(terms, axis=1)[:, 1:]

    @classmethod
    def fit_path(cls, X, y, unlabelled, sizes, keep=None, **params):
        """A judge's weight reads only its own column, so the path's weights serve every
        prefix and the prefix scores are running sums (one pass instead of one per K).
        ``keep`` (sizes; None: all): only those prefixes' maps are made, the others'
        entries are None."""
        X, y, unlabelled = cls._labelled_rows(X, y, unlabelled)
        y = cls(**params)._start_fit(X, y)
        K_max = max(sizes)
        v = votes(X.scores[:, :K_max])
        weights, prior = cls._judge_weights(v, y, X.w)
        scores = cls._prefix_scores(v, weights, prior)
        y_rank = label_ranks(y)          # the prefixes' maps share the labels
        models = []
        for K in sizes:
            if keep is not None and K not in keep:
                models.append(None)
                continue
            model = cls(**params)
            model._start_fit(X, y)
            model.weights_, model.prior_logit_ = weights[:K].copy(), prior
            model.iso_ = IsotonicMap().fit(scores[:, K - 1], y, X.weight, y_rank=y_rank)
            models.append(model)
        return models

    @classmethod
    def predict_path(cls, models, sizes, X):
        last = models[-1]
        if any(m.prior_logit_ != last.prior_logit_
               or not np.array_equal(m.weights_, last.weights_[:len(m.weights_)]) for m in models):
            return super().predict_path(models, sizes, X)      # not one path's models
        scores = cls._prefix_scores(votes(X.scores[:, :max(sizes)]), last.weights_, last.prior_logit_)
        return np.column_stack([np.clip(m.iso_.predict(scores[:, K - 1]), 0.0, 1.0)
                                for m, K in zip(models, sizes)])
