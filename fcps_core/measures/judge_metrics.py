"""Metrics of the judges report, every judge or every pair at once: kappa and ROC AUC against
the label, agreement and error-correlation matrices, redundancy, calibration bins (ECE) and
the Brier score, and the JSON rounding of matrices. :mod:`fcps_core.selection.judges_report` states
what each figure means and assembles the report from these.

The report is computed by every selection (in its worker processes too), so this module is
numpy only: the scikit-learn and SciPy metrics it reproduces (``mean_squared_error``,
``brier_score_loss``, ``calibration_curve``, ``cohen_kappa_score``, ``roc_auc_score``,
``scipy.stats.rankdata``) are computed by their own steps, to the bit, and
``tests/test_judge_metrics_reference.py`` compares them with those functions."""

from __future__ import annotations

import warnings

import numpy as np

#: agreement (kappa or rank correlation) or error correlation at or above this flags a pair
REDUNDANCY_THRESHOLD = 0.9
#: equal-count bins of the reliability diagram and the ECE
ECE_BINS = 10
#: the decision code of no decision (a score of exactly 1/2, or none)
ABSTAIN = 2


def json_number(v, digits: int | None = None):
    """A finite number as a float (rounded to ``digits``), anything else as None (JSON null)."""
    if v is None or not np.isfinite(v):
        return None
    return round(float(v), digits) if digits is not None else float(v)


def rounded_matrix(M: np.ndarray, digits: int = 4) -> list:
    """``[[json_number(v, digits) for v in row] for row in M]`` without a Python call per entry.
    ``np.round`` (x * 10^d, round half to even, / 10^d) returns Python's correctly rounded
    ``round(x, d)`` whenever x * 10^d is farther than its own rounding error from a half
    (both then pick the same integer k, and k / 10^d is the double nearest k * 10^-d); the
    entries within a few ulps of a half, or too large for the product to be exact, go
    through ``round`` itself. Entries that are not finite become None."""
    M = np.asarray(M, dtype=float)
    finite = np.isfinite(M)
    X = np.where(finite, M, 0.0)
    scaled = X * 10.0 ** digits
    frac = scaled - np.floor(scaled)
    doubt = finite & ((np.abs(frac - 0.5) <= 4 * np.spacing(np.abs(scaled))) | (np.abs(scaled) >= 2.0 ** 52))
    out = np.round(X, digits).astype(object)       # elements are Python floats
    for idx in zip(*np.nonzero(doubt)):
        out[idx] = round(float(M[idx]), digits)
    out[~finite] = None
    return out.tolist()


def brier(y: np.ndarray, p: np.ndarray) -> float | None:
    """Brier score: ``brier_score_loss(y, p, pos_label=1)`` for 0/1 labels, the same mean
    squared error (``mean_squared_error``) against soft labels; None without rows or with a
    NaN prediction. Infinite values, a NaN label or (0/1 labels) a prediction outside [0, 1]
    are a ValueError, as in scikit-learn."""
    y, p = np.asarray(y, float), np.asarray(p, float)
    if len(y) == 0 or np.isnan(p).any():
        return None
    if len(y) != len(p) or not (np.isfinite(y).all() and np.isfinite(p).all()):
        raise ValueError("the Brier score needs as many finite predictions as labels")
    if np.isin(y, (0.0, 1.0)).all():
        return binary_brier(y, p)
    return float(column_mean_squared_errors(y.reshape(-1, 1), p.reshape(-1, 1)).mean())


def column_mean_squared_errors(Y: np.ndarray, P: np.ndarray) -> np.ndarray:
    """Mean squared error of each column of ``P`` against the same column of ``Y`` (rows x
    outputs): ``mean_squared_error(Y, P, multioutput="raw_values")`` to the bit, by its
    steps: ``np.average((Y - P) ** 2, axis=0)`` on the arrays as given (their memory layout
    sets numpy's summation order)."""
    Y, P = np.asarray(Y, dtype=float), np.asarray(P, dtype=float)
    if Y.shape != P.shape or Y.ndim != 2:
        raise ValueError(f"labels {Y.shape} and predictions {P.shape} must be equal 2-D shapes")
    return np.average((Y - P) ** 2, axis=0)


def binary_brier(y: np.ndarray, p: np.ndarray) -> float:
    """``brier_score_loss(y, p, pos_label=1)`` for 0/1 labels ``y`` and probabilities ``p`` of
    the label 1, to the bit, by its steps: the one-hot labels (1 - y, y) against (1 - p, p),
    squared differences summed per row, averaged, halved (the binary scale). A prediction
    outside [0, 1] is a ValueError, as there."""
    y, p = np.asarray(y, dtype=float), np.asarray(p, dtype=float)
    if p.max() > 1 or p.min() < 0:
        raise ValueError("a probability outside [0, 1] has no Brier score")
    positive = (y == 1).astype(np.int64)
    onehot = np.stack((1 - positive, positive), axis=1).astype(float)
    return float(np.average(np.sum((onehot - np.stack((1 - p, p), axis=1)) ** 2, axis=1)) * 0.5)


def calibration_curve(y: np.ndarray, p: np.ndarray, n_bins: int = 5,
                      strategy: str = "uniform") -> tuple[np.ndarray, np.ndarray]:
    """(fraction of label 1, mean prediction) in each non-empty bin of the predictions ``p``
    of 0/1 labels ``y``: ``sklearn.calibration.calibration_curve(y, p, n_bins=n_bins,
    strategy=strategy)`` to the bit, by its steps. ``uniform``: ``n_bins`` equal-width bins of
    [0, 1]; ``quantile``: edges at the percentiles ``linspace(0, 1, n_bins + 1) * 100`` of
    ``p`` (tied predictions never straddle an edge, so bins can merge). Each prediction goes
    to the bin ``searchsorted(inner edges, p)`` (an edge value joins the lower bin). A
    prediction outside [0, 1], or more than two label values, is a ValueError, as there."""
    y, p = np.asarray(y).ravel(), np.asarray(p, dtype=float).ravel()
    if len(y) != len(p):
        raise ValueError(f"{len(y)} labels for {len(p)} predictions")
    if p.min() < 0 or p.max() > 1:
        raise ValueError("y_prob has values outside [0, 1].")
    if len(np.unique(y)) > 2 or not np.isin(y, (0, 1)).all():
        raise ValueError("calibration_curve takes 0/1 labels")
    if strategy == "quantile":
        edges = np.percentile(p, np.linspace(0, 1, n_bins + 1) * 100)
    elif strategy == "uniform":
        edges = np.linspace(0.0, 1.0, n_bins + 1)
    else:
        raise ValueError("strategy must be 'quantile' or 'uniform'")
    ids = np.searchsorted(edges[1:-1], p)
    sums = np.bincount(ids, weights=p, minlength=n_bins)
    positives = np.bincount(ids, weights=(y == 1), minlength=n_bins)
    total = np.bincount(ids, minlength=n_bins)
    nonzero = total != 0
    return positives[nonzero] / total[nonzero], sums[nonzero] / total[nonzero]


# -- pieces ---------------------------------------------------------------------------------
def decisions(x: np.ndarray) -> np.ndarray:
    """1 above 1/2, 0 below, :data:`ABSTAIN` at exactly 1/2 or NaN."""
    return np.where(x > 0.5, 1, np.where(x < 0.5, 0, ABSTAIN))


def label_kappas(yb: np.ndarray, decided: np.ndarray) -> np.ndarray:
    """Cohen's kappa of each column of ``decided`` (rows x judges, codes 0, 1, :data:`ABSTAIN`)
    against the 0/1 labels ``yb``: ``cohen_kappa_score(yb, decided[:, j])`` for every j, to the
    bit, NaN where sklearn returns NaN (no expected disagreement: label and decision constant on
    one category). One bincount gives every judge's 3 x 3 confusion (label x decision); kappa
    = 1 - observed / expected disagreement, with sklearn's expected matrix outer(decision
    counts, label counts) / n summed in sklearn's order. A category absent from both vectors
    only adds zero entries, which leave sklearn's sum over its smaller matrix unchanged."""
    n, K = decided.shape
    cells = (9 * np.arange(K) + 3 * np.asarray(yb, dtype=np.int64)[:, None] + decided).ravel()
    C = np.bincount(cells, minlength=9 * K).reshape(K, 3, 3).astype(float)
    expected = C.sum(axis=1)[:, :, None] * C.sum(axis=2)[:, None, :] / float(n)
    off = 1.0 - np.eye(3)
    observed = (off * C).reshape(K, 9).sum(axis=1)
    chance = (off * expected).reshape(K, 9).sum(axis=1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(chance == 0, np.nan, 1.0 - observed / chance)


def label_aucs(yb: np.ndarray, scores: np.ndarray) -> np.ndarray:
    """ROC AUC of each column of ``scores`` (rows x judges) against 0/1 labels ``yb`` with both
    classes: ``roc_auc_score(yb, scores[:, j])`` for every j, to the bit, by sklearn's own steps
    for all judges at once. Each column is sorted by descending score (sklearn's stable order);
    the last row of each run of equal scores is a threshold, with tps positives at or above it
    and fps = (its position + 1) - tps negatives; thresholds collinear with both neighbours are
    dropped (``roc_curve(drop_intermediate=True)``); the trapezoid areas from (0, 0) over
    (fps / n_0, tps / n_1) are summed judge by judge with numpy's (pairwise) sum, as scipy's
    ``trapezoid`` sums them. The area is U / (n_0 n_1) (Mann-Whitney, ties counting one half),
    but computed from ranks it can differ from sklearn's in the last bit, hence these steps."""
    X = np.ascontiguousarray(np.asarray(scores, dtype=float).T)            # judges x rows
    yb = np.asarray(yb, dtype=float)
    n, n1 = X.shape[1], yb.sum()
    if X.shape[0] == 0:
        return np.zeros(0)
    order = n - 1 - np.flip(np.argsort(np.flip(X, axis=1), axis=1, kind="stable"), axis=1)
    positives = np.cumsum(yb[order], axis=1)
    threshold = np.ones(X.shape, dtype=bool)
    threshold[:, :-1] = np.diff(np.take_along_axis(X, order, axis=1), axis=1) != 0
    j, i = np.nonzero(threshold)                                           # judge by judge, in rank order
    tps = positives[j, i]
    fps = 1.0 + i - tps
    first = np.r_[True, j[1:] != j[:-1]]
    keep = first | np.r_[first[1:], True]                                  # each judge's first and last
    keep[1:-1] |= (np.diff(fps, 2) != 0) | (np.diff(tps, 2) != 0)
    first, fpr, tpr = first[keep], fps[keep] / (n - n1), tps[keep] / n1
    fpr0 = np.where(first, 0.0, np.r_[0.0, fpr[:-1]])                      # the previous point, (0, 0) first
    tpr0 = np.where(first, 0.0, np.r_[0.0, tpr[:-1]])
    area = (fpr - fpr0) * (tpr + tpr0) / 2.0
    ends = np.r_[np.flatnonzero(first), len(area)]
    return np.array([area[a:b].sum() for a, b in zip(ends[:-1], ends[1:])])


def kappa_matrix(codes: np.ndarray) -> np.ndarray:
    """Cohen's kappa of every pair of columns of integer category codes (rows x judges),
    (p_o - p_e) / (1 - p_e): the value ``cohen_kappa_score`` gives each pair (NaN where it is
    undefined: both constant on one category), from one matrix product per category instead
    of K^2 calls."""
    n, K = codes.shape
    po, pe = np.zeros((K, K)), np.zeros((K, K))
    for c in np.unique(codes):
        O = (codes == c).astype(float)
        po += O.T @ O
        m = O.mean(axis=0)
        pe += np.outer(m, m)
    po /= max(n, 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return (po - pe) / (1.0 - pe)


def rank_correlation(scores: np.ndarray) -> np.ndarray:
    """Spearman's rank correlation of every pair of columns (Pearson on the columns'
    :func:`average_ranks`)."""
    return correlation(average_ranks(scores))


def average_ranks(X: np.ndarray) -> np.ndarray:
    """Rank of each value within its column (1 = smallest), ties sharing the mean of their
    ranks; a column with a NaN is all NaN: ``scipy.stats.rankdata(X, axis=0)`` to the bit (the
    ranks are exact halves), in its memory layout (columns contiguous, which sets the
    summation order of the correlations computed from them). A run of equal sorted values
    from position a to b (0-based, inclusive) gets (a + 1) + (b - a) / 2."""
    X = np.asarray(X)
    if X.ndim != 2:
        raise ValueError(f"ranks of the columns of a 2-D array, not of shape {X.shape}")
    K, n = X.shape[1], X.shape[0]
    ranks = np.empty((K, n))
    if X.size == 0:
        return ranks.T
    Xt = X.T
    order = np.argsort(Xt, axis=1, kind="stable")
    ordered = np.take_along_axis(Xt, order, axis=1)
    starts = np.ones((K, n), dtype=bool)
    starts[:, 1:] = ordered[:, 1:] != ordered[:, :-1]
    position = np.arange(n)
    first = np.maximum.accumulate(np.where(starts, position, 0), axis=1)        # a of each run
    ends = np.ones((K, n), dtype=bool)
    ends[:, :-1] = starts[:, 1:]
    last = np.flip(np.minimum.accumulate(np.flip(np.where(ends, position, n), axis=1), axis=1), axis=1)
    np.put_along_axis(ranks, order, (first + 1) + (last - first) / 2, axis=1)
    if X.dtype.kind in "fc":
        ranks[np.isnan(Xt).any(axis=1)] = np.nan
    return ranks.T


def correlation(X: np.ndarray) -> np.ndarray:
    """Pearson correlation of the columns (NaN for a constant column, 1 on the diagonal)."""
    with np.errstate(invalid="ignore", divide="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        R = np.atleast_2d(np.corrcoef(X, rowvar=False))
    np.fill_diagonal(R, 1.0)
    return R


def error_correlation(decided: np.ndarray, yb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(correlation of the judges' errors given the label, which judges' errors vary within a
    class) from decisions (rows x judges, :data:`ABSTAIN` = none) and 0/1 labels."""
    wrong = np.abs(np.where(decided == ABSTAIN, 0.5, decided) - yb[:, None])
    varies = np.zeros(decided.shape[1], dtype=bool)
    for c in (0, 1):
        m = yb == c
        if m.any():
            varies |= np.ptp(wrong[m], axis=0) > 0
            wrong[m] -= wrong[m].mean(axis=0)
    R = correlation(wrong)
    R[~varies, :] = R[:, ~varies] = np.nan
    return R, varies


def effective_number(R: np.ndarray) -> float:
    """(sum of eigenvalues)^2 / sum of squared eigenvalues of the correlation matrix R, i.e.
    K^2 / ||R||_F^2; undefined (NaN) entries count as uncorrelated."""
    R = np.where(np.isfinite(R), R, 0.0)
    np.fill_diagonal(R, 1.0)
    K = R.shape[0]
    return float(K * K / np.sum(R * R)) if K else 0.0


def redundant_pairs(names: list[str], agreement: np.ndarray, errors: np.ndarray,
                    threshold: float = REDUNDANCY_THRESHOLD) -> list[dict]:
    """Pairs whose agreement or error correlation is at least ``threshold``, the most
    redundant first."""
    iu, ju = np.triu_indices(len(names), k=1)
    a, e = agreement[iu, ju], errors[iu, ju]
    hit = (np.nan_to_num(a, nan=-1) >= threshold) | (np.nan_to_num(e, nan=-1) >= threshold)
    top = np.fmax(a, e)[hit]
    order = np.argsort(-top, kind="stable")
    return [{"judges": [names[iu[hit][k]], names[ju[hit][k]]], "agreement": json_number(a[hit][k], 4),
             "error_correlation": json_number(e[hit][k], 4)} for k in order]


def expected_calibration_error(y: np.ndarray, p: np.ndarray, n_bins: int = ECE_BINS) -> float:
    """ECE over equal-count bins (see :func:`reliability_curve`)."""
    return reliability_curve(y, p, n_bins)["ece"]


def reliability_curve(y: np.ndarray, p: np.ndarray, n_bins: int = ECE_BINS) -> dict:
    """Equal-count (quantile) bins of the predictions ``p``: each bin's mean prediction, mean
    label and size, and the ECE. 0/1 labels go through ``calibration_curve(...,
    strategy='quantile')``; soft labels use the same bin edges (that function takes 0/1 labels
    only)."""
    y, p = np.asarray(y, float), np.asarray(p, float)
    edges = np.percentile(p, np.linspace(0, 100, n_bins + 1))
    ids = np.searchsorted(edges[1:-1], p)
    count = np.bincount(ids, minlength=n_bins)
    nz = count > 0
    if np.isin(y, (0.0, 1.0)).all() and len(np.unique(y)) == 2:
        mean_y, mean_p = calibration_curve(y.astype(int), p, n_bins=n_bins, strategy="quantile")
    else:
        mean_y = np.bincount(ids, weights=y, minlength=n_bins)[nz] / count[nz]
        mean_p = np.bincount(ids, weights=p, minlength=n_bins)[nz] / count[nz]
    n = count[nz]
    ece = float(np.sum(n / n.sum() * np.abs(mean_p - mean_y)))
    return {"mean_prediction": [float(v) for v in mean_p], "mean_label": [float(v) for v in mean_y],
            "count": [int(v) for v in n], "ece": ece}
