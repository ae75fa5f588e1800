"""The service layer's workflows themselves (fcps_core/service/): requests in, values out,
errors as the project's error types; and the two front ends agreeing where they used to
drift (traffic without a judge the predictor reads)."""

from __future__ import annotations

import hashlib
import json
import re

import numpy as np
import pytest

from fcps_core.cli.main import main
from fcps_core.defaults import DEFAULT_PATHS
from fcps_core.errors import FCPSError, PanelError
from fcps_core.service import deploy, parsers, upload
from fcps_core.service.select import SelectRequest, menu_paths, named_menu, run_select
from fcps_core.store import Store
from store_helpers import csv_text, good_rows, write

LACKS = "the traffic lacks judge column the predictor needs"     # one column is missing


def traced(calls: list, name: str, inner):
    """``inner`` recording its entry and exit in ``calls`` (to follow a workflow's layers)."""
    def call(*a, **k):
        calls.append(("enter", name))
        try:
            return inner(*a, **k)
        finally:
            calls.append(("leave", name))
    return call


# -- parsers: one reading of budgets, ranges and lists -------------------------------------------

def test_budgets_are_sorted_positive_whole_numbers():
    assert parsers.parse_budgets("200, 50,100,") == [50, 100, 200]
    with pytest.raises(FCPSError, match=r"the 'n_M budgets' control '50,x' must be comma-separated whole"):
        parsers.parse_budgets("50,x", "the 'n_M budgets' control")
    with pytest.raises(FCPSError, match="positive"):
        parsers.parse_budgets("0,10")
    with pytest.raises(FCPSError, match="positive"):
        parsers.parse_budgets(" , ")


def test_ranges_are_two_increasing_finite_numbers_and_name_the_flag():
    assert parsers.parse_range("1,5") == (1.0, 5.0)
    assert parsers.parse_range(None) is None
    for bad in ("5,1", "1,1", "1,inf", "1", "1,2,3", "a,b"):
        with pytest.raises(FCPSError, match="--judge-range"):
            parsers.parse_range(bad, "--judge-range")


def test_names_split_on_commas_and_spaces():
    assert parsers.parse_names(["a,b", " c ", ",,"]) == ["a", "b", "c"]
    assert parsers.parse_names(None) is None


# -- select ----------------------------------------------------------------------------------------

def test_the_default_menu_adds_the_cost_path_only_with_costs():
    assert menu_paths(None, None) == tuple(DEFAULT_PATHS)
    assert menu_paths(None, {"j1": 1.0}) == tuple(DEFAULT_PATHS) + ("cost_aware",)
    assert menu_paths(["random"], {"j1": 1.0}) == ("random",)      # a menu the user chose is kept


def test_a_named_menu_refuses_the_flags_it_replaces():
    assert named_menu(None) == {}
    with pytest.raises(FCPSError, match="drop --families"):
        named_menu("paper_table", **{"--families": ["table"], "--paths": None})


def test_a_select_request_runs_the_selector_once_and_stores_what_it_returns(tmp_path):
    """The outcome's result is what the selector gives on the same blocks and options
    (reached directly here); the stored run holds that selection and its predictor."""
    from fcps_core.selection import FCPSSelector
    from fcps_core.data.splits import make_blocks
    from fcps_core.store.panels import panel_version
    from fcps_core.paper.synthetic import make_regime
    panel = make_regime("mixed", rows=400, judges=4, seed=0)
    store = Store(tmp_path / "s.duckdb")
    store.add_panel(panel, name="p")
    options = dict(families=["table", "logistic"], paths=["info_first"], protocol="split", choice="argmin")
    outcome = run_select(SelectRequest(panel, split="1:2:1:1", seed=3, options=options, save=True, store=store,
                                       panel_name="p", panel_version=panel_version(panel)))
    direct = FCPSSelector(**options, seed=3).fit(panel, make_blocks(panel, split="1:2:1:1", seed=3))
    assert outcome.result.selected_dict() == direct.selected_dict()
    assert isinstance(outcome.run_id, int)
    run = store.run(outcome.run_id)
    assert run["result"]["selected"]["family"] == direct.selected_dict()["family"]
    assert store.run_predictor(outcome.run_id) == json.loads(json.dumps(outcome.predictor.to_dict()))


@pytest.mark.parametrize("n_groups", [2, 3])
def test_too_few_groups_for_the_folds_are_refused_for_that_reason_whatever_the_block_draw_says(tmp_path, n_groups):
    """Two labelled groups cannot fill the three blocks the draw makes, three can; the
    cross-fitted protocol pools those blocks, so either way the refusal names its own need
    (one group per fold) and the fixes for it. The split protocol keeps the draw's reason."""
    from fcps_core.ingest.load import load_panel
    rows = good_rows(60)
    for i, row in enumerate(rows[1:]):
        row[1] = f"g{i * n_groups // 60}"
    panel = load_panel(str(write(tmp_path / "few.csv", csv_text(rows))))
    with pytest.raises(FCPSError, match=rf"cross-fitting needs at least 5 labelled groups outside T \(found {n_groups}\); "
                                        r"lower --folds or label more groups"):
        run_select(SelectRequest(panel, seed=0))
    if n_groups == 2:
        with pytest.raises(FCPSError, match="2 labelled groups but 3 blocks need at least one group each"):
            run_select(SelectRequest(panel, seed=0, options={"protocol": "split"}))


# -- upload: read once, preview, commit the same panel -------------------------------------------

def test_an_upload_is_read_once_and_stored_as_the_import_command_stores_the_file(tmp_path, monkeypatch,
                                                                                 upload_csv_bytes):
    import fcps_core.ingest as ingest
    reads = []
    real = ingest.load_panel
    monkeypatch.setattr(ingest, "load_panel", lambda *a, **k: reads.append(1) or real(*a, **k))
    store = Store(tmp_path / "s.duckdb")
    columns = upload.preview_upload(store, "mixed.csv", upload_csv_bytes)["columns"]
    assert "label" in columns
    panel = upload.parse_upload(store, "mixed.csv", upload_csv_bytes, {})
    info = upload.commit_upload(store, panel, "mixed.csv", upload_csv_bytes, {}, panel_name="m", licence="MIT")
    assert len(reads) == 1                      # the full read: once (the preview reads a sample)
    # the reference: the import command's one-go path on the same bytes, in another store
    path = write(tmp_path / "mixed.csv", upload_csv_bytes)
    reference = ingest.import_file(Store(tmp_path / "r.duckdb"), str(path), name="m")
    assert info["version"] == reference["version"]
    assert info["source_sha256"] == hashlib.sha256(upload_csv_bytes).hexdigest() == reference["source_sha256"]
    assert info["source"] == "mixed.csv" and store.panel_info("m")["licence"] == "MIT"


def test_an_unusable_upload_is_refused_before_the_store_is_touched(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    data = csv_text([["item_id", "label", "j1"], ["a", "", "1"], ["b", "", "0"]]).encode()
    panel = upload.parse_upload(store, "nolabels.csv", data, {"require_labels": False})
    with pytest.raises(PanelError, match="nolabels.csv.*no row has a label"):
        upload.commit_upload(store, panel, "nolabels.csv", data, {}, panel_name="x")
    assert not store.has_panel("x")


def test_the_dashboard_commits_the_panel_its_page_read(tmp_path, monkeypatch, upload_csv_bytes):
    """fcps_app.common (what the Upload page calls): the page's read (load_bytes) and the
    commit (import_upload) read the file once between them, and the commit goes page ->
    service -> the import checks -> the store."""
    import fcps_core.ingest as ingest
    from fcps_app import common
    Store(tmp_path / "s.duckdb").set_meta("seed_version", "test")      # the app seeds nothing
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "s.duckdb"))
    common.get_store.clear()
    import fcps_core.ingest.load as load
    import fcps_core.service.upload as service
    from fcps_core.store.panels import PanelStore
    reads = []
    monkeypatch.setattr(ingest, "load_panel", traced(reads, "read", ingest.load_panel))
    monkeypatch.setattr(service, "commit_upload", traced(reads, "service", service.commit_upload))
    monkeypatch.setattr(load, "import_read_panel", traced(reads, "checks", load.import_read_panel))
    monkeypatch.setattr(PanelStore, "add_panel", traced(reads, "store", PanelStore.add_panel))
    options = {"layout": "auto"}
    try:
        panel = common.load_bytes("mixed.csv", upload_csv_bytes, json.dumps(options, sort_keys=True))
        info = common.import_upload("mixed.csv", upload_csv_bytes, options, panel_name="dash", licence="")
    finally:
        common.get_store.clear()
        common.load_bytes.clear()
    # the page's read once, then down through the service to the store, each layer once
    assert reads == [("enter", "read"), ("leave", "read"), ("enter", "service"), ("enter", "checks"),
                     ("enter", "store"), ("leave", "store"), ("leave", "checks"), ("leave", "service")]
    assert info["n_rows"] == panel.n_rows == 600


# -- deploy: both front ends refuse traffic without a judge the predictor reads ------------------

@pytest.fixture(scope="module")
def deployed(tmp_path_factory):
    """A predictor selected on a 3-judge binary panel (its file), and traffic lacking the
    first judge it reads."""
    folder = tmp_path_factory.mktemp("deploy")
    rng = np.random.default_rng(1)
    y = rng.integers(0, 2, 160)
    outs = np.where(rng.random((160, 3)) < 0.8, y[:, None], 1 - y[:, None])
    rows = [["item_id", "label", "j1", "j2", "j3"]] + \
        [[f"c{i}", str(y[i])] + [str(v) for v in outs[i]] for i in range(160)]
    path = write(folder / "cal.csv", csv_text(rows))
    panel = upload.read_panel_file(str(path))
    outcome = run_select(SelectRequest(panel, split="1:2:1", options=dict(families=["logistic"],
                                                                          paths=["info_first"])))
    predictor = outcome.predictor
    predictor.save(str(folder / "p.json"))
    gone = predictor.judges[0]
    kept = [j for j in ("j1", "j2", "j3") if j != gone]
    traffic = [["item_id", *kept]] + [[f"t{i}"] + [str(i % 2)] * len(kept) for i in range(30)]
    return {"folder": folder, "predictor": predictor, "gone": gone,
            "traffic": write(folder / "traffic.csv", csv_text(traffic))}


def test_the_service_refuses_traffic_without_a_judge_the_predictor_reads(deployed):
    def load(judges):
        return upload.read_panel_file(str(deployed["traffic"]), judges=judges, require_labels=False,
                                      schema=deployed["predictor"].judge_schemas())
    with pytest.raises(FCPSError, match=re.escape(f"traffic.csv: {LACKS}: '{deployed['gone']}';")):
        deploy.load_traffic(load, deployed["predictor"], where="traffic.csv")


@pytest.mark.parametrize("command", ["score", "audit"])
def test_the_command_line_refuses_it(deployed, command, capsys):
    code = main([command, str(deployed["folder"] / "p.json"), str(deployed["traffic"])])
    err = capsys.readouterr().err
    assert code == 2 and LACKS in err and deployed["gone"] in err


def test_the_deploy_page_refuses_it_in_the_same_words(deployed, tmp_path, monkeypatch):
    """The Deploy page's audit (fcps_app.deploy.run_audit) of an uploaded traffic file and
    of a stored panel as traffic: the command line's refusal, where the page used to audit
    whatever columns were there."""
    from fcps_app.common import get_store
    from fcps_app.deploy import run_audit
    store = Store(tmp_path / "s.duckdb")
    store.set_meta("seed_version", "test")
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "s.duckdb"))
    get_store.clear()
    doc = json.dumps(deployed["predictor"].to_dict())
    data = deployed["traffic"].read_bytes()
    try:
        with pytest.raises(FCPSError, match=re.escape(f"traffic.csv: {LACKS}: '{deployed['gone']}';")):
            run_audit(doc, ("upload", "traffic.csv", data, "item_id"))
        traffic = upload.read_panel_file(str(deployed["traffic"]), require_labels=False)
        info = store.add_panel(traffic, name="live")
        with pytest.raises(FCPSError, match=re.escape(f"panel 'live': {LACKS}: '{deployed['gone']}';")):
            run_audit(doc, ("stored", "live", str(info["created_at"])))
    finally:
        get_store.clear()


def test_the_deploy_page_audits_a_panel_uploaded_in_this_session(deployed, tmp_path, monkeypatch):
    """A panel uploaded in this session ("Use this panel") picked as traffic is read with its
    own column mapping (it was taken for a traffic file whose item id column was the
    mapping's JSON text)."""
    from fcps_app.common import get_store
    from fcps_app.deploy import run_audit
    Store(tmp_path / "s.duckdb").set_meta("seed_version", "test")
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "s.duckdb"))
    get_store.clear()
    doc = json.dumps(deployed["predictor"].to_dict())
    data = (deployed["folder"] / "cal.csv").read_bytes()
    try:
        audit, text, panel = run_audit(doc, ("session", "cal.csv", data, json.dumps({"layout": "auto"})))
    finally:
        get_store.clear()
    assert audit["rows"] == 160 and len(text.strip().splitlines()) == 161


def test_a_cli_select_goes_down_through_the_service_once(tmp_path, monkeypatch, capsys):
    """``python -m fcps_core select FILE --save``: the command builds one request, the
    service runs it (the fits once, inside it) and stores the run (inside it), then the
    command renders: front end -> service -> engine/store, each once, downward."""
    import fcps_core.selection as selection
    import fcps_core.service.select as service
    from fcps_core.store.runs import RunStore
    calls = []
    run_select, fit, save = service.run_select, selection.FCPSSelector.fit, RunStore.save_selection

    monkeypatch.setattr(service, "run_select", traced(calls, "service", run_select))
    monkeypatch.setattr(selection.FCPSSelector, "fit", traced(calls, "fit", fit))
    monkeypatch.setattr(RunStore, "save_selection", traced(calls, "store", save))
    path = write(tmp_path / "p.csv", csv_text(good_rows(80)))
    code = main(["select", str(path), "--families", "table", "--paths", "info_first", "--k-max", "2",
                 "--protocol", "split", "--save", "--store", str(tmp_path / "s.duckdb"), "--quiet"])
    capsys.readouterr()
    assert code == 0
    assert calls == [("enter", "service"), ("enter", "fit"), ("leave", "fit"), ("enter", "store"),
                     ("leave", "store"), ("leave", "service")]
