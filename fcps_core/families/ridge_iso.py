"""``ridge_iso``: ridge stacking of the K scalar scores + isotonic calibration.

Model: P(Y=1 | x) = m(w'x + b), (w, b) = ridge regression of y on the scores (alpha = 1),
m isotonic increasing, both fitted on the calibration block (paper Prop. prop:stacking).
"""

from ._linear import RidgeIsotonicBase
from .fitted import RidgeIsoModel


class RidgeIsotonic(RidgeIsoModel, RidgeIsotonicBase):
    complexity_rank = 3
    ladder = 2
