"""What a stored selection deployed, as the run lists read it (issue 24: "the runs list shows
the best member's family for a run that deployed a tie average").

* A run that deployed an average of tied models is listed as that average: its family label
  and member count, the judges it calls (the union of its members' judges, counted here from
  the members' own judge lists), its own held-out and test MSE and its estimate on new items
  (the numbers of the result's ``selected`` and ``deployed_risk``, which the answer prints),
  never its best member's K or risk.
* A store written by the previous schema (7) opens, migrates and lists the same values for
  its runs, derived from their stored results; a value an older result did not carry is
  named in ``not_recorded`` (the pages say "not recorded"), never silently blank. The
  migration keeps every stored row, and a second open changes nothing.
"""

from __future__ import annotations

import re
import shutil

import duckdb
import pytest

from fcps_core import make_blocks, select
from fcps_core.paper.synthetic import make_regime
from fcps_core.store import LATEST_VERSION, Store

from store_helpers import as_version_7, edit_summary

#: the fields a run list reads off what a selection deployed
FIELDS = ["family", "K", "val_mse", "test_mse", "deployed_risk"]


@pytest.fixture(scope="module")
def tie_run():
    """A cross-fitted default selection that deploys an average of tied models whose judges'
    union (5 of 6 judges) differs from its best member's judge count (2)."""
    panel = make_regime("additive", rows=400, judges=6, seed=0)
    result = select(panel, make_blocks(panel, split="1:2:1:1", seed=0),
                    families=["table", "backoff", "logistic", "ridge_iso"], paths=["info_first"], n_jobs=1)
    d = result.to_dict()
    members = d["selected"].get("members") or []
    assert d["selected"]["family"] == "tie_average" and len(members) > 1
    return panel, result, d


def _listed(store: Store, run_id: int) -> dict:
    return next(r for r in store.runs() if r["run_id"] == run_id)


def test_a_tie_average_run_is_listed_as_what_it_deployed(store, tie_run):
    panel, result, d = tie_run
    store.add_panel(panel, name="additive")
    run_id = store.save_selection(result, panel="additive")
    row = _listed(store, run_id)
    sel, members = d["selected"], d["selected"]["members"]
    union = set().union(*(set(m["judges"]) for m in members))
    best = next(c for c in d["candidates"] if c["index"] == sel["index"])
    # the case this guards: the best member's K and risk are not the average's
    assert best["K"] != len(union) and best["val_mse"] != sel["val_mse"]
    assert row["family"] == "tie_average" and row["deployed_members"] == len(members)
    assert row["K"] == len(union) == 5
    assert row["val_mse"] == sel["val_mse"]                     # the average's own held-out MSE
    assert row["test_mse"] == sel["test_mse"]
    assert row["deployed_risk"] == d["deployed_risk"]["estimate"]
    assert row["not_recorded"] == []
    # the answer's deployed frontier point: the same judges and held-out risk
    chosen = next(p for p in d["frontier"] if p.get("chosen"))
    assert len(chosen["judges"]) == row["K"] and chosen["risk"] == pytest.approx(row["val_mse"], abs=1e-12)
    # a sweep or a failed run has nothing deployed and nothing missing
    failed = store.save_failed_run(panel="additive", kind="select", params={}, error="boom")
    assert {k: _listed(store, failed)[k] for k in FIELDS + ["not_recorded"]} == \
        {**dict.fromkeys(FIELDS), "not_recorded": []}
    # deleting the run removes what it deployed with it
    store.delete_run(run_id)
    with store.reading() as cur:
        assert cur.execute("SELECT count(*) FROM run_deployed").fetchone()[0] == 0
    assert store.integrity_problems() == []


def test_a_version_7_store_opens_with_the_deployed_values_or_not_recorded(tmp_path, tie_run):
    panel, result, d = tie_run
    made = tmp_path / "made.duckdb"
    store = Store(made)
    store.add_panel(panel, name="additive")
    full = store.save_selection(result, panel="additive")           # a result that carries everything
    older = store.save_selection(result, panel="additive")          # one from before deployed_risk existed
    bare = store.save_selection(result, panel="additive")           # one whose result is not left at all
    failed = store.save_failed_run(panel="additive", kind="select", params={}, error="boom")
    with store.reading():
        pass
    path = tmp_path / "v7.duckdb"           # a file this process never opened as a store
    shutil.copy(made, path)
    as_version_7(path)
    edit_summary(path, older, lambda s: s.pop("deployed_risk"))
    edit_summary(path, bare, lambda s: s.pop("selected"))
    con = duckdb.connect(str(path))
    before = {t: sorted(con.execute(f"SELECT * FROM {t}").fetchall(), key=str)
              for t in ("runs", "run_candidates", "run_predictors", "panels")}
    con.close()

    old = Store(path)
    assert old.schema_version() == LATEST_VERSION == 8
    rows = {r["run_id"]: r for r in old.runs()}
    sel = d["selected"]
    want = {"family": "tie_average", "K": len(set().union(*(set(m["judges"]) for m in sel["members"]))),
            "val_mse": sel["val_mse"], "test_mse": sel["test_mse"], "deployed_risk": d["deployed_risk"]["estimate"]}
    assert {k: rows[full][k] for k in FIELDS} == want and rows[full]["not_recorded"] == []
    assert {k: rows[older][k] for k in FIELDS} == {**want, "deployed_risk": None}
    assert rows[older]["not_recorded"] == ["deployed_risk"]
    # nothing of the result is left but its predictor: the family is the predictor's, the rest not recorded
    assert rows[bare]["family"] == "tie_average" and rows[bare]["deployed_members"] == len(sel["members"])
    assert rows[bare]["not_recorded"] == ["K", "val_mse", "test_mse", "deployed_risk"]
    assert {k: rows[bare][k] for k in FIELDS[1:]} == dict.fromkeys(FIELDS[1:])
    assert rows[failed]["not_recorded"] == []
    # every stored row is kept as it was; the store is sound; a second open changes nothing
    with old.reading() as cur:
        after = {t: sorted(cur.execute(f"SELECT * FROM {t}").fetchall(), key=str) for t in before}
    assert after == before
    assert old.integrity_problems() == []
    digest = old.content_digest()
    again = Store(path)
    again._access.schema_ready = False
    assert again.content_digest() == digest and again.schema_version() == 8
    # a run saved after the upgrade records its values at once
    new = old.save_selection(result, panel="additive")
    assert {k: _listed(old, new)[k] for k in FIELDS} == want


def test_the_command_line_lists_the_same_deployed_values(tmp_path, tie_run, capsys):
    """``runs`` prints what each run deployed at 4 decimals, "not recorded" where an older
    run kept no value."""
    from fcps_core.cli import main
    panel, result, d = tie_run
    made = tmp_path / "made.duckdb"
    store = Store(made)
    store.add_panel(panel, name="additive")
    older = store.save_selection(result, panel="additive")
    full = store.save_selection(result, panel="additive")
    with store.reading():
        pass
    path = tmp_path / "v7.duckdb"
    shutil.copy(made, path)
    as_version_7(path)
    edit_summary(path, older, lambda s: s.pop("deployed_risk"))
    assert main(["runs", "--store", str(path)]) == 0
    rows = {int(cells[0]): cells[4:9] for cells in
            (re.split(r"\s{2,}", line.strip()) for line in capsys.readouterr().out.splitlines()[2:])}
    sel, family = d["selected"], f"average of {len(d['selected']['members'])} models"
    assert rows[full] == [family, str(sel["K"]), f"{sel['val_mse']:.4f}", f"{d['deployed_risk']['estimate']:.4f}",
                          f"{sel['test_mse']:.4f}"]
    assert rows[older] == [family, str(sel["K"]), f"{sel['val_mse']:.4f}", "not recorded", f"{sel['test_mse']:.4f}"]


def test_a_snapshot_written_before_schema_8_loads_with_the_deployed_values(tmp_path):
    """A demo snapshot without run_deployed (written by the previous fcps) still loads, and
    each selection's deployed values are derived as the migration derives them."""
    import json as _json
    from fcps_core.seed import load_snapshot, write_snapshot
    shipped = Store(tmp_path / "shipped.duckdb")
    assert load_snapshot(shipped)
    old = tmp_path / "old-snapshot"
    write_snapshot(shipped, old)
    (old / "run_deployed.parquet").unlink()
    manifest = _json.loads((old / "manifest.json").read_text())
    del manifest["rows"]["run_deployed"]
    manifest["schema_version"] = 7
    (old / "manifest.json").write_text(_json.dumps(manifest))
    fresh = Store(tmp_path / "fresh.duckdb")
    assert load_snapshot(fresh, old)
    fields = FIELDS + ["deployed_members", "not_recorded"]
    want = [{k: r[k] for k in fields} for r in shipped.runs()]
    assert [{k: r[k] for k in fields} for r in fresh.runs()] == want
    assert any(r["deployed_members"] and r["deployed_members"] > 1 and r["K"] for r in want)
    assert fresh.integrity_problems() == []
