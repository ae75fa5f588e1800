"""``logistic_pairwise``: L2 logistic stacking on scores and their pairwise products.

Model: P(Y=1 | x) = sigmoid(w'phi(x) + b), phi as in ``ridge_pairwise_iso``.
"""

from ._linear import LogisticBase
from .fitted import LogisticPairwiseModel


class LogisticPairwise(LogisticPairwiseModel, LogisticBase):
    ladder = 3
    complexity_rank = 6
