"""docs/json-contract.md lists exactly the keys the code writes: the top level of
``select --json`` (both protocols) and of the predictor file (a single model and an average)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from fcps_core import make_blocks, select
from fcps_core.paper.synthetic import make_regime

DOC = Path(__file__).resolve().parent.parent / "docs" / "json-contract.md"


def documented_keys(heading: str) -> list[str]:
    """The first column of the table under ``## heading``."""
    section = DOC.read_text().split(f"## {heading}", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([A-Za-z_0-9]+)` \|", section, re.M)


@pytest.fixture(scope="module")
def results():
    """A split-protocol argmin (one model) and a cross-fitted tie average (several members)."""
    panel = make_regime("additive", rows=400, judges=5, seed=0)
    menu = dict(families=["table", "logistic"], seed=0)
    split = select(panel, make_blocks(panel, split="1:2:1:1", seed=0), protocol="split",
                   choice="argmin", **menu)
    crossfit = select(panel, make_blocks(panel, split="1:2:1", seed=0), choice="tie_average", **menu)
    assert split.to_dict()["selected"]["family"] != "tie_average"
    assert crossfit.to_dict()["selected"]["family"] == "tie_average"
    return split, crossfit


def test_select_json_top_level_keys_are_documented(results):
    documented = documented_keys("`select --json`")
    for result in results:
        assert list(result.to_dict()) == documented


def test_predictor_file_keys_are_documented(results):
    documented = set(documented_keys("Predictor file"))
    written = set()
    for result in results:
        written |= set(result.predictor().to_dict())
    assert written == documented
