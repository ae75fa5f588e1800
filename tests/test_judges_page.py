"""AppTest of the Judges page's per-judge table on an uploaded panel (no selection needed)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import by_label, seeded_app_store

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300


@pytest.fixture(scope="module", autouse=True)
def seeded_store(tmp_path_factory):
    yield from seeded_app_store(tmp_path_factory)


def _panel_with_a_constant_judge() -> bytes:
    rng = np.random.default_rng(3)
    y = rng.integers(0, 2, 240)
    flip = lambda p: np.where(rng.random(240) < p, 1 - y, y)     # noqa: E731
    lines = ["item_id,label,good,fair,stuck"]
    lines += [f"i{i},{y[i]},{a},{b},1" for i, (a, b) in enumerate(zip(flip(0.15), flip(0.3)))]
    return ("\n".join(lines) + "\n").encode()


def _judges_page_of(name: str, csv: bytes):
    """The Judges page on the panel ``csv`` uploaded as ``name``.csv (no exception or error
    on the way)."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/upload.py").run()
    at.file_uploader[0].set_value((f"{name}.csv", csv, "text/csv")).run()
    assert not at.exception and not at.error, (at.exception, at.error)
    by_label(at.button, "Use this panel").click().run()
    at.switch_page("app_pages/judges.py").run()
    by_label(at.selectbox, "Panel").set_value(f"uploaded: {name}").run()
    assert not at.exception and not at.error, (at.exception, at.error)
    return at


def test_a_constant_judge_has_no_direction():
    """Walk 2 (pair_40x2000_tie.d1's pai37, rubric_40x300.d2's rub24: the same output on every
    row): the Judges page's table said direction "rises" for a judge whose score does not move
    at all (AUC 0.5, kappa 0), beside the upload's warning that it carries no information.
    Its direction reads "none (constant)"; the others keep theirs."""
    at = _judges_page_of("constant", _panel_with_a_constant_judge())
    table = next(df.value for df in at.dataframe if "direction" in df.value.columns).set_index("judge")
    assert table.loc["stuck", "direction"] == "none (constant)"
    assert table.loc["good", "direction"] == "rises" and table.loc["fair", "direction"] == "rises"


def _panel_with_labels_mostly_below_half() -> bytes:
    """Three continuous metrics against labels mostly far below 1/2 (error counts rescaled):
    the isotonic decision of 'ter' never says 1, so it has no error correlation."""
    rng = np.random.default_rng(5)
    q = rng.normal(0, 1, 240)
    y = np.clip(np.round(np.exp(-1.2 - 1.0 * q) / 4, 3), 0, 1)
    lines = ["item_id,label,bleu,chrf,ter"]
    for i in range(240):
        a, b, c = 30 + 10 * q[i] + rng.normal(0, 2), 50 + 8 * q[i] + rng.normal(0, 8), 40 - 9 * q[i] + rng.normal(0, 12)
        lines.append(f"i{i},{y[i]},{a:.3f},{b:.3f},{c:.3f}")
    return ("\n".join(lines) + "\n").encode()


def test_the_effective_number_says_which_judges_it_leaves_out():
    """Browser walk (translation metrics, labels = error counts over [0, 50], base rate 0.07):
    the Judges page printed "effective number of judges 1.0" for 12 metrics whose rank
    correlations run 0.1 to 0.7, beside "No near-duplicate pair"; it was taken over 1 judge,
    the 11 others (no decision varying within a label class) named only in the hover help.
    The page now says so under the number."""
    at = _judges_page_of("lowlab", _panel_with_labels_mostly_below_half())
    eff = next(m for m in at.metric if m.label == "effective number of judges")
    assert eff.value == "1.9"
    said = [c.value for c in at.caption if c.value.startswith("Over ")]
    assert said == ["Over 2 of 3 judges: ter is left out (the decision never varies within a label class, so the "
                    "error has no correlation)."], [c.value for c in at.caption]
