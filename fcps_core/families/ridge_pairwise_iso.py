"""``ridge_pairwise_iso``: ridge stacking on scores and pairwise products + isotonic.

Model: P(Y=1 | x) = m(w'phi(x) + b) with phi(x) = (x_1..x_K, x_i x_j for i < j): the
second-order interaction features (K + K(K-1)/2 of them).
"""

from ._linear import RidgeIsotonicBase
from .fitted import RidgePairwiseIsoModel


class RidgePairwiseIsotonic(RidgePairwiseIsoModel, RidgeIsotonicBase):
    ladder = 3
    complexity_rank = 5
