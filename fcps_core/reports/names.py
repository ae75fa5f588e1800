"""Plain names for the library's keys, for people: aggregator families (``ridge_iso``) and
path rules (``info_first``) as the pages, the answer sentence and the reports show them.

The keys stay what the command line, the JSON and the store use (design.md); only what a
person reads changes. The family words follow the fixed recipes' labels
(``selection.honesty.BASELINE_LABELS``: "ridge + isotonic over all judges", "mean vote +
isotonic"), so one aggregator has one name on a page. A key without a plain name is shown
as it is."""

from __future__ import annotations

from ..wording import count_of, judges_count  # noqa: F401 (the names' module is where the pages look)

#: aggregator family key -> its name for people
FAMILY_NAMES = {
    "table": "joint table",
    "backoff": "back-off table",
    "residual": "scalar + table residual",
    "mean_iso": "mean vote + isotonic",
    "one_coin_iso": "one-coin reliability + isotonic",
    "ridge_iso": "ridge + isotonic",
    "logistic": "logistic",
    "ridge_pairwise_iso": "pairwise ridge + isotonic",
    "logistic_pairwise": "pairwise logistic",
    "ds_jury": "Dawid-Skene jury",
}

#: path rule key -> its name for people
PATH_NAMES = {
    "info_first": "best single judge first",
    "complexity_penalized": "greedy, complexity-penalised",
    "random": "random order",
    "cfps": "calibration frontier",
    "cost_aware": "greedy, cost-aware",
}


def family_name(family) -> str:
    """A family key in words (``ridge_iso`` -> "ridge + isotonic"); others unchanged."""
    return FAMILY_NAMES.get(str(family), str(family))


def path_name(path) -> str:
    """A path rule key in words (``info_first`` -> "best single judge first"); a path label
    that is not a rule key (a fixed path's own name) unchanged."""
    return PATH_NAMES.get(str(path), str(path))


def parameters_text(params: dict | None) -> str:
    """A candidate's hyperparameters as ``key=value`` text, a family value (a residual's
    ``base``) in words; "-" for none."""
    if not params:
        return "-"
    return ", ".join(f"{k}={family_name(v) if isinstance(v, str) else v}" for k, v in params.items())


def estimate_name(objective: str | None) -> str:
    """How every page, report and the CLI name the deployed-risk estimate: "MSE on new items"
    (the objective upper-cased; MSE when none is recorded)."""
    return f"{str(objective or 'mse').upper()} on new items"
