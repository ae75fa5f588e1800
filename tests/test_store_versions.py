"""Panel versions, run ids, migration 5 and upload cleanup.

* A panel's version is a hash of its content; a run records the version it was computed
  on, and a run computed on a panel that was replaced (or deleted) meanwhile is refused
  with a plain message instead of being filed under the new panel: in the library, and
  through the command line with a real second process doing ``import --replace``.
* Run and panel ids are never handed out twice, not even after a delete.
* A store written by the previous schema (4) migrates on open and keeps its data readable.
* Uploads no stored panel came from are removed once old or too many; the one being written
  and every referenced one stay.
"""

from __future__ import annotations

import json
import os
import re
import time

import duckdb
import pytest

from fcps_core import make_blocks
from fcps_core.cli import main
from fcps_core.paper.experiments import calibration_growth
from fcps_core.ingest import uploads
from fcps_core.ingest.uploads import clean_uploads, save_upload
from fcps_core.store import LATEST_VERSION, MIGRATIONS, Store, StoreError, migrate
from fcps_core.store.panels import panel_version
from fcps_core.store.runs import PanelChangedError
from fcps_core.paper.synthetic import make_regime
from paper_protocol import select

from store_helpers import csv_text, good_rows, run_cli, write

HEX16 = re.compile(r"[0-9a-f]{16}")


def tiny_selection(panel):
    return select(panel, make_blocks(panel, split="1:2:1:1", seed=0), families=["table"],
                  paths=["info_first"])


@pytest.fixture(scope="module")
def computed():
    """Two different panels, a selection and a sweep computed on the first."""
    a = make_regime("mixed", rows=400, judges=4, seed=0)
    b = make_regime("parity", rows=300, judges=3, seed=1)
    sweep = calibration_growth(a, [40], n_select=80, n_val=80, n_test=120, splits=1, seed=0,
                               families=["table"], paths=["info_first"])
    return a, b, tiny_selection(a), sweep


# -- versions ------------------------------------------------------------------------------

def test_a_panel_version_is_a_hash_of_its_content(store, computed):
    a, b, _, _ = computed
    first = store.add_panel(a, name="a")["version"]
    assert HEX16.fullmatch(first) and first == panel_version(a)
    assert store.add_panel(a, name="same content")["version"] == first
    assert store.add_panel(b, name="b")["version"] != first
    relabelled = make_regime("mixed", rows=400, judges=4, seed=0)
    relabelled.labels[0] = 1 - relabelled.labels[0]
    assert panel_version(relabelled) != first
    panel, version = store.load_versioned_panel("a")
    assert version == first and panel_version(panel) == first       # the reload is the same content
    assert {p["name"]: p["version"] for p in store.panels()}["a"] == first
    with store.transaction():                                       # inside a write: same snapshot
        assert store.load_versioned_panel("a")[1] == first
    assert store.integrity_problems() == []


def test_a_run_records_the_version_of_the_panel_it_used(store, computed):
    a, _, result, sweep = computed
    version = store.add_panel(a, name="a")["version"]
    sel = store.save_selection(result, panel="a", panel_version=version)
    swp = store.save_sweep(sweep, panel="a", panel_version=version)
    unchecked = store.save_selection(result, panel="a")              # no version given: the stored one
    assert {store.run(r)["panel_version"] for r in (sel, swp, unchecked)} == {version}
    assert {r["panel_version"] for r in store.runs()} == {version}


SAVES = {
    "selection": lambda s, c, v: s.save_selection(c[2], panel="p", panel_version=v),
    "sweep": lambda s, c, v: s.save_sweep(c[3], panel="p", panel_version=v),
    "failed run": lambda s, c, v: s.save_failed_run(panel="p", kind="select", params={}, error="x",
                                                    panel_version=v),
    "audit": lambda s, c, v: s.save_audit({"status": "OK", "cells": []}, panel="p", predictor={},
                                          panel_version=v),
}


@pytest.mark.parametrize("kind", list(SAVES))
def test_a_run_on_a_panel_replaced_meanwhile_is_refused(store, computed, kind):
    a, b, _, _ = computed
    old = store.add_panel(a, name="p")["version"]
    new = store.add_panel(b, name="p", replace=True)["version"]     # another writer replaced it
    before = store.content_digest()
    with pytest.raises(PanelChangedError) as err:
        SAVES[kind](store, computed, old)
    assert str(err.value) == (f"panel 'p' was replaced while this run was computing (it used version "
                              f"{old}, the store now holds {new}); the run was not stored: run it again")
    assert store.content_digest() == before and store.runs() == []
    store.delete_panel("p")
    with pytest.raises(PanelChangedError, match="^panel 'p' was deleted while this run was computing; "
                                                "the run was not stored$"):
        SAVES[kind](store, computed, new)


def test_replacing_a_panel_with_the_same_content_keeps_its_version(store, computed):
    a, _, result, _ = computed
    version = store.add_panel(a, name="p")["version"]
    assert store.add_panel(a, name="p", replace=True)["version"] == version
    assert store.run(store.save_selection(result, panel="p", panel_version=version))["status"] == "done"


# -- ids -------------------------------------------------------------------------------------

def test_run_and_panel_ids_are_never_reused(store, computed):
    a, b, result, _ = computed
    store.add_panel(a, name="a")
    ids = [store.save_selection(result, panel="a") for _ in range(3)]
    assert ids == [1, 2, 3]
    store.delete_run(3)
    assert store.save_selection(result, panel="a") == 4
    store.delete_panel("a")                                         # every run goes with it
    store.add_panel(b, name="a")
    assert store.save_failed_run(panel="a", kind="select", params={}, error="x") == 5
    with store.reading() as cur:
        assert cur.execute("SELECT panel_id FROM panels").fetchall() == [(2,)]
    store.add_panel(a, name="a", replace=True)                      # a replace is a new panel id too
    with store.reading() as cur:
        assert cur.execute("SELECT panel_id FROM panels").fetchall() == [(3,)]
    assert store.save_selection(result, panel="a") == 6
    with store.transaction() as cur:
        cur.execute("DELETE FROM counters")                         # lost by hand: restarts above the rows
    assert store.save_selection(result, panel="a") == 7
    assert store.integrity_problems() == []


# -- migration ---------------------------------------------------------------------------------

def _version_4_store(path) -> None:
    """What fcps with schema 4 wrote: a panel, two runs (ids 2 and 7: 1 and 3-6 deleted),
    judge costs, metadata."""
    con = duckdb.connect(str(path))
    assert migrate(con, target=4) == [1, 2, 3, 4]
    con.execute("INSERT INTO panels VALUES (3, 'old', 'pairwise', 3, 3, 1, false, NULL, 'f.csv', "
                "'ab', 'wide', NULL, 'MIT', NULL, TIMESTAMP '2024-01-01 00:00:00')")
    con.execute("INSERT INTO judges VALUES (3, 0, 'j1', 'pairwise', NULL, NULL, 2, 0)")
    con.execute("INSERT INTO items VALUES (3, 0, 'a', 'a', 1.0, NULL), (3, 1, 'b', 'b', 0.0, NULL), "
                "(3, 2, 'c', 'c', 1.0, NULL)")
    con.execute("INSERT INTO outputs VALUES (3, 0, 0, 'A'), (3, 1, 0, 'B'), (3, 2, 0, 'A')")
    for run_id in (2, 7):
        con.execute("INSERT INTO runs VALUES (?, 3, 'old', 'select', 'failed', NULL, '{}', 0, '0.9', "
                    "NULL, TIMESTAMP '2024-01-02 00:00:00', 1.0, NULL, NULL, 'too few rows')", [run_id])
    con.execute("INSERT INTO judge_costs VALUES (3, 'j1', 0.5, 1.0)")
    con.execute("INSERT INTO meta VALUES ('seed_version', '1')")
    con.close()


def test_a_version_4_store_migrates_on_open_and_stays_readable(tmp_path, computed):
    path = tmp_path / "v4.duckdb"
    _version_4_store(path)
    store = Store(path)
    assert store.schema_version() == LATEST_VERSION == 8
    with store.reading() as cur:
        rows = cur.execute("SELECT version, description FROM schema_version ORDER BY version").fetchall()
        assert rows == [(v, d) for v, d, _ in MIGRATIONS]
        assert dict(cur.execute("SELECT name, value FROM counters").fetchall()) == {"run_id": 7, "panel_id": 3}
    panel, version = store.load_versioned_panel("old")
    assert HEX16.fullmatch(version)
    assert panel.labels.tolist() == [1.0, 0.0, 1.0] and panel.judge("j1").raw_outputs().tolist() == ["A", "B", "A"]
    assert [(r["run_id"], r["panel_version"]) for r in store.runs()] == [(7, version), (2, version)]
    assert store.run(2)["error"] == "too few rows"
    assert store.judge_costs("old") == {"j1": {"cost": 0.5, "latency": 1.0}}
    assert store.get_meta("seed_version") == "1"
    assert store.integrity_problems() == []
    # new writes continue above every id the old store handed out
    a = computed[0]
    assert store.add_panel(a, name="new")["panel_id"] == 4
    assert store.save_selection(computed[2], panel="new") == 8
    assert store.save_failed_run(panel="old", kind="select", params={}, error="x",
                                 panel_version=version) == 9
    # the migration is idempotent: a second open changes nothing
    digest = store.content_digest()
    fresh = Store(path)
    fresh._access.schema_ready = False
    assert fresh.content_digest() == digest


# -- the command line: a real second writer replaces the panel during a sweep --------------------

@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "cli.duckdb"
    monkeypatch.setenv("FCPS_STORE", str(path))
    return path


def test_sweep_save_after_a_concurrent_import_replace_is_refused(store_path, tmp_path, capsys, monkeypatch):
    first = write(tmp_path / "first.csv", csv_text(good_rows(240, seed=4)))
    second = write(tmp_path / "second.csv", csv_text(good_rows(240, seed=5)))
    assert main(["import", str(first), "--name", "judged"]) == 0
    old = Store(store_path).panel_info("judged")["version"]
    import fcps_core.paper.experiments as experiments
    original = experiments.calibration_growth
    replaced = []

    def sweep_then_replace(*args, **kwargs):
        result = original(*args, **kwargs)
        # while this sweep was computing, another process replaced the panel
        replaced.append(run_cli("import", str(second), "--name", "judged", "--replace",
                                "--store", str(store_path)))
        return result

    monkeypatch.setattr(experiments, "calibration_growth", sweep_then_replace)
    capsys.readouterr()
    code = main(["sweep", "judged", "--budgets", "30", "--splits", "1", "--n-select", "40",
                 "--n-val", "40", "--n-test", "60", "--menu", "table", "--paths", "info_first",
                 "--quiet", "--json", "--save"])
    out, err = capsys.readouterr()
    assert replaced and replaced[0][0] == 0, replaced
    new = Store(store_path).panel_info("judged")["version"]
    assert new != old
    message = (f"panel 'judged' was replaced while this run was computing (it used "
               f"version {old}, the store now holds {new}); the run was not stored: run it again")
    assert code == 2
    assert err == f"fcps: error: {message}\n"
    # under --json the error is also one JSON line on stdout (docs/json-contract.md, Errors)
    error = json.loads(out)
    assert error["error"] == message and error["exit"] == 2 and out.count("\n") == 1
    assert Store(store_path).runs() == []                           # not even a failed run


def test_select_save_of_a_file_panel_deleted_meanwhile_is_refused(store_path, tmp_path, capsys, monkeypatch):
    panel_file = write(tmp_path / "judged.csv", csv_text(good_rows(240, seed=4)))
    from fcps_core.selection import FCPSSelector
    original = FCPSSelector.fit

    def fit_then_delete(self, *args, **kwargs):
        result = original(self, *args, **kwargs)
        Store(store_path).delete_panel("judged")                   # another writer deleted it
        return result

    monkeypatch.setattr(FCPSSelector, "fit", fit_then_delete)
    code = main(["select", str(panel_file), "--families", "table", "--split", "1:2:1:1",
                 "--quiet", "--save"])
    err = capsys.readouterr().err
    assert code == 2
    assert err == ("fcps: error: panel 'judged' was deleted while this run was computing; "
                   "the run was not stored\n")


def test_select_save_records_the_panel_version_and_show_prints_it(store_path, tmp_path, capsys):
    panel_file = write(tmp_path / "judged.csv", csv_text(good_rows(240, seed=4)))
    assert main(["import", str(panel_file), "--name", "judged", "--json"]) == 0
    version = json.loads(capsys.readouterr().out)["panel"]["version"]
    assert main(["select", "judged", "--families", "table", "--split", "1:2:1:1", "--quiet",
                 "--save", "--json"]) == 0
    capsys.readouterr()
    (run,) = Store(store_path).runs()
    assert run["panel_version"] == version
    assert main(["show", "judged"]) == 0
    assert f"; version {version}" in capsys.readouterr().out


# -- upload cleanup -----------------------------------------------------------------------------

def _upload(folder, digest_char: str, size: int, age_hours: float, now: float, suffix=".csv"):
    path = folder / (digest_char * 32 + suffix)
    path.write_bytes(b"x" * size)
    os.utime(path, (now - age_hours * 3600, now - age_hours * 3600))
    return path


def test_cleanup_removes_old_unreferenced_uploads_only(tmp_path):
    folder = tmp_path / "uploads"
    folder.mkdir()
    now = time.time()
    saved = _upload(folder, "a", 10, 100, now)                      # a stored panel came from it
    old = _upload(folder, "b", 10, 100, now, ".parquet")            # previewed long ago
    recent = _upload(folder, "c", 10, 1, now)                       # previewed an hour ago
    fresh = _upload(folder, "d", 10, 0, now)                        # just written by another page
    protected = _upload(folder, "e", 10, 100, now)                  # the one being written
    foreign = folder / "notes.txt"
    foreign.write_text("not an upload")
    os.utime(foreign, (now - 10**6, now - 10**6))
    part = folder / ".upload-abc.part"                              # a killed writer's leftover
    part.write_bytes(b"half")
    os.utime(part, (now - 3600, now - 3600))
    outside = tmp_path / "outside.csv"
    outside.write_text("keep me")
    link = folder / ("f" * 32 + ".csv")
    link.symlink_to(outside)
    removed = clean_uploads(tmp_path, keep={"a" * 64}, protect=[protected], now=now)
    assert sorted(removed) == sorted([old, part])
    assert all(p.exists() for p in (saved, recent, fresh, protected, foreign, link, outside))


def test_cleanup_keeps_unreferenced_uploads_under_the_size_bound_oldest_going_first(tmp_path):
    folder = tmp_path / "uploads"
    folder.mkdir()
    now = time.time()
    files = [_upload(folder, c, 100, hours, now) for c, hours in (("1", 5), ("2", 4), ("3", 3), ("4", 2))]
    assert clean_uploads(tmp_path, now=now, max_bytes=250) == files[:2]
    assert [p.exists() for p in files] == [False, False, True, True]
    assert clean_uploads(tmp_path, now=now, max_bytes=250) == []
    assert clean_uploads(tmp_path / "no such store") == []


def test_saving_an_upload_cleans_the_folder_but_keeps_itself_and_what_was_stored(tmp_path, monkeypatch):
    monkeypatch.setattr(uploads, "UPLOAD_GRACE_SECONDS", 0.0)
    monkeypatch.setattr(uploads, "UPLOAD_MAX_AGE_HOURS", 0.0)      # every unreferenced one is "old"
    previewed = save_upload(b"a,b\n1,2\n", "preview.csv", tmp_path)          # no keep: no cleanup
    stored_bytes = csv_text(good_rows(40)).encode()
    stored = save_upload(stored_bytes, "stored.csv", tmp_path)
    import hashlib
    digest = hashlib.sha256(stored_bytes).hexdigest()
    time.sleep(0.01)
    new = save_upload(b"x,y\n3,4\n", "new.tsv", tmp_path, keep={digest})
    assert new.exists() and stored.exists() and not previewed.exists()
    assert sorted(p.name for p in (tmp_path / "uploads").iterdir()) == sorted([new.name, stored.name])
    again = save_upload(b"x,y\n3,4\n", "new.tsv", tmp_path, keep=set())     # re-saving itself: kept
    assert again == new and new.exists() and not stored.exists()
