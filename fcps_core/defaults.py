"""One set of defaults for the library, the command line and the dashboard."""

from __future__ import annotations

from .measures.diagnostics import GAIN_THRESHOLD, PRESSURE_THRESHOLD
from .wording import count_of, judges_count, noun_for  # noqa: F401 (where the pages and figures look)

#: S:M:V ratio of the paper's protocol (a fourth part reserves a research test block T)
DEFAULT_SPLIT = "1:2:1"
DEFAULT_PATHS = ("info_first", "complexity_penalized", "random")
DEFAULT_TABLE_K_MAX = 8
DEFAULT_PAIRWISE_K_MAX = 12
DEFAULT_ALPHA = 0.5
DEFAULT_FALLBACK = "global"
DEFAULT_OBJECTIVE = "mse"
DEFAULT_N_BINS = 5
#: selection protocols, risk estimates and choice rules (the selection package's names; here
#: so the command line's parser is built without importing the engine)
PROTOCOLS = ("crossfit", "split")
ESTIMATES = ("bbc", "nested", "none")
#: the choice rule that deploys the equal-weight average of the statistically tied candidates;
#: also the family label such a deployment has in JSON outputs, stored runs and predictor files
TIE_AVERAGE = "tie_average"
CHOICES = ("argmin", "simplest_within_se", TIE_AVERAGE, "cheapest_tied")
DEFAULT_PROTOCOL = "crossfit"
DEFAULT_CHOICE = TIE_AVERAGE
DEFAULT_FOLDS = 5
DEFAULT_REPEATS = 2
DEFAULT_BOOTSTRAP = 200
DEFAULT_MAX_MEMBERS = 10
DEFAULT_GAIN_THRESHOLD = GAIN_THRESHOLD
DEFAULT_PRESSURE_THRESHOLD = PRESSURE_THRESHOLD


def deployed_family_name(family: str, n_members: int | None) -> str:
    """How people read a deployment of ``n_members`` models: ``family`` (the one model's) for
    one member (or an unknown count), "average of N models" for more -- the one wording of
    the pages, reports, run lists and the CLI (:func:`fcps_core.reports.explain.display_family`
    reads it off a result, ``FCPSPredictor.display_name`` off a predictor)."""
    return f"average of {n_members} models" if n_members and n_members > 1 else str(family)


def limit_words(max_judges: int | None, budget: float | None) -> str:
    """A user's limit on the deployed panel in words ("at most 3 judges", "cost at most 0.02
    per item", both joined by "and"; "" for none) -- the one wording of the limit in the
    errors, run lists and run pickers (``PanelConstraint.describe`` reads it)."""
    parts = []
    if max_judges is not None:
        parts.append(f"at most {int(max_judges)} judge{'s' if int(max_judges) != 1 else ''}")
    if budget is not None:
        parts.append(f"cost at most {float(budget):g} per item")
    return " and ".join(parts)
