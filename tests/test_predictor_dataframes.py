"""``FCPSPredictor.predict`` and ``audit_traffic`` take a pandas DataFrame (wide: one column
per judge, optional item_id/group_id) or a 2-D numpy array (columns in the predictor's
``judges`` order) as well as a Panel; NaN is a missing output.

The DataFrame is what a notebook has: ``pd.read_csv(path)``, with pandas' own typing
(0/1 as integers, a column with gaps as floats, true/false as booleans, 'NA' as NaN). Its
predictions must equal the ``score`` command's on the same file -- exactly against the panel
``score`` reads, and at the printed precision against the command's output.
"""

from __future__ import annotations

import csv

import numpy as np
import pandas as pd
import pytest

from fcps_core import FCPSPredictor, PredictorError, read_panel
from fcps_core.cli.main import main
from fcps_core.deploy.audit import audit_traffic
from test_sql_dialects import default_predictor
from test_sql_export import continuous_csv, discrete_csv, selected


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("framepanels")
    return {"continuous": continuous_csv(tmp / "continuous.csv", rows=300),
            "discrete": discrete_csv(tmp / "discrete.csv", rows=300)}


@pytest.fixture(scope="module")
def panels(files):
    return {name: read_panel(str(path)) for name, path in files.items()}


def score_command(pred: FCPSPredictor, path, tmp_path, monkeypatch) -> dict[str, str]:
    """The ``score`` command's predictions file: item id -> printed prediction."""
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "store.duckdb"))
    model, out = tmp_path / "model.json", tmp_path / "scores.csv"
    pred.save(str(model), force=True)
    assert main(["score", str(model), str(path), "--out", str(out), "--force"]) == 0
    with open(out, newline="", encoding="utf-8") as fh:
        return {r["item_id"]: r["prediction"] for r in csv.DictReader(fh)}


def test_the_dataframe_holds_pandas_own_types(files):
    # Guard: the cases the spelling rule exists for really occur in pd.read_csv's frame.
    df = pd.read_csv(files["discrete"])
    assert df["bin_num"].dtype == float and df["bin_num"].isna().any()     # 0/1 with gaps
    assert df["bin_float"].dtype == float                                  # written 0.0/1.0
    assert df["bin_bool"].dtype == bool                                    # written true/false
    assert df["rubric"].dtype == float and not pd.api.types.is_numeric_dtype(df["bin_word"])   # str/object
    assert pd.read_csv(files["continuous"])["c0"].isna().any()             # 'NA' and empty cells


@pytest.mark.parametrize("name", ["discrete", "continuous"])
@pytest.mark.parametrize("family", ["table", "logistic", "ds_jury", "default"])
def test_dataframe_and_array_predictions_equal_score(panels, files, tmp_path, monkeypatch, name, family):
    pred = default_predictor(panels, name) if family == "default" else selected(panels, name, family)
    path = files[name]
    expected = pred.predict(read_panel(str(path), schema=pred.judge_schemas(), require_labels=False))
    printed = score_command(pred, path, tmp_path, monkeypatch)

    df = pd.read_csv(path)
    got = pred.predict(df)
    assert np.array_equal(got, expected)
    assert list(printed) == list(df["item_id"])
    assert [f"{p:.6f}" for p in got] == list(printed.values())

    array = df[pred.judges].to_numpy()          # the predictor's judges order, NaN missing
    assert np.array_equal(pred.predict(array), expected)
    # a numeric array (no strings): float columns, NaN for a gap
    if all(pd.api.types.is_numeric_dtype(df[j]) or df[j].dtype == bool for j in pred.judges):
        assert np.array_equal(pred.predict(df[pred.judges].to_numpy(dtype=float)), expected)


def test_audit_takes_a_dataframe_and_an_array(panels, files):
    pred = selected(panels, "discrete", "table")
    path = files["discrete"]
    panel = read_panel(str(path), schema=pred.judge_schemas(), require_labels=False)
    expected = audit_traffic(pred, panel).to_dict()
    df = pd.read_csv(path)
    assert audit_traffic(pred, df).to_dict() == expected
    assert audit_traffic(pred, df[pred.judges].to_numpy()).to_dict() == expected


def test_nan_none_and_missing_markers_are_missing_outputs(panels, files):
    pred = selected(panels, "discrete", "logistic")
    df = pd.read_csv(files["discrete"], dtype=str, keep_default_na=False)      # every cell as text
    base = pred.predict(df)
    j = next(j for j in pred.judges if pred.judge_schemas()[j] != "rubric")
    for missing in (np.nan, None, pd.NA, "", " n/a ", "NULL"):
        edited = df.copy()
        edited[j] = edited[j].astype(object)
        edited.loc[:9, j] = missing
        text = df.copy()
        text.loc[:9, j] = ""                                                     # an empty cell
        assert np.array_equal(pred.predict(edited), pred.predict(text)), missing
    assert not np.array_equal(pred.predict(text), base)       # the rows did change


def test_a_judge_empty_in_every_row_counts_as_missing_as_score_does(panels, files):
    pred = selected(panels, "discrete", "logistic")
    assert len(pred.judges) >= 2
    df = pd.read_csv(files["discrete"])
    df[pred.judges[0]] = np.nan
    got = pred.predict(df)
    text = pd.read_csv(files["discrete"], dtype=str, keep_default_na=False)
    text[pred.judges[0]] = "NA"              # every cell a missing marker, as text
    assert np.array_equal(got, pred.predict(text)) and np.isfinite(got).all()


def test_item_ids_come_from_the_item_column(panels, files):
    pred = selected(panels, "discrete", "table")
    df = pd.read_csv(files["discrete"])
    assert list(pred.as_panel(df).item_ids) == list(df["item_id"])
    assert list(pred.as_panel(df.drop(columns=["item_id"])).item_ids) == [str(i + 1) for i in range(len(df))]


def test_wrong_shapes_and_missing_columns_are_one_line_errors(panels, files):
    pred = selected(panels, "discrete", "table")
    df = pd.read_csv(files["discrete"])
    with pytest.raises(PredictorError, match=f"lacks judge column.*{pred.judges[0]}"):
        pred.predict(df.drop(columns=[pred.judges[0]]))
    with pytest.raises(PredictorError, match=r"shape \(rows, "):
        pred.predict(df[pred.judges[:-1]].to_numpy())
    with pytest.raises(PredictorError, match=r"shape"):
        pred.predict(np.zeros(len(pred.judges)))
    with pytest.raises(PredictorError, match="no rows"):
        pred.predict(df.iloc[:0])
    with pytest.raises(PredictorError, match="cannot score a list"):
        pred.predict([[1, 0]])
