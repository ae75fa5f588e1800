"""Predictor files are validated completely before any scoring."""

import json

import pytest

from fcps_core import FCPSPredictor, PredictorError, make_blocks
from fcps_core.deploy.predictor import MAX_PREDICTOR_NUMBERS
from fcps_core.paper.synthetic import make_regime
from paper_protocol import select


@pytest.fixture(scope="module")
def saved():
    panel = make_regime("mixed", rows=400, judges=3, seed=1)
    out = {}
    for family in ("table", "logistic"):
        res = select(panel, make_blocks(panel, split="1:2:1", seed=0), families=[family], paths=["info_first"])
        out[family] = res.predictor().to_dict()
    return out


def _tampered(d, edit):
    doc = json.loads(json.dumps(d))
    edit(doc)
    return doc


@pytest.mark.parametrize("family, edit, message", [
    ("logistic", lambda d: d["members"][0]["model"].__setitem__("coef", [float("nan")] * len(d["members"][0]["model"]["coef"])), "non-finite"),
    ("logistic", lambda d: d["members"][0]["model"].__setitem__("intercept", float("inf")), "non-finite"),
    ("logistic", lambda d: d["members"][0].__setitem__("encoders", []), "one encoder per judge"),
    ("logistic", lambda d: d["members"][0]["encoders"].reverse() if len(d["members"][0]["encoders"]) > 1 else d["members"][0]["encoders"][0].__setitem__("name", "x"),
     "encoders do not name the judges|one encoder per judge"),
    ("table", lambda d: next(t for t in d["members"][0]["model"]["tables"].values()).__setitem__(
        "counts", [-1.0] * len(next(t for t in d["members"][0]["model"]["tables"].values())["counts"])), "negative counts"),
    ("logistic", lambda d: d["members"][0]["model"].__setitem__("coef", [0.0] * (MAX_PREDICTOR_NUMBERS + 1)), "too large"),
])
def test_bad_predictor_files_are_refused_before_scoring(saved, family, edit, message):
    with pytest.raises(PredictorError, match=message):
        FCPSPredictor.from_dict(_tampered(saved[family], edit))


def test_a_valid_file_still_loads(saved, tmp_path):
    for d in saved.values():
        path = tmp_path / "p.json"
        path.write_text(json.dumps(d))
        assert FCPSPredictor.load(str(path)).judges == d["judges"]
        path.unlink()
