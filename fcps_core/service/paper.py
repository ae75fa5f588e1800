"""The paper's workflows the command line and the dashboard run: synthetic regimes and
semi-real panels (``synth``, the Synthetic lab), the robustness checks (``check``), the
reproduction report (``report``) and the analyses of a stored sweep's candidates (the
Reproduction page)."""

from __future__ import annotations

from ..errors import FCPSError


def make_regime(regime: str, **options):
    """A synthetic panel of one regime (:func:`fcps_core.paper.synthetic.make_regime`)."""
    from ..paper.synthetic import make_regime as make
    return make(regime, **options)


def semi_real(panel, regime: str, **options):
    """A semi-real panel: real judges, a synthetic label (:func:`fcps_core.paper.synthetic.semi_real`)."""
    from ..paper.synthetic import semi_real as make
    return make(panel, regime, **options)


def check_synth_size(rows, judges) -> None:
    from ..paper.synthetic import check_synth_size as check
    check(rows, judges)


def synth_parameter_help() -> str:
    """What each generator parameter means (:data:`fcps_core.paper.synthetic.PARAMETER_HELP`)."""
    from ..paper.synthetic import PARAMETER_HELP
    return PARAMETER_HELP


def write_report(out: str, **options) -> str:
    """The reproduction report (:func:`fcps_core.paper.reproduction.write_report`)."""
    from ..paper.reproduction import write_report as write
    return write(out, **options)


def run_check(name: str, panel, sizes: dict, *, splits: int = 30, seed: int = 0, workers: int = 1,
              drop=None, n_h_values=(8, 16, 32, 64), k_max: int | None = 7, progress=None,
              names=()) -> list[dict]:
    """Rows of one of the paper's robustness checks (the functions of :mod:`fcps_core.paper.robustness_checks`)
    on ``panel`` with block ``sizes`` (n_select, n_val, n_test, n_M, n_h, budgets); ``names``:
    the checks there are, for the error on an unknown one."""
    from ..paper.robustness_checks import (cold_start, fixed_budget_allocation, metric_robustness, objective_comparison,
                          pool_perturbation, smoothing_sensitivity, tie_collapse_check)
    from ..paper.experiments import calibration_growth
    blocks = {k: sizes[k] for k in ("n_select", "n_val", "n_test")}
    if name == "allocation":
        return fixed_budget_allocation(panel, sizes["n_h"], n_test=sizes["n_test"], splits=splits,
                                       seed=seed, workers=workers)
    if name in ("objective", "metrics"):
        sweep = calibration_growth(panel, sizes["budgets"], splits=splits, seed=seed, workers=workers,
                                   progress=progress, **blocks)
        return objective_comparison(sweep) if name == "objective" else metric_robustness(sweep)
    if name == "tie-collapse":
        return tie_collapse_check(panel, sizes["budgets"], splits=splits, seed=seed, workers=workers,
                                  **blocks)
    if name == "smoothing":
        return smoothing_sensitivity(panel, sizes["n_M"], splits=splits, seed=seed, workers=workers,
                                     **blocks)
    if name == "pool":
        return pool_perturbation(panel, sizes["n_M"], splits=splits, seed=seed, workers=workers,
                                 drop=drop, **blocks)
    if name == "cold-start":
        return cold_start(panel, n_h_values, n_test=sizes["n_test"], splits=splits, seed=seed, k_max=k_max)
    raise FCPSError(f"unknown check {name!r}; use one of {', '.join(names)}")


def sweep_analyses():
    """The analyses of a stored sweep's candidate records (the module
    :mod:`fcps_core.paper.analyses`: curves over K, binned relations, controlled complexity...)."""
    import fcps_core.paper.analyses as analyses
    return analyses
