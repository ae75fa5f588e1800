"""The DuckDB store: schema and migrations, exact round trips, atomic writes, names as
data, exports that no spreadsheet executes."""

from __future__ import annotations

import csv
import io
import json
import math
import threading

import duckdb
import numpy as np
import pandas as pd
import pytest

from fcps_core import make_blocks
from paper_protocol import select
from fcps_core.paper.experiments import calibration_growth
from fcps_core.ingest import import_file, load_panel
from reference.row_reader import panel_from_columns, read_panel
from fcps_core.data.panel import Panel, build_judge_column
from fcps_core.store import (LATEST_VERSION, MIGRATIONS, Store, StoreError, migrate,
                             neutralise_cell)
from fcps_core.paper.synthetic import make_regime

from store_helpers import ROOT, assert_same_panel, csv_text, good_rows, write

DATA = ROOT / "data"




def small_selection(panel, **kw):
    blocks = make_blocks(panel, split="1:2:1:1", seed=0)
    return select(panel, blocks, families=kw.pop("families", ["table", "logistic", "one_coin_iso"]),
                  paths=["info_first", "random"], **kw)


def _jsonish(obj):
    """What a JSON round trip makes of a value: NaN -> None, tuples -> lists."""
    return json.loads(json.dumps(obj, default=str).replace("NaN", "null"))


# -- schema -------------------------------------------------------------------------------------

def test_new_store_records_every_migration(store):
    assert store.schema_version() == LATEST_VERSION
    with store.reading() as cur:
        rows = cur.execute("SELECT version, description FROM schema_version ORDER BY version").fetchall()
    assert rows == [(v, d) for v, d, _ in MIGRATIONS]


def test_an_old_store_is_migrated_and_keeps_its_panels(tmp_path):
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    assert migrate(con, target=1) == [1]
    # a panel written by a version-1 fcps, straight into the version-1 tables
    con.execute("INSERT INTO panels VALUES (1, 'old', 'pairwise', 2, 2, 1, false, NULL, 'f.csv', "
                "NULL, 'wide', NULL, 'MIT', NULL, TIMESTAMP '2024-01-01 00:00:00')")
    con.execute("INSERT INTO judges VALUES (1, 0, 'j1', 'pairwise', NULL, NULL, 2, 0)")
    con.execute("INSERT INTO items VALUES (1, 0, 'a', 'a', 1.0, NULL), (1, 1, 'b', 'b', 0.0, NULL)")
    con.execute("INSERT INTO outputs VALUES (1, 0, 0, 'A'), (1, 1, 0, 'B')")
    con.close()
    store = Store(path)
    panel = store.load_panel("old")
    assert store.schema_version() == LATEST_VERSION
    assert panel.labels.tolist() == [1.0, 0.0]
    assert panel.judge("j1").raw_outputs().tolist() == ["A", "B"]
    store.set_meta("k", "v")                         # a version-2 table now exists
    assert store.get_meta("k") == "v"


def test_a_store_from_a_newer_fcps_is_refused(tmp_path):
    path = tmp_path / "new.duckdb"
    Store(path).schema_version()
    con = duckdb.connect(str(path))
    con.execute("INSERT INTO schema_version VALUES (?, 'from the future', now())", [LATEST_VERSION + 1])
    con.close()
    fresh = Store(path)
    fresh._access.schema_ready = False               # as a new process would see it
    with pytest.raises(StoreError, match="newer fcps"):
        fresh.panels()


# -- panels -------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["llmbar.csv", "hanna.csv"])
def test_real_panels_round_trip_exactly(store, name):
    panel = read_panel(str(DATA / name))
    info = store.add_panel(panel, provenance={"file": name}, licence="MIT")
    assert info["n_rows"] == panel.n_rows and info["n_judges"] == len(panel.judges)
    assert info["provenance"] == {"file": name} and info["licence"] == "MIT"
    assert_same_panel(panel, store.load_panel(panel.name), check_name=True)


def test_round_trip_keeps_missing_outputs_unlabelled_rows_blocks_and_ranges(store):
    rng = np.random.default_rng(1)
    n = 50
    cols = {"item_id": [f"x{i}" for i in range(n)],
            "label": [["", "1", "0", "3"][i % 4] if i % 7 else "" for i in range(n)],
            "block": [["", "S", "M", "V"][i % 4] if i % 7 else "" for i in range(n)],
            "rub": [str(int(rng.integers(1, 5))) if i % 5 else "" for i in range(n)],
            "cont": [repr(float(v)) for v in rng.normal(size=n)],
            "cat": [["red", "green", "", "n/a"][i % 4] for i in range(n)]}
    panel = panel_from_columns(cols, label_range=(0, 3), judge_range=(0, 6))
    store.add_panel(panel, name="mixed bag")
    back = store.load_panel("mixed bag")
    assert_same_panel(panel, back)
    assert back.judge("rub").value_range == (0, 6)
    assert np.isnan(back.labels).sum() == np.isnan(panel.labels).sum() > 0
    info = store.panel_info("mixed bag")
    by_name = {j["name"]: j for j in info["judges"]}
    assert by_name["cat"]["n_missing"] == sum(1 for v in cols["cat"] if v in ("", "n/a"))
    assert by_name["cont"]["n_distinct"] == n


def test_judge_subset_loads_in_the_requested_order(store):
    panel = make_regime("additive", rows=200, judges=5, seed=2)
    store.add_panel(panel)
    sub = store.load_panel(panel.name, judges=["J4", "J2"])
    assert_same_panel(panel.subset_judges(["J4", "J2"]), sub)
    with pytest.raises(StoreError, match="no judge 'J9'"):
        store.load_panel(panel.name, judges=["J9"])


def test_duplicate_name_is_refused_and_replace_swaps_the_panel_and_its_runs(store):
    a = make_regime("additive", rows=300, judges=4, seed=0)
    b = make_regime("parity", rows=200, judges=3, seed=1)
    store.add_panel(a, name="p")
    store.save_selection(small_selection(a), panel="p")
    before = store.content_digest()
    with pytest.raises(StoreError, match="already exists"):
        store.add_panel(b, name="p")
    assert store.content_digest() == before
    store.add_panel(b, name="p", replace=True)
    assert_same_panel(b, store.load_panel("p"))
    assert store.runs(panel="p") == []
    with store.reading() as cur:
        assert cur.execute("SELECT count(*) FROM run_candidates").fetchone()[0] == 0
        assert cur.execute("SELECT count(*) FROM outputs").fetchone()[0] == b.n_rows * 3


def test_delete_panel_removes_its_rows_and_runs_only(store):
    keep = make_regime("mixed", rows=300, judges=4, seed=0)
    drop = make_regime("parity", rows=300, judges=4, seed=1)
    store.add_panel(keep, name="keep")
    store.add_panel(drop, name="drop")
    kept_run = store.save_selection(small_selection(keep), panel="keep")
    store.save_selection(small_selection(drop), panel="drop")
    counts = store.delete_panel("drop")
    assert counts["runs"] == 1 and counts["items"] == 300 and counts["outputs"] == 1200
    assert [p["name"] for p in store.panels()] == ["keep"]
    assert [r["run_id"] for r in store.runs()] == [kept_run]
    assert_same_panel(keep, store.load_panel("keep"))
    with pytest.raises(StoreError, match="no stored panel named 'drop'"):
        store.load_panel("drop")


NASTY_NAMES = ["x'); DROP TABLE panels; --", '<script>alert("x")</script>', "Ω \"quoted\" ; name",
               "a%_*", "1"]


@pytest.mark.parametrize("name", NASTY_NAMES)
def test_names_are_stored_as_data(store, tmp_path, name):
    rows = good_rows(40)
    rows[0][3] = name                               # a judge named like the panel
    write(tmp_path / "p.csv", csv_text([[_csv(c) for c in r] for r in rows]))
    import_file(store, str(tmp_path / "p.csv"), name=name)
    store.add_panel(make_regime("additive", rows=100, judges=3, seed=0), name="other")
    assert sorted(p["name"] for p in store.panels()) == sorted([name, "other"])
    back = store.load_panel(name)
    assert back.name == name and back.judge_names[0] == name
    assert store.panel_info(name)["judges"][0]["name"] == name
    with store.reading() as cur:                   # every table still there and intact
        tables = {r[0] for r in cur.execute("SELECT table_name FROM information_schema.tables").fetchall()}
    assert {"panels", "items", "outputs", "runs"} <= tables


def _csv(cell: str) -> str:
    return '"' + cell.replace('"', '""') + '"' if any(c in cell for c in ',"') else cell


@pytest.mark.parametrize("name,message", [
    ("", "empty"), ("  padded", "spaces"), ("tab\tname", "control"), ("x" * 121, "limit is 120"),
    ("run:3", "names runs")])
def test_invalid_names_are_refused_before_anything_is_written(store, name, message):
    before = store.content_digest()
    with pytest.raises(StoreError, match=message):
        store.add_panel(make_regime("additive", rows=50, judges=2, seed=0), name=name)
    assert store.content_digest() == before


# -- atomicity ---------------------------------------------------------------------------------

def test_an_import_that_fails_midway_leaves_no_trace(store, monkeypatch):
    store.add_panel(make_regime("mixed", rows=300, judges=4, seed=0), name="earlier")
    before = store.content_digest()
    calls = []

    def failing(cur, pid, judge_pos, table, numeric):
        calls.append(judge_pos)
        if judge_pos == 2:
            raise OSError("disk full")
        original(cur, pid, judge_pos, table, numeric)

    original = Store._insert_outputs
    monkeypatch.setattr(Store, "_insert_outputs", staticmethod(failing))
    with pytest.raises(OSError, match="disk full"):
        store.add_panel(make_regime("parity", rows=500, judges=5, seed=1), name="broken")
    assert calls == [0, 1, 2]                        # it really was midway
    assert store.content_digest() == before
    assert [p["name"] for p in store.panels()] == ["earlier"]


def test_a_run_that_fails_midway_leaves_no_trace(store, monkeypatch):
    panel = make_regime("mixed", rows=300, judges=4, seed=0)
    store.add_panel(panel, name="p")
    result = small_selection(panel)
    before = store.content_digest()

    def failing(cur, run_id, table):
        raise KeyboardInterrupt

    monkeypatch.setattr(Store, "_insert_cells", staticmethod(failing))
    with pytest.raises(KeyboardInterrupt):
        store.save_selection(result, panel="p")
    assert store.content_digest() == before and store.runs() == []


def test_transaction_rolls_back_everything_in_its_block(store):
    before = store.content_digest()
    with pytest.raises(RuntimeError, match="stop"):
        with store.transaction():
            store.add_panel(make_regime("additive", rows=100, judges=3, seed=0), name="a")
            store.add_panel(make_regime("parity", rows=100, judges=3, seed=0), name="b")
            assert store.has_panel("a") and store.has_panel("b")   # visible inside
            raise RuntimeError("stop")
    assert store.content_digest() == before and store.panels() == []


def test_a_write_inside_a_read_of_the_same_thread_is_refused(store):
    with store.reading():
        with pytest.raises(RuntimeError, match="inside Store.reading"):
            with store.transaction():
                pass
    store.set_meta("after", "ok")                     # the store is still usable
    assert store.get_meta("after") == "ok"


def test_content_digest_sees_every_change_and_ignores_order(store):
    d0 = store.content_digest()
    store.set_meta("a", "1")
    d1 = store.content_digest()
    store.set_meta("a", "2")
    d2 = store.content_digest()
    store.set_meta("a", "1")
    assert len({d0, d1, d2}) == 3 and store.content_digest() == d1


# -- runs ----------------------------------------------------------------------------------------

def test_selection_run_round_trips_to_the_result_contract(store):
    panel = make_regime("mixed", rows=600, judges=5, seed=3, tie_rate=0.1)
    store.add_panel(panel, name="p")
    result = small_selection(panel)
    run_id = store.save_selection(result, panel="p", label="mine")
    run = store.run(run_id)
    want = _jsonish(result.to_dict(cells_limit=0))
    got = run["result"]
    assert run["kind"] == "select" and run["status"] == "done" and run["label"] == "mine"
    assert run["panel_name"] == "p" and run["seed"] == 0
    from fcps_core import __version__
    assert run["version"] == __version__
    assert run["params"]["families"] == ["table", "logistic", "one_coin_iso"]
    assert run["params"]["blocks"]["n_T"] == len(result.blocks.T) > 0
    for key in ("panel", "split", "menu", "menu_size", "validation_scale", "theorem1_bound",
                "selected", "regime", "paths", "cells"):
        assert got[key] == want[key], key
    assert len(got["candidates"]) == len(want["candidates"])
    for g, w in zip(got["candidates"], want["candidates"]):
        assert {k: g[k] for k in w} == w
    assert sum(c["selected"] for c in got["candidates"]) == 1
    assert got["candidates"][want["selected"]["index"]]["selected"]
    assert store.find_run("mine") == run_id
    listed = store.runs()[0]
    assert (listed["family"], listed["K"]) == (want["selected"]["family"], want["selected"]["K"])


def test_sweep_run_round_trips_cells_and_records(store):
    panel = make_regime("parity", rows=800, judges=4, seed=0)
    store.add_panel(panel, name="p")
    sweep = calibration_growth(panel, [40, 80], n_select=100, n_val=100, n_test=200, splits=2,
                               seed=0, families=["table", "logistic", "mean_iso"], paths=["info_first"])
    run_id = store.save_sweep(sweep, panel="p", seconds=1.5)
    run = store.run(run_id)
    want = _jsonish(sweep.to_dict())
    assert run["result"]["cells"] == want["cells"]
    assert run["result"]["budgets"] == [40, 80] and run["seconds"] == 1.5
    n_menu_records = sum(len(r["menus"]) for r in want["records"])
    assert len(run["result"]["records"]) == n_menu_records
    with store.reading() as cur:
        menu_rows = cur.execute("SELECT n_M, menu, test_mse_mean, K_mode FROM sweep_menu_cells "
                                "WHERE run_id = ? ORDER BY n_M, menu", [run_id]).fetchall()
    expected = sorted((c["n_M"], m, v["test_mse_mean"], v["K_mode"])
                      for c in want["cells"] for m, v in c["menus"].items())
    assert menu_rows == expected


def test_failed_run_is_recorded_without_results(store):
    panel = make_regime("additive", rows=100, judges=3, seed=0)
    store.add_panel(panel, name="p")
    run_id = store.save_failed_run(panel="p", kind="select", params={"n_S": 9999},
                                   error="the blocks need 9999 labelled rows", seed=4)
    run = store.run(run_id)
    assert run["status"] == "failed" and run["result"] is None and run["seed"] == 4
    assert "9999" in run["error"]
    assert store.find_run(None) is None


def test_if_absent_keeps_one_run_per_label(store):
    panel = make_regime("additive", rows=300, judges=3, seed=0)
    store.add_panel(panel, name="p")
    result = small_selection(panel)
    first = store.save_selection(result, panel="p", label="seed:x", if_absent=True)
    again = store.save_selection(result, panel="p", label="seed:x", if_absent=True)
    assert first == again and len(store.runs()) == 1


def test_threads_write_runs_and_read_concurrently_without_loss(store):
    panel = make_regime("mixed", rows=300, judges=4, seed=0)
    store.add_panel(panel, name="p")
    result = small_selection(panel, families=["table"])
    errors, seen = [], []

    def writer():
        try:
            for _ in range(5):
                store.save_selection(result, panel="p")
        except Exception as exc:          # collected: an assertion in a thread would be lost
            errors.append(exc)

    def reader():
        try:
            for _ in range(10):
                seen.append(len(store.runs()))
        except Exception as exc:
            errors.append(exc)

    threads = [threading.Thread(target=f) for f in (writer, writer, writer, reader, reader)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    runs = store.runs()
    assert len(runs) == 15 and sorted(r["run_id"] for r in runs) == list(range(1, 16))
    assert all(0 <= s <= 15 for s in seen)


# -- export ------------------------------------------------------------------------------------

@pytest.mark.parametrize("cell,expected", [
    ("=1+2", "'=1+2"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("@SUM(A1)", "'@SUM(A1)"),
    ("-1+1", "'-1+1"), ("\tx", "'\tx"), ("-0.5", "-0.5"), ("+3", "+3"), ("-1e-3", "-1e-3"),
    ("A", "A"), ("", ""), (None, ""), ("a=b", "a=b")])
def test_neutralise_cell(cell, expected):
    assert neutralise_cell(cell) == expected


def test_csv_export_neutralises_formulas_but_keeps_numbers(store, tmp_path):
    cols = {"item_id": ["=HYPERLINK(\"x\")", "b", "c", "d"], "label": ["1", "0", "1", "0"],
            "@judge": ["=1+1", "A", "-2", "B"], "rating": ["-1.5", "2", "-3", "0"]}
    store.add_panel(panel_from_columns(cols, schema={"@judge": "categorical"}), name="f")
    text = store.export_panel("f", "csv").decode()
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == ["item_id", "group_id", "label", "'@judge", "rating"]
    assert rows[1][0] == "'=HYPERLINK(\"x\")" and rows[1][3] == "'=1+1"
    assert [r[4] for r in rows[1:]] == ["-1.5", "2.0", "-3.0", "0.0"]     # continuous: repr
    assert rows[3][3] == "-2"


def test_panel_exports_reimport_to_the_same_panel(store, tmp_path):
    panel = read_panel(str(DATA / "llmbar.csv"))
    store.add_panel(panel)
    store.export_panel("llmbar", "csv", tmp_path / "x.csv")
    store.export_panel("llmbar", "parquet", tmp_path / "x.parquet")
    assert_same_panel(panel, load_panel(str(tmp_path / "x.csv")))
    assert_same_panel(panel, load_panel(str(tmp_path / "x.parquet")))
    doc = json.loads(store.export_panel("llmbar", "json"))
    assert doc["panel"]["name"] == "llmbar" and len(doc["rows"]) == panel.n_rows
    assert doc["columns"][:3] == ["item_id", "group_id", "label"]


def test_run_exports(store, tmp_path):
    panel = make_regime("mixed", rows=400, judges=4, seed=0)
    store.add_panel(panel, name="p")
    result = small_selection(panel)
    run_id = store.save_selection(result, panel="p")
    frame = pd.read_csv(io.BytesIO(store.export_run(run_id, "csv")))
    assert len(frame) == len(result.candidates)
    assert frame["selected"].sum() == 1
    assert math.isclose(frame.loc[frame["selected"], "val_mse"].item(), result.selected.val_mse)
    store.export_run(run_id, "parquet", tmp_path / "r.parquet")
    assert len(pd.read_parquet(tmp_path / "r.parquet")) == len(result.candidates)
    assert json.loads(store.export_run(run_id, "json"))["run_id"] == run_id
    with pytest.raises(StoreError, match="unknown export format"):
        store.export_run(run_id, "xlsx")


def test_continuous_values_survive_the_text_store_bit_for_bit(store):
    values = np.array([1 / 3, 2 / 3, 1e-300, 123456789.125, -0.1, 5.0, np.nextafter(1.0, 2.0)])
    col = build_judge_column("m", [repr(float(v)) for v in values], schema="continuous")
    panel = Panel(item_ids=np.array([f"i{i}" for i in range(len(values))], dtype=object),
                  group_ids=np.array([f"i{i}" for i in range(len(values))], dtype=object),
                  labels=np.linspace(0, 1, len(values)), judges=[col])
    store.add_panel(panel, name="c")
    back = store.load_panel("c").judge("m").values
    assert back.tobytes() == values.tobytes()
