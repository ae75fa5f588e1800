"""Controlled regimes (paper appendix "New Calibration-Growth Dataset", Tables
tab:controlled-aggregator-regimes and tab:interaction-strength-sweep).

Every generator draws ``m`` judges with pairwise verdicts (A = 1, B = 0, optionally tie
and parse_error) and a binary label Y ~ Bernoulli(p(x)) whose target rule is known:

``additive``  p = sigmoid(sum_j w_j (2 x_j - 1)), weights decreasing in j: no interaction.
``parity``    p = 1/2 + amplitude * (-1)^(x_1 + ... + x_order): a pure ``order``-way
              interaction (default six-way); no single judge carries signal.
``mixed``     half additive, half three-way parity.
``xor``       p = 1/2 + amplitude * (-1)^(x_1 + x_2), plus a weak additive part.
``and``       p = 0.2 + 0.6 * x_1 x_2, plus a weak additive part.
``strength``  p = (1 - gamma) * additive + gamma * three-way parity (gamma in [0, 1]).

``semi_real`` keeps a real panel's joint judge-output patterns (rows resampled with
replacement) and attaches a controlled target computed from their scalar scores.
All generators are seeded; :func:`to_wide_csv` writes the panel as a wide CSV.
"""

from __future__ import annotations

import math

import numpy as np

from .encoding import encode_panel
from .errors import FCPSError
from .writers import write_wide_csv
from .panel import Panel, build_judge_column

REGIMES = ("additive", "mixed", "parity", "xor", "and", "strength")
#: the largest panel a generator builds, checked before anything is allocated: building and
#: writing 10 million outputs (1,000,000 rows x 10 judges) peaks near 750 MB
MAX_SYNTH_CELLS = 10_000_000
MAX_SYNTH_ROWS = 1_000_000
MAX_SYNTH_JUDGES = 10_000


def check_synth_size(rows, judges) -> None:
    """Refuse a panel too large to build (one line naming --rows/--judges), before any
    allocation."""
    for name, value in (("rows", rows), ("judges", judges)):
        if not isinstance(value, (int, np.integer)) or isinstance(value, bool) or value < 1:
            raise FCPSError(f"{name} (--{name}) must be a whole number of at least 1 (got {value!r})")
    for name, value, most in (("rows", rows, MAX_SYNTH_ROWS), ("judges", judges, MAX_SYNTH_JUDGES)):
        if value > most:
            raise FCPSError(f"{name} (--{name}) must be at most {most:,} (got {value:,}); "
                            f"a synthetic panel holds at most {MAX_SYNTH_CELLS:,} outputs")
    if rows * judges > MAX_SYNTH_CELLS:
        raise FCPSError(f"--rows {rows:,} x --judges {judges:,} is {rows * judges:,} outputs, more than the "
                        f"{MAX_SYNTH_CELLS:,} a synthetic panel may hold; lower --rows or --judges")


def check_regime_options(regime: str, *, gamma: float = 0.5, parity_order: int = 6,
                         tie_rate: float = 0.0, group_size: int = 1) -> None:
    """One line naming the option (and its CLI flag) that a generator cannot use."""
    if regime not in REGIMES:
        raise FCPSError(f"unknown regime {regime!r}; use one of {', '.join(REGIMES)}")
    if not isinstance(gamma, (int, float)) or not math.isfinite(gamma):
        raise FCPSError(f"gamma (--gamma) must be a finite number (got {gamma!r})")
    if regime == "strength" and not 0.0 <= gamma <= 1.0:
        raise FCPSError(f"gamma (--gamma) of the strength regime must be from 0 to 1 (got {gamma:g})")
    if not isinstance(parity_order, (int, np.integer)) or parity_order < 1:
        raise FCPSError(f"parity_order (--parity-order) must be a whole number of at least 1 (got {parity_order!r})")
    if not isinstance(tie_rate, (int, float)) or not 0.0 <= tie_rate <= 1.0:
        raise FCPSError(f"tie_rate (--tie-rate) must be a share from 0 to 1 (got {tie_rate!r})")
    if not isinstance(group_size, (int, np.integer)) or group_size < 1:
        raise FCPSError(f"group_size (--group-size) must be a whole number of at least 1 (got {group_size!r})")


def _sigmoid(t):
    return 1.0 / (1.0 + np.exp(-t))


def target_probability(regime: str, x: np.ndarray, *, gamma: float = 0.5,
                       parity_order: int = 6, amplitude: float = 0.4) -> np.ndarray:
    """P(Y = 1 | x) for binary judge verdicts x (rows x m, entries 0/1 or 1/2 for a tie)."""
    m = x.shape[1]
    signed = 2 * x - 1
    weights = 1.2 / (1 + np.arange(m))
    additive = _sigmoid(signed @ weights)

    def parity(order):
        order = min(order, m)
        return 0.5 + amplitude * np.prod(signed[:, :order], axis=1)

    if regime == "additive":
        return additive
    if regime == "parity":
        return parity(parity_order)
    if regime == "mixed":
        return 0.5 * additive + 0.5 * parity(3)
    if regime == "xor":
        return np.clip(parity(2) + 0.1 * (additive - 0.5), 0, 1)
    if regime == "and":
        both = (x[:, 0] > 0.5) & (x[:, 1] > 0.5)
        return np.clip(0.2 + 0.6 * both + 0.1 * (additive - 0.5), 0, 1)
    if regime == "strength":
        if not 0.0 <= gamma <= 1.0:
            raise FCPSError(f"gamma (--gamma) of the strength regime must be from 0 to 1 (got {gamma})")
        return (1 - gamma) * additive + gamma * parity(3)
    raise FCPSError(f"unknown regime {regime!r}; use one of {', '.join(REGIMES)}")


def make_regime(regime: str, *, rows: int = 2000, judges: int = 7, seed: int = 0,
                gamma: float = 0.5, parity_order: int = 6, tie_rate: float = 0.0,
                group_size: int = 1, unlabelled_share: float = 0.0) -> Panel:
    """A synthetic panel of ``rows`` items and ``judges`` pairwise judges (at most
    :data:`MAX_SYNTH_CELLS` outputs)."""
    check_synth_size(rows, judges)
    check_regime_options(regime, gamma=gamma, parity_order=parity_order, tie_rate=tie_rate,
                         group_size=group_size)
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 2, size=(rows, judges)).astype(float)
    outputs = np.where(x == 1, "A", "B").astype(object)
    if tie_rate > 0:
        tie = rng.random((rows, judges)) < tie_rate
        x = np.where(tie, 0.5, x)
        kind = rng.random((rows, judges)) < 0.8
        outputs = np.where(tie, np.where(kind, "tie", "parse_error"), outputs)
    p = target_probability(regime, x, gamma=gamma, parity_order=parity_order)
    y = (rng.random(rows) < p).astype(float)
    labels = y.copy()
    if unlabelled_share > 0:
        labels[rng.random(rows) < unlabelled_share] = np.nan
    item_ids = np.array([f"{regime}-{i}" for i in range(rows)], dtype=object)
    group_ids = np.array([f"g{i // group_size}" for i in range(rows)], dtype=object)
    cols = [build_judge_column(f"J{j + 1}", outputs[:, j].tolist(), schema="pairwise")
            for j in range(judges)]
    return Panel(item_ids=item_ids, group_ids=group_ids, labels=labels, judges=cols,
                 name=f"synthetic-{regime}")


def semi_real(panel: Panel, regime: str, *, rows: int = 2000, seed: int = 0,
              gamma: float = 0.5, parity_order: int = 6) -> Panel:
    """Resample ``panel``'s joint output patterns and attach a controlled target.

    The target uses the judges' scalar scores (A=1, B=0, tie=1/2; rubric scaled), so the
    empirical judge correlations and pattern sparsity of the real panel are preserved.
    """
    check_synth_size(rows, len(panel.judges))
    check_regime_options(regime, gamma=gamma, parity_order=parity_order)
    rng = np.random.default_rng(seed)
    rows_idx = rng.integers(0, panel.n_rows, size=rows)
    sampled = panel.take(rows_idx)
    encoded = encode_panel(sampled, np.arange(rows))
    x = np.clip(encoded.scores, 0.0, 1.0)
    p = target_probability(regime, x, gamma=gamma, parity_order=parity_order)
    y = (rng.random(rows) < p).astype(float)
    item_ids = np.array([f"{panel.name}-{regime}-{i}" for i in range(rows)], dtype=object)
    return Panel(item_ids=item_ids, group_ids=item_ids.copy(), labels=y, judges=sampled.judges,
                 name=f"semireal-{panel.name}-{regime}")


def to_wide_csv(panel: Panel, path: str, *, force: bool = False) -> None:
    write_wide_csv(panel, path, force=force)
