"""What the front ends say about a result, in words and tables: plain-language verdicts
(:mod:`fcps_core.reports.explain`), the facts and HTML report of a stored run
(:mod:`fcps_core.reports.run_report`), the judges report (:mod:`fcps_core.selection.judges_report`) and the
gap verdict of a sweep cell. The report modules are loaded on first use (the judges report
needs scikit-learn)."""

from __future__ import annotations

from ..reports.explain import (PAIRED_BASIS, answer, answer_digits, average_words, baseline_rows, comparison, comparison_basis, deployed_judges, judge_order, deployed_kind, deployed_members, display_family,  # noqa: F401
                       drop_meaning, drop_verdict_words, drop_words, effective_judges_note, end_digits, frontier_noise_note, frontier_point, frontier_rows, gain_text, limit_span, signed_change, interval_end, limit_deploys_words,
                       named_pattern, non_monotone_note, point_digits, pressure_applies, pressure_text, risk_digits, same_drop_choice, shared_with, shown_difference, signed_weights,
                       tie_sentence, tie_summary, tie_words, verdict, verdict_parts)
from ..reports.names import (FAMILY_NAMES, PATH_NAMES, count_of, estimate_name, family_name, judges_count, parameters_text,  # noqa: F401
                            path_name)


def run_report_html(store, run_id: int, *, figures: bool = True) -> str:
    """A stored run's report as one HTML page (:func:`fcps_core.reports.run_report.run_report_html`)."""
    from ..reports.run_report import run_report_html as report
    return report(store, run_id, figures=figures)


def run_facts(run: dict) -> dict:
    """A stored run's facts for a summary (:func:`fcps_core.reports.run_report.summary.run_facts`)."""
    from ..reports.run_report.summary import run_facts as facts
    return facts(run)


def split_sizes(split: dict | None) -> list[dict]:
    """A stored run's block sizes, one row per block."""
    from ..reports.run_report.summary import split_sizes as sizes
    return sizes(split)


def count_text(value) -> str:
    """A count in words ('-' when missing)."""
    from ..reports.run_report.summary import count_text as text
    return text(value)


def gap_verdict(ci_low: float | None, ci_high: float | None) -> str:
    """Which menu a sweep cell's table-minus-scalar interval favours, in words."""
    from ..measures.diagnostics import gap_verdict as words
    return words(ci_low, ci_high)


def judges_report(result, **options) -> dict:
    """Each judge of a selection measured and its contribution (:func:`fcps_core.selection.judges_report.judges_report`)."""
    from ..selection.judges_report import judges_report as report
    return report(result, **options)


def panel_judges_report(panel, *, seed: int = 0) -> dict:
    """Each judge of a panel measured against the labels on the default blocks' deployable
    rows, on the label scale a deployment reports on."""
    from ..selection.judges_report import deployable_rows, panel_judges_report as report
    from ..selection import deployable_label_scale
    from ..data.splits import make_blocks
    blocks = make_blocks(panel, seed=seed)
    return report(deployable_label_scale(panel, blocks), deployable_rows(panel, blocks))


def metric_help() -> dict:
    """What each judges-report metric means, by column (:data:`fcps_core.selection.judges_report.METRIC_HELP`)."""
    from ..selection.judges_report import METRIC_HELP
    return METRIC_HELP


def table_like_families() -> set[str]:
    """The families that fit a table over joint judge patterns (their cell pressure applies)."""
    from ..families import REGISTRY
    return {name for name, fam in REGISTRY.items() if fam.table_like}
