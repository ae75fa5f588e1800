"""``logistic``: L2 logistic stacking of the K scalar scores.

Model: P(Y=1 | x) = sigmoid(w'x + b), fitted by penalised maximum likelihood (C = 1) on
the calibration block; fractional labels enter as soft targets (see ``_linear``).
"""

from ._linear import LogisticBase
from .fitted import LogisticModel


class LogisticStack(LogisticModel, LogisticBase):
    complexity_rank = 4
    ladder = 2
