"""``logistic_pairwise``: L2 logistic stacking on scores and their pairwise products.

Model: P(Y=1 | x) = sigmoid(w'phi(x) + b), phi as in ``ridge_pairwise_iso``.
"""

from ._linear import LogisticBase, PairwiseFeatures


class LogisticPairwise(PairwiseFeatures, LogisticBase):
    name = "logistic_pairwise"
    complexity_rank = 6
