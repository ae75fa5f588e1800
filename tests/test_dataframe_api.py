"""The library takes pandas DataFrames where it takes files: read_panel, select (with no other
argument: the default selection), sweep; NaN labels are unlabelled rows."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import fcps_core
from fcps_core import read_panel, select, sweep
from fcps_core.errors import PanelError
from fcps_core.files.json_values import json_ready
from fcps_core.paper.synthetic import make_regime, to_wide_csv
from store_helpers import ROOT, assert_same_panel

LLMBAR = ROOT / "data" / "llmbar.csv"
HANNA = ROOT / "data" / "hanna.csv"


def comparable(result) -> dict:
    d = json_ready(result.to_dict())
    d.pop("timings", None)
    d["panel"].pop("name", None)
    return json.loads(json.dumps(d))


@pytest.mark.parametrize("path", [LLMBAR, HANNA], ids=["pairwise+rubric", "continuous"])
def test_a_data_frame_reads_as_its_file(path):
    assert_same_panel(read_panel(pd.read_csv(path)), read_panel(str(path)))


def test_a_long_frame_and_a_named_index(tmp_path):
    wide = pd.read_csv(LLMBAR).head(40)
    judges = [c for c in wide.columns if c not in ("item_id", "group_id", "label")][:3]
    long = wide.melt(id_vars=["item_id", "group_id", "label"], value_vars=judges,
                     var_name="judge", value_name="output")
    from_long = read_panel(long)
    from_wide = read_panel(wide[["item_id", "group_id", "label", *judges]])
    assert sorted(j.name for j in from_long.judges) == sorted(judges)
    assert from_long.n_rows == from_wide.n_rows == 40
    indexed = read_panel(wide.set_index("item_id"))          # the index is the item column
    assert indexed.item_ids.tolist() == wide["item_id"].tolist()


def test_frame_errors_name_the_frame():
    frame = pd.DataFrame({"item_id": ["a", "b"], "J1": ["A", "B"]})
    with pytest.raises(PanelError, match="<DataFrame>.*no label column"):
        read_panel(frame)
    with pytest.raises(PanelError, match="two columns named 'J1'"):
        read_panel(pd.DataFrame([[1, 2, 3]], columns=["label", "J1", "J1"]))


def test_nan_labels_are_unlabelled_rows():
    frame = pd.read_csv(HANNA)
    frame.loc[frame.index[:100], "label"] = np.nan
    panel = read_panel(frame)
    assert int(np.isnan(panel.labels).sum()) == 100 and panel.n_rows == len(frame)


def test_select_on_a_frame_is_the_default_selection(tmp_path):
    panel = make_regime("additive", rows=400, judges=4, seed=3)
    path = tmp_path / "p.csv"
    to_wide_csv(panel, str(path))
    frame = pd.read_csv(path)
    from_frame = select(frame, seed=0)
    assert from_frame.to_dict()["protocol"] == "crossfit"          # the default protocol
    expected = select(read_panel(str(path)), fcps_core.make_blocks(read_panel(str(path)), seed=0), seed=0)
    assert comparable(from_frame) == comparable(expected)
    assert comparable(select(str(path), seed=0)) == comparable(expected)


def test_sweep_takes_a_frame(tmp_path):
    panel = make_regime("parity", rows=600, judges=4, seed=1)
    path = tmp_path / "p.csv"
    to_wide_csv(panel, str(path))
    options = dict(n_select=100, n_val=100, n_test=200, splits=2, families=["table", "logistic"])
    a = sweep(pd.read_csv(path), [50, 100], **options)
    b = sweep(read_panel(str(path)), [50, 100], **options)
    assert a.cells and json.dumps(json_ready(a.cells)) == json.dumps(json_ready(b.cells))
    assert json.dumps(json_ready(a.records)) == json.dumps(json_ready(b.records))
