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


def test_a_constant_judge_has_no_direction():
    """Walk 2 (pair_40x2000_tie.d1's pai37, rubric_40x300.d2's rub24: the same output on every
    row): the Judges page's table said direction "rises" for a judge whose score does not move
    at all (AUC 0.5, kappa 0), beside the upload's warning that it carries no information.
    Its direction reads "none (constant)"; the others keep theirs."""
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/upload.py").run()
    at.file_uploader[0].set_value(("constant.csv", _panel_with_a_constant_judge(), "text/csv")).run()
    assert not at.exception and not at.error, (at.exception, at.error)
    by_label(at.button, "Use this panel").click().run()
    at.switch_page("app_pages/judges.py").run()
    by_label(at.selectbox, "Panel").set_value("uploaded: constant").run()
    assert not at.exception and not at.error, (at.exception, at.error)
    table = next(df.value for df in at.dataframe if "direction" in df.value.columns).set_index("judge")
    assert table.loc["stuck", "direction"] == "none (constant)"
    assert table.loc["good", "direction"] == "rises" and table.loc["fair", "direction"] == "rises"
