"""One predictor shape: every deployed predictor is a list of weighted members.

* files written by the previous format (version 2: one family at the top level, or a
  ``tie_average`` of unweighted members; fixtures written by fcps before the change, with
  the predictions that fcps gave) read into the member shape and predict what they did;
* a weighted sum of members predicts sum(w * member), checked against each member loaded
  on its own and against the SQL export (an independent implementation of the prediction);
* weights are validated (positive, summing to 1);
* the display wording: the family for one member, "average of N models" for more;
* "tie_average" is named (in code, outside docstrings) in at most 3 modules.
"""

from __future__ import annotations

import ast
import copy
import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from fcps_core.errors import PredictorError
from fcps_core.deploy.predictor import FORMAT_VERSION, FCPSPredictor

ROOT = Path(__file__).resolve().parents[1]
FIXTURES = ROOT / "tests" / "fixtures"
SINGLE = FIXTURES / "predictor_v2_single_hanna.json"
AVERAGE = FIXTURES / "predictor_v2_tie_average_llmbar.json"
EXPECTED = json.loads((FIXTURES / "predictor_v2_predictions.json").read_text())


def _rows(data: str, n: int = 40) -> pd.DataFrame:
    return pd.read_csv(ROOT / data).head(n)


def test_a_version_2_single_file_predicts_bit_for_bit_what_it_did():
    doc = json.loads(SINGLE.read_text())
    assert doc["format_version"] == 2 and "encoders" in doc      # the old layout
    pred = FCPSPredictor.load(str(SINGLE))
    assert len(pred.members) == 1 and pred.members[0][0] == 1.0
    assert pred.families == [doc["family"]] and pred.family == doc["family"]
    want = EXPECTED[SINGLE.name]
    got = pred.predict(_rows(want["data"]))
    assert got.tolist() == want["predictions"]                   # exactly, not approximately


def test_a_version_2_average_reads_as_equal_weights_and_predicts_what_it_did():
    doc = json.loads(AVERAGE.read_text())
    assert doc["format_version"] == 2 and doc["family"] == "tie_average" and len(doc["members"]) == 3
    pred = FCPSPredictor.load(str(AVERAGE))
    assert [w for w, _ in pred.members] == [1 / 3] * 3
    assert pred.families == [m["family"] for m in doc["members"]]
    want = EXPECTED[AVERAGE.name]
    np.testing.assert_allclose(pred.predict(_rows(want["data"])), want["predictions"], rtol=0, atol=1e-12)


@pytest.mark.parametrize("path", [SINGLE, AVERAGE], ids=["single", "average"])
def test_an_old_file_written_again_is_version_3_and_predicts_the_same(tmp_path, path):
    old = FCPSPredictor.load(str(path))
    out = tmp_path / "v3.json"
    old.save(str(out))
    doc = json.loads(out.read_text())
    assert doc["format_version"] == FORMAT_VERSION == 3
    assert set(doc) == {"format", "format_version", "fcps_version", "judges", "family", "members", "metadata",
                        "support"}
    assert all(set(m) == {"weight", "judges", "family", "encoders", "model", "metadata"} for m in doc["members"])
    new = FCPSPredictor.load(str(out))
    data = EXPECTED[path.name]["data"]
    assert np.array_equal(new.predict(_rows(data)), old.predict(_rows(data)))
    assert new.support == old.support and new.judge_schemas() == old.judge_schemas()


def _weighted_doc(weights) -> dict:
    """The version-3 document of the fixture average with the given member weights."""
    doc = FCPSPredictor.load(str(AVERAGE)).to_dict()
    for m, w in zip(doc["members"], weights):
        m["weight"] = w
    return json.loads(json.dumps(doc))


def _member_alone(doc: dict, i: int) -> FCPSPredictor:
    """Member i of ``doc`` as a predictor file of its own (one member, weight 1)."""
    m = copy.deepcopy(doc["members"][i])
    m["weight"] = 1.0
    one = {"format": doc["format"], "format_version": 3, "judges": m["judges"], "members": [m], "metadata": {}}
    return FCPSPredictor.from_dict(one)


def test_unequal_weights_give_the_weighted_sum_of_the_members():
    weights = [0.5, 0.125, 0.375]
    doc = _weighted_doc(weights)
    pred = FCPSPredictor.from_dict(doc)
    rows = _rows("data/llmbar.csv", 200)
    parts = [_member_alone(doc, i).predict(rows) for i in range(3)]
    want = 0.5 * parts[0] + 0.125 * parts[1] + 0.375 * parts[2]
    np.testing.assert_allclose(pred.predict(rows), want, rtol=0, atol=1e-15)
    assert np.abs(pred.predict(rows) - np.mean(parts, axis=0)).max() > 1e-4   # not the equal-weight mean


def test_the_sql_export_computes_the_same_weighted_sum(tmp_path):
    duckdb = pytest.importorskip("duckdb")
    from fcps_core.deploy.sql import predictor_sql
    pred = FCPSPredictor.from_dict(_weighted_doc([0.5, 0.125, 0.375]))
    rows = _rows("data/llmbar.csv", 200)
    csv = tmp_path / "t.csv"
    csv.write_text(rows.to_csv(index=False))        # test data only; the package writes CSV via writers.py
    con = duckdb.connect()
    con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv('{csv}', all_varchar = true)")
    got = con.execute(predictor_sql(pred)).fetchall()
    by_item = {str(i): p for i, p in got}
    sql = np.array([by_item[str(i)] for i in rows["item_id"]], dtype=float)
    np.testing.assert_allclose(sql, pred.predict(rows), rtol=0, atol=1e-12)


def test_one_member_is_its_own_expression_in_sql():
    from fcps_core.deploy.sql import predictor_sql
    single = predictor_sql(FCPSPredictor.load(str(SINGLE)))
    average = predictor_sql(FCPSPredictor.load(str(AVERAGE)))
    tail = single.split("END AS prediction")[0].rsplit("ELSE", 1)[1]
    assert "m0_" in tail and "m1_" not in tail and "1.0e0 *" not in tail     # no weight multiplies it
    assert average.count("(0.3333333333333333e0 * ") == 3


@pytest.mark.parametrize("weights, words", [
    ([0.5, 0.25, 0.2], "weights sum to 0.95, not 1"),
    ([1.0, 0.25, -0.25], "positive weight"),
    ([0.5, 0.5, 0.0], "positive weight"),
    ([0.5, 0.5, "0"], "positive weight"),
    ([0.5, 0.5, True], "positive weight"),
])
def test_bad_weights_are_refused_in_one_line(weights, words):
    with pytest.raises(PredictorError, match=words) as exc:
        FCPSPredictor.from_dict(_weighted_doc(weights))
    assert "\n" not in str(exc.value)


def test_a_member_list_is_checked_before_the_sql_export():
    from fcps_core.deploy.sql import predictor_sql
    pred = FCPSPredictor.load(str(AVERAGE))
    pred.members = [(0.5, m) for _, m in pred.members]          # weights 1.5 in all
    with pytest.raises(PredictorError, match="sum to 1.5"):
        predictor_sql(pred)
    pred.members = []
    with pytest.raises(PredictorError, match="non-empty list of members"):
        predictor_sql(pred)


def test_the_display_name_is_the_family_or_an_average_of_n_models():
    from fcps_core.reports.explain import display_family
    from fcps_core.defaults import deployed_family_name
    assert deployed_family_name("table", 1) == "table"
    assert deployed_family_name("table", None) == "table"
    assert deployed_family_name("tie_average", 4) == "average of 4 models"
    assert FCPSPredictor.load(str(SINGLE)).display_name == "logistic"
    assert FCPSPredictor.load(str(AVERAGE)).display_name == "average of 3 models"
    members = [{"family": "table"}, {"family": "logistic"}]
    assert display_family({"family": "tie_average", "members": members}) == "average of 2 models"
    assert display_family({"family": "backoff"}) == "back-off table"      # the plain name (issue 24 walk 2)


def _modules_naming(word: str) -> dict[str, list[str]]:
    """Module -> the string literals (docstrings excluded) that hold ``word``, over the package,
    the dashboard helpers and the pages."""
    found: dict[str, list[str]] = {}
    for top in ("fcps_core", "fcps_app", "app_pages"):
        for path in sorted((ROOT / top).rglob("*.py")):
            tree = ast.parse(path.read_text(encoding="utf-8"))
            docs = {id(node.body[0].value) for node in ast.walk(tree)
                    if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
                    and node.body and isinstance(node.body[0], ast.Expr)
                    and isinstance(node.body[0].value, ast.Constant)}
            hits = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
                    and word in n.value and id(n) not in docs]
            if hits:
                found[str(path.relative_to(ROOT))] = hits
    return found


def test_the_scan_finds_a_name_in_code_and_skips_docstrings(tmp_path):
    """The scan below sees literals and f-string parts, not docstrings (so it can fail)."""
    src = '"""tie_average in a docstring"""\nx = f"{1} tie_average"\n'
    tree = ast.parse(src)
    docs = {id(tree.body[0].value)}
    hits = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and "tie_average" in n.value and id(n) not in docs]
    assert hits == [" tie_average"]
    assert "fcps_core/defaults.py" in _modules_naming("tie_average")     # the choice rule's one name


def test_tie_average_is_named_in_at_most_three_modules():
    """The average is a list of members like any predictor: the choice rule's name lives in
    fcps_core.defaults (TIE_AVERAGE) and in user-facing words about the choice rule."""
    found = _modules_naming("tie_average")
    assert len(found) <= 3, found
