"""Deployment audit, per-row support in scoring, missing outputs at scoring, audit runs in
the store (issue: deploy and monitor). Expected figures are computed by hand from the
paper's Eq. cell-pressure with traffic frequencies q(z) in place of p_z."""

import json
import math

import numpy as np
import pytest

from fcps_core import FCPSSelector, make_blocks
from fcps_core.cli.main import main
from fcps_core.deploy.audit import DEFAULT_THRESHOLDS, audit_traffic, distribution_drift
from fcps_core.deploy.support import calibration_support
from fcps_core.data.encoding import encode_panel, prefix_patterns
from fcps_core.errors import PredictorError
from fcps_core.families import PrefixFeatures, get_family
from fcps_core.ingest import load_panel
from fcps_core.deploy.predictor import FCPSPredictor
from fcps_core.store import Store
from fcps_core.paper.synthetic import make_regime
from fcps_core.files.csv_writer import write_wide_csv


def _csv(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows]) + "\n")
    return str(path)


def _hand_predictor(tmp_path, family="table"):
    """Two binary judges; calibration patterns (1,1) x3, (1,0) x2, (0,0) x1."""
    rows = [(f"c{i}", a, b, y) for i, (a, b, y) in enumerate(
        [(1, 1, 1), (1, 1, 1), (1, 1, 0), (1, 0, 1), (1, 0, 0), (0, 0, 0)])]
    panel = load_panel(_csv(tmp_path / "cal.csv", ["item_id", "j1", "j2", "label"], rows))
    fit_rows = np.arange(panel.n_rows)
    encoded = encode_panel(panel, fit_rows)
    X = PrefixFeatures(patterns=prefix_patterns(encoded.codes, encoded.alphabet_sizes),
                       scores=encoded.scores)
    model = get_family(family)().fit(X, panel.labels)
    pred = FCPSPredictor.single(["j1", "j2"], encoded.encoders, family, model, metadata={"panel": "cal"})
    pred.support = calibration_support(panel, fit_rows, encoded.encoders)
    return pred


def test_support_counts_the_calibration_patterns(tmp_path):
    sup = _hand_predictor(tmp_path).support
    assert sup["rows"] == 6 and sup["missing_rows"] == 0
    pats = {tuple(c): n for c, n in zip(sup["patterns"]["codes"], sup["patterns"]["counts"])}
    enc = _hand_predictor(tmp_path).models[0].encoders
    code = {tok: i for i, tok in enumerate(enc[0].vocab)}
    assert pats == {(code["1"], code["1"]): 3, (code["1"], code["0"]): 2, (code["0"], code["0"]): 1}
    assert [j["counts"][code["1"]] for j in sup["judges"]] == [5, 3]


def test_audit_pressure_equals_the_hand_computed_equation(tmp_path):
    pred = _hand_predictor(tmp_path)
    traffic = load_panel(_csv(tmp_path / "t.csv", ["item_id", "j1", "j2"],
                              [("a", 1, 1), ("b", 1, 1), ("c", 1, 0), ("d", 1, 0),
                               ("e", 0, 1), ("f", 0, 1), ("g", 0, 1), ("h", 0, 1)]),
                         require_labels=False)
    a = audit_traffic(pred, traffic)
    # q(11) = 2/8 with N = 3, q(10) = 2/8 with N = 2, q(01) = 4/8 unseen
    assert a.pressure_sum == pytest.approx(2 / 8 / 3 + 2 / 8 / 2, abs=1e-12)
    assert a.unseen_rate == pytest.approx(0.5)
    assert a.pressure == pytest.approx(2 / 8 / 3 + 2 / 8 / 2 + 0.5, abs=1e-12)
    # half the traffic sits in a pattern calibration never saw: a table cannot place it
    assert a.status == "REFUSE" and "never saw" in a.reasons[0]
    cells = {c["pattern"]: c for c in a.cells}
    assert cells["1|1"]["N_z"] == 3 and cells["1|1"]["q_z"] == pytest.approx(0.25)
    assert cells["0|1"]["unseen"] and cells["0|1"]["N_z"] == 0
    assert cells["1|1"]["p_z"] == pytest.approx(0.5)
    # the per-judge output distribution of j2: calibration 1 -> 3/6, traffic 1 -> 6/8
    j2 = a.judges[1]
    assert j2["tv"] == pytest.approx(abs(3 / 6 - 6 / 8), abs=1e-12)


def test_audit_thresholds_are_overridable_and_checked(tmp_path):
    pred = _hand_predictor(tmp_path)
    traffic = load_panel(_csv(tmp_path / "t.csv", ["item_id", "j1", "j2"],
                              [("a", 1, 1), ("b", 0, 1)]), require_labels=False)
    assert audit_traffic(pred, traffic, thresholds={"refuse_unseen": 0.9}).status == "WARN"
    with pytest.raises(PredictorError, match="unknown audit threshold"):
        audit_traffic(pred, traffic, thresholds={"refuse_everything": 1})


def test_drift_threshold_is_a_no_drift_quantile():
    rng = np.random.default_rng(0)
    p = np.array([0.5, 0.3, 0.2])
    cal = rng.multinomial(500, p)
    same = [distribution_drift(cal, rng.multinomial(800, p), seed=s) for s in range(40)]
    # under no drift TV exceeds its 99% threshold rarely (binomial(40, 0.01): <= 3 w.p. > 0.999)
    assert sum(d.shifted for d in same) <= 3
    moved = distribution_drift(cal, rng.multinomial(800, [0.2, 0.3, 0.5]), seed=0)
    assert moved.shifted and moved.tv > 0.25 and moved.p_value < 0.01
    # the threshold shrinks as both samples grow (sampling noise, not a constant)
    big = distribution_drift(cal * 20, rng.multinomial(16000, p), seed=0)
    assert big.threshold < same[0].threshold / 2


@pytest.fixture(scope="module")
def mixed_selection():
    panel = make_regime("mixed", rows=3000, judges=4, seed=3)
    blocks = make_blocks(panel, split="1:2:1", seed=0)
    result = FCPSSelector(families=["table", "logistic"], protocol="split", choice="argmin",
                          estimate="none", seed=0).fit(panel, blocks)
    return panel, result


def test_traffic_resampled_from_calibration_shows_no_drift(mixed_selection):
    panel, result = mixed_selection
    predictor = result.predictor()
    rng = np.random.default_rng(1)
    traffic = panel.take(rng.choice(result.fit_rows, size=4000, replace=True))
    a = audit_traffic(predictor, traffic, seed=0)
    assert not a.joint_drift.shifted
    assert not any(j["shifted"] for j in a.judges)
    assert a.status == "OK", a.reasons


def test_shifted_traffic_is_flagged(mixed_selection):
    panel, result = mixed_selection
    predictor = result.predictor()
    rng = np.random.default_rng(2)
    traffic = panel.take(rng.choice(result.fit_rows, size=4000, replace=True))
    judge = predictor.support_encoders()[0].name
    col = traffic.judge(judge)
    # the first judge now answers its majority output on every row
    col.codes[:] = np.bincount(col.codes).argmax()
    a = audit_traffic(predictor, traffic, seed=0)
    first = a.judges[0]
    assert first["shifted"] and first["tv"] > 0.2 and first["tv"] > 3 * first["threshold"]
    assert a.joint_drift.shifted
    assert a.status in ("WARN", "REFUSE") and any(judge in r for r in a.reasons)


def test_missing_outputs_are_flagged_not_crashing(tmp_path, mixed_selection):
    panel, result = mixed_selection
    predictor = result.predictor()
    traffic_rows = panel.take(result.fit_rows[:200])
    path = tmp_path / "traffic.csv"
    write_wide_csv(traffic_rows, str(path))
    judge = predictor.support_encoders()[0].name
    text = path.read_text().splitlines()
    header = text[0].split(",")
    k = header.index(judge)
    for i in range(1, 41):           # a judge was down for 40 rows
        cells = text[i].split(",")
        cells[k] = ""
        text[i] = ",".join(cells)
    path.write_text("\n".join(text) + "\n")
    traffic = load_panel(str(path), require_labels=False, schema=predictor.judge_schemas())
    pred = predictor.predict(traffic)
    assert np.isfinite(pred).all()
    support = predictor.row_support(traffic)
    names = support.missing_names()
    assert all(names[i] == judge for i in range(40)) and not any(names[40:])
    a = audit_traffic(predictor, traffic)
    assert a.missing_rate == pytest.approx(0.2)
    assert a.status != "OK" and any("lack a judge output" in r for r in a.reasons)
    assert a.missing_behaviour


def test_scalar_predictor_refuses_outputs_it_never_saw(tmp_path):
    pred = _hand_predictor(tmp_path, family="logistic")
    traffic = load_panel(_csv(tmp_path / "t.csv", ["item_id", "j1", "j2"],
                              [("a", 1, 1), ("b", 7, 1), ("c", 7, 0)]), require_labels=False,
                         schema={"j1": "categorical", "j2": "binary"})
    support = pred.row_support(traffic)
    assert support.in_support.tolist() == [True, False, False]
    assert audit_traffic(pred, traffic).status == "REFUSE"


def test_a_predictor_without_support_cannot_be_audited(tmp_path):
    pred = _hand_predictor(tmp_path)
    d = pred.to_dict()
    del d["support"]
    old = FCPSPredictor.from_dict(d)
    assert old.support is None and old.row_support(load_panel(str(tmp_path / "cal.csv"))) is None
    with pytest.raises(PredictorError, match="no calibration support"):
        audit_traffic(old, load_panel(str(tmp_path / "cal.csv")))


def test_a_tampered_support_section_is_refused(tmp_path):
    d = _hand_predictor(tmp_path).to_dict()
    d["support"]["patterns"]["codes"][0] = [0, 99]
    with pytest.raises(PredictorError, match="support"):
        FCPSPredictor.from_dict(json.loads(json.dumps(d)))


# -- CLI and store ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def stored_selection(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("deploy")
    panel = make_regime("mixed", rows=1500, judges=4, seed=5)
    path = tmp / "mixed.csv"
    write_wide_csv(panel, str(path))
    store = tmp / "store.duckdb"
    assert main(["select", str(path), "--families", "table", "logistic", "--protocol", "split",
                 "--choice", "argmin", "--estimate", "none", "--quiet", "--save", "--store",
                 str(store), "--panel-name", "mixed", "--save-model", str(tmp / "p.json")]) == 0
    return tmp, path, store


def test_cli_audit_saves_a_run_and_score_writes_support(stored_selection, capsys):
    tmp, path, store = stored_selection
    capsys.readouterr()
    assert main(["audit", "run:1", str(path), "--store", str(store), "--save", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] in ("OK", "WARN", "REFUSE") and out["rows"] == 1500
    s = Store(store)
    runs = s.runs(kind="audit")
    assert len(runs) == 1 and runs[0]["panel"] == "mixed"
    run = s.run(runs[0]["run_id"])
    assert run["result"]["status"] == out["status"] and run["result"]["cells"]
    assert s.run_predictor(runs[0]["run_id"])["family"] == json.load(open(tmp / "p.json"))["family"]
    assert s.export_run(runs[0]["run_id"], "csv").startswith(b"pattern,N_z")
    # score: predictions with N_z, in_support and the missing judges; a summary on stderr
    assert main(["score", str(tmp / "p.json"), str(path), "--out", str(tmp / "s.csv")]) == 0
    err = capsys.readouterr().err
    assert "outside calibration support" in err
    lines = (tmp / "s.csv").read_text().splitlines()
    assert lines[0] == "item_id,prediction,N_z,in_support,missing_judges" and len(lines) == 1501


def test_cli_audit_text_strict_and_bad_flags(stored_selection, tmp_path, capsys):
    tmp, path, store = stored_selection
    capsys.readouterr()
    assert main(["audit", str(tmp / "p.json"), str(path)]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[1].startswith("status: ") and "cell pressure" in text
    # a traffic file of unseen outputs: REFUSE, exit 3 under --strict
    bad = tmp_path / "bad.csv"
    judges = [e.name for e in FCPSPredictor.load(str(tmp / "p.json")).support_encoders()]
    _csv(bad, ["item_id"] + judges, [(f"x{i}",) + tuple(["weird"] * len(judges)) for i in range(20)])
    code = main(["audit", str(tmp / "p.json"), str(bad), "--strict",
                 "--schema", "categorical"])
    err = capsys.readouterr().err
    assert code == 3 and "Traceback" not in err
    assert main(["audit", str(tmp / "p.json"), str(path), "--warn-unseen", "-1"]) == 2
    assert "--warn-unseen" in capsys.readouterr().err
    assert main(["audit", "run:999", str(path), "--store", str(store)]) == 2
    assert "no stored run with id 999" in capsys.readouterr().err


def test_an_older_store_migrates_and_keeps_its_runs(tmp_path):
    import duckdb
    from fcps_core.store import migrate
    path = tmp_path / "old.duckdb"
    con = duckdb.connect(str(path))
    migrate(con, target=2)
    con.execute("INSERT INTO panels VALUES (1, 'p', 'binary', 1, 1, 1, false, NULL, NULL, NULL, "
                "NULL, NULL, NULL, NULL, now())")
    con.execute("INSERT INTO runs VALUES (1, 1, 'p', 'select', 'failed', NULL, '{}', 0, 'x', NULL, "
                "now(), 1.0, NULL, NULL, 'boom')")
    con.close()
    s = Store(path)
    assert s.runs()[0]["error"] == "boom"
    with pytest.raises(Exception, match="no stored predictor"):
        s.run_predictor(1)
    assert math.isfinite(DEFAULT_THRESHOLDS["warn_pressure"])


def test_predictions_csv_is_what_csv_writer_writes():
    """The fast join writes the same bytes as csv.writer, and falls back to it when a
    field (item id, judge name) needs quoting."""
    import csv
    import io
    from fcps_core.deploy.support import RowSupport, prediction_rows, predictions_csv

    class Rows:
        pass
    for ids, judges in ((["a", "b", "c"], ["j1", "j2"]), (["a,1", 'b"q', "c"], ["j1", "j2"]),
                        (["a", "b", "c"], ["j,1", "j2"]), ([], ["j1", "j2"])):
        panel = Rows()
        panel.item_ids = np.array(ids, dtype=object)
        n = len(ids)
        missing = np.zeros((n, 2), dtype=bool)
        missing[:1, 0] = True
        support = RowSupport(codes=np.zeros((n, 2), dtype=np.int64), N_z=np.arange(n), in_range=np.ones(n, bool),
                             in_support=np.arange(n) % 2 == 0, missing=missing,
                             parse_error=np.zeros((n, 2), bool), judges=judges)
        for s in (None, support):
            header, rows = prediction_rows(panel, np.linspace(0, 1, n), s)
            buf = io.StringIO()
            writer = csv.writer(buf)
            writer.writerow(header)
            writer.writerows(rows)
            assert predictions_csv(panel, np.linspace(0, 1, n), s) == buf.getvalue()


def test_the_support_shares_agree_with_the_unseen_share_and_small_shares_are_not_zero(tmp_path):
    """Walk 2 (rubric_40x300.d2's run under budget 10, 2,000 traffic rows): the Deploy page said
    "unseen patterns 27.3%" beside "outside support 27.2%" for the same 545 rows (1 - 1455/2000
    is 0.27249999999999996 in floating point), and "judge 'rub37' gives an output calibration
    never saw on 0% of rows" for one row of 2,000. The shares are the rows' own means, and a
    share under 1% prints its digits."""
    pred = _hand_predictor(tmp_path)
    rows = [(f"a{i}", 1, 1) for i in range(1455)] + [(f"b{i}", 0, 1) for i in range(545)]
    traffic = load_panel(_csv(tmp_path / "t.csv", ["item_id", "j1", "j2"], rows), require_labels=False)
    a = audit_traffic(pred, traffic)
    assert a.unseen_rate == a.out_of_support_rate == 545 / 2000
    assert f"{a.unseen_rate:.1%}" == f"{a.out_of_support_rate:.1%}"
    rows[0] = ("c", 2, 1)           # one row with an output calibration never saw
    traffic = load_panel(_csv(tmp_path / "t2.csv", ["item_id", "j1", "j2"], rows), require_labels=False)
    a = audit_traffic(pred, traffic)
    assert a.out_of_range_rate == 1 / 2000
    assert "never saw on 0.05% of rows" in a.reasons[0] and "on 0% of rows" not in a.reasons[0]


def test_missing_behaviour_of_an_average_over_families_says_which_model_does_what():
    """Browser walk (code-review panel, judges missing on 10-30 % of rows, an average of 7
    models): Deploy & monitor read "Missing outputs: a missing output is its own cell value
    ...; a missing output is an abstention ...; a missing output gets the judge's neutral score
    ..." as if all three held at once. Each kind now names its models; one kind reads as before."""
    from types import SimpleNamespace
    from fcps_core.deploy.audit import missing_behaviour
    from fcps_core.deploy.support import MISSING_BEHAVIOUR
    mixed = SimpleNamespace(families=["residual", "ds_jury", "logistic", "mean_iso", "logistic_pairwise", "logistic"])
    assert missing_behaviour(mixed) == (
        "In the scalar + table residual model, " + MISSING_BEHAVIOUR["table"] + ". "
        "In the Dawid-Skene jury model, " + MISSING_BEHAVIOUR["ds_jury"] + ". "
        "In the logistic, mean vote + isotonic and pairwise logistic models, " + MISSING_BEHAVIOUR["scalar"])
    assert missing_behaviour(SimpleNamespace(families=["logistic", "ridge_iso"])) == MISSING_BEHAVIOUR["scalar"]
    assert missing_behaviour(SimpleNamespace(families=["table"])) == MISSING_BEHAVIOUR["table"]
