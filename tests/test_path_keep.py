"""Path fits restricted to the prefixes a refit reads (``fit_path(keep=...)``, the
learning-curve correction's half-size refits through ``fit_menu(only=...)``): every kept
model is bit for bit the one the whole path fit makes, and so are its path predictions."""

from __future__ import annotations

import numpy as np
import pytest

from fcps_core.families import REGISTRY, PrefixFeatures


def _state(model) -> list:
    out = []
    for name in ("coef_", "intercept_", "weights_", "prior_logit_", "ybar_", "constant_"):
        if hasattr(model, name):
            out.append((name, np.asarray(getattr(model, name))))
    iso = getattr(model, "iso_", None)
    if iso is not None:
        out += [("iso_x", iso.x_), ("iso_y", iso.y_)]
    return out


def _same(a, b) -> bool:
    sa, sb = _state(a), _state(b)
    return [n for n, _ in sa] == [n for n, _ in sb] and all(
        np.array_equal(x, y) for (_, x), (_, y) in zip(sa, sb))


@pytest.mark.parametrize("family", ["ridge_iso", "ridge_pairwise_iso", "one_coin_iso", "mean_iso"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("constant", [False, True])
def test_kept_prefixes_are_the_whole_path_fits(family, weighted, constant):
    rng = np.random.default_rng(3)
    n, K = 400, 9
    scores = np.round(rng.random((n, K)) * 4) / 4          # ties: the maps pool runs
    y = np.zeros(n) if constant else (rng.random(n) < 0.3 + 0.4 * scores[:, 0]).astype(float)
    X = PrefixFeatures(patterns=[None] * K, scores=scores,
                       weight=rng.integers(1, 4, n).astype(float) if weighted else None)
    probe = PrefixFeatures(patterns=[None] * K, scores=rng.random((50, K)))
    cls = REGISTRY[family]
    assert cls.path_keeps_prefixes
    sizes = list(range(1, K + 1))
    whole = cls.fit_path(X, y, None, sizes)
    keep = {2, 5, 9}
    part = cls.fit_path(X, y, None, sizes, keep=keep)
    for K_, a, b in zip(sizes, whole, part):
        if K_ in keep:
            assert _same(a, b)
        else:
            assert b is None
    kept = [K_ for K_ in sizes if K_ in keep]
    full_pred = cls.predict_path(whole, sizes, probe)
    kept_pred = cls.predict_path([m for m in part if m is not None], kept, probe)
    assert np.array_equal(kept_pred, full_pred[:, [K_ - 1 for K_ in kept]])


def test_logistic_paths_do_not_take_keep():
    """A logistic path carries each prefix's optimum into the next: it fits every size."""
    assert not REGISTRY["logistic"].path_keeps_prefixes
    assert not REGISTRY["logistic_pairwise"].path_keeps_prefixes
