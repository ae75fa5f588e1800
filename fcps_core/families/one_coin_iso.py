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

from .base import Aggregator, IsotonicMap, rowwise_dot


def votes(scores: np.ndarray) -> np.ndarray:
    return np.sign(scores - 0.5)


class OneCoinIsotonic(Aggregator):
    name = "one_coin_iso"
    complexity_rank = 2
    ladder = 1

    def _fit(self, X, y, unlabelled):
        v = votes(X.scores)
        w = X.w                         # row multiplicities: counts are weighted sums
        yb = np.sign(y - 0.5)           # +1 / -1 / 0 (neutral label, left out)
        usable = (v != 0) & (yb != 0)[:, None]
        correct = w @ ((v == yb[:, None]) & usable)
        total = w @ usable
        acc = np.clip((correct + 1.0) / (total + 2.0), 0.05, 0.95)
        self.weights_ = np.log(acc / (1.0 - acc))
        pos, neg = float(w @ (yb > 0)), float(w @ (yb < 0))
        prior = (pos + 1.0) / (pos + neg + 2.0)
        self.prior_logit_ = float(np.log(prior / (1.0 - prior)))
        self.iso_ = IsotonicMap().fit(self._score(X), y, X.weight)

    def _score(self, X):
        return rowwise_dot(votes(X.scores), self.weights_, self.prior_logit_)

    def _predict(self, X):
        return self.iso_.predict(self._score(X))

    def _state(self):
        return {"weights": self.weights_.tolist(), "prior_logit": self.prior_logit_,
                "isotonic": self.iso_.to_dict()}

    def _load(self, state):
        self.weights_ = np.asarray(state["weights"], float)
        self.prior_logit_ = float(state["prior_logit"])
        self.iso_ = IsotonicMap.from_dict(state["isotonic"])
