"""Shared pieces of the reproduction report: the run plan (full or quick), the paper's
label list, markdown helpers, report sections and the figures folder writer."""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from pathlib import Path

DATA = Path(__file__).resolve().parents[3] / "data"
#: the three path rules of the paper's joint-table menu
P3 = ("info_first", "complexity_penalized", "random")
#: Fixed seven-judge pools for the real panels (the paper's protocol uses seven judges).
REAL_POOLS = {
    "llmbar": {"judges": ["GPT-4/Vanilla", "ChatGPT/Vanilla", "ChatGPT-0301/Vanilla", "PaLM2/Vanilla",
                          "LLaMA2/Vanilla", "Falcon/Vanilla", "GPT-4/CoT"],
               "budgets": [20, 50, 100, 200, 300], "sizes": (100, 100, 200)},
    "hanna": {"judges": ["Beluga-13B/prompt1", "OrcaPlatypus/prompt1", "Mistral-7B/prompt1",
                         "Llama-13B/prompt1", "ChatGPT/prompt1", "BERTScore F1", "BARTScore-SH"],
              "budgets": [32, 64, 128, 256, 384], "sizes": (128, 128, 256)},
}
#: every table and figure label of the paper, in the paper's order
PAPER_LABELS = (
    "fig:operational-regime-map", "tab:protocol", "tab:exact-cell-pressure", "fig:main-regime-diagnostics",
    "tab:main-finite-label-checks", "tab:protocol-guardrails", "tab:pool-artifact-guardrail",
    "tab:prompt-perturbation", "tab:candidate-menu-validation", "tab:theory-evidence-map",
    "tab:interpretation-checks", "tab:baseline-envelope", "tab:envelope-budget-k", "tab:aggregation-baselines",
    "tab:aggregation-selected", "tab:k-family-ablation", "tab:selected-k-instability", "tab:regime-comparison",
    "tab:oracle-interaction-gap-full", "tab:table-like-family-comparison", "tab:metric-robustness",
    "tab:jury-baseline", "tab:nll-selection-ablation", "tab:tie-parse-fairness", "tab:fixed-budget-allocation",
    "tab:backoff-split-sensitivity", "tab:interaction-diagnostic", "tab:theory-proxy-winner",
    "tab:table-sensitivity", "tab:residual-shrinkage-hybrid", "tab:cfps-path", "tab:cold-start-few-label",
    "tab:external-binary-validation-protocol", "tab:external-binary-validation-results",
    "tab:external-binary-theory-validation", "tab:calibration-growth-new-dataset",
    "tab:semireal-calibration-growth", "tab:controlled-aggregator-regimes", "tab:interaction-strength-sweep",
    "tab:controlled-complexity", "tab:within-group-correlation", "fig:risk-k", "fig:selected-k",
    "fig:validation-risk", "fig:complexity-risk", "fig:unseen-risk", "fig:distribution-summary",
    "fig:complexity-risk-path", "fig:marginal", "fig:uncertainty-diagnostics")
#: the paper's finite-sample results computed beside the realised quantities (issue 30 item 5)
THEORY_LABELS = ("thm:validation-selection", "prop:table")
#: label -> the labels it points to: navigation tables hold no numbers of their own
NAVIGATION = {
    "tab:theory-evidence-map": ("tab:baseline-envelope", "tab:regime-comparison", "fig:risk-k", "fig:complexity-risk",
                                "fig:unseen-risk", "tab:controlled-complexity", "tab:exact-cell-pressure",
                                "tab:aggregation-baselines", "tab:metric-robustness", "tab:theory-proxy-winner",
                                "tab:table-sensitivity", "tab:controlled-aggregator-regimes"),
    "tab:interpretation-checks": ("tab:k-family-ablation", "fig:marginal", "tab:metric-robustness",
                                  "tab:nll-selection-ablation", "tab:backoff-split-sensitivity",
                                  "tab:residual-shrinkage-hybrid", "tab:cfps-path", "fig:complexity-risk-path",
                                  "tab:exact-cell-pressure", "tab:theory-proxy-winner", "fig:complexity-risk",
                                  "fig:unseen-risk", "tab:table-sensitivity"),
}
OFFLINE = {"tab:prompt-perturbation": "not applicable offline (needs live LLM calls: the judges are re-prompted "
                                      "with a second template)"}


@dataclass(frozen=True)
class Plan:
    """How much the report runs: the full paper protocol, or a small smoke run (``quick``)."""
    splits: int = 30
    seed: int = 0
    workers: int = 2
    quick: bool = False

    @property
    def real(self) -> dict:
        if not self.quick:
            return REAL_POOLS
        return {n: {**s, "budgets": s["budgets"][:3]} for n, s in REAL_POOLS.items()}

    @property
    def check_splits(self) -> int:
        return self.splits

    @property
    def cold_start_splits(self) -> int:
        return min(self.splits, 2) if self.quick else 12

    @property
    def cold_start_n_h(self) -> tuple[int, ...]:
        return (16, 32) if self.quick else (8, 16, 32, 64)

    @property
    def external(self) -> dict:
        return {"rows": 300, "sizes": (50, 50, 100), "budgets": [32, 64, 96]}


def fmt(v, digits: int = 4, signed: bool = False) -> str:
    if v is None or (isinstance(v, float) and not math.isfinite(v)):
        return "-"
    if isinstance(v, (int,)) and not isinstance(v, bool):
        return str(v)
    return f"{v:+.{digits}f}" if signed else f"{v:.{digits}f}"


def pm(mean, se, digits: int = 3, signed: bool = False) -> str:
    """``mean ± se`` (the SE is left out when it is undefined)."""
    if se is None or (isinstance(se, float) and not math.isfinite(se)):
        return fmt(mean, digits, signed)
    return f"{fmt(mean, digits, signed)} ± {fmt(se, digits)}"


def interval(lo, hi, digits: int = 4) -> str:
    return f"[{fmt(lo, digits, True)}, {fmt(hi, digits, True)}]"


def md_table(header: list[str], rows: list[list]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "|".join("---" for _ in header) + "|"]
    out += ["| " + " | ".join(str(c) for c in r) + " |" for r in rows]
    return "\n".join(out) + "\n"


def anchor(label: str) -> str:
    return label.replace(":", "-")


def figure_file(label: str, suffix: str = "") -> str:
    """The figure's file name in the figures folder (``fig:risk-k`` -> ``fig-risk-k.html``:
    no colon, so the folder checks out on every file system)."""
    return f"{anchor(label)}{suffix}.html"


#: the verdicts a section can carry against the paper (issue 30 item 6)
VERDICTS = ("reproduced", "same direction, different size", "differs", "not applicable offline")


@dataclass
class Section:
    """One report section, headed by its paper label. ``verdict`` (one of :data:`VERDICTS`)
    and ``why`` compare it with the paper's values, which ``paper`` holds as markdown typed in
    from the paper (each with the table row it comes from)."""
    label: str
    title: str
    text: str
    body: str = ""
    figures: list[tuple[str, str]] = field(default_factory=list)   # (caption, relative link)
    verdict: str = ""
    why: str = ""
    paper: str = ""

    def markdown(self) -> str:
        parts = [f'<a id="{anchor(self.label)}"></a>\n\n## {self.label} — {self.title}\n\n{self.text.strip()}\n']
        if self.verdict:
            parts.append(f"**Verdict against the paper: {self.verdict}.** {self.why.strip()}\n")
        for caption, link in self.figures:
            parts.append(f"Figure: [{caption}]({link})\n")
        if self.body:
            parts.append(self.body)
        if self.paper:
            parts.append(self.paper)
        return "\n".join(parts)


class FigureSink:
    """Collects figures; when given a folder, writes each as ``<folder>/<file>.html`` that
    loads plotly.js from one ``plotly.min.js`` in the same folder (written once), so the
    folder opens offline. Files are written through :func:`fcps_core.files.safe_write.write_output`
    (an existing file is replaced only with ``force``)."""

    def __init__(self, folder: Path | None = None, *, force: bool = False, link_prefix: str = "figures/"):
        self.folder, self.force, self.prefix = folder, force, link_prefix
        self.figures: dict[str, object] = {}
        self._js = False

    def add(self, label: str, fig, suffix: str = "") -> str:
        name = figure_file(label, suffix)
        self.figures[name] = fig
        if self.folder is not None:
            from ...files.safe_write import write_output
            if not self._js:
                from plotly.offline import get_plotlyjs
                write_output(self.folder / "plotly.min.js", get_plotlyjs(), force=self.force)
                self._js = True
            write_output(self.folder / name, fig.to_html(include_plotlyjs="directory", full_html=True),
                         force=self.force)
        return self.prefix + name
