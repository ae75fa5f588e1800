"""Traffic outputs that differ from the calibration outputs only by case
(fcps_core/deploy/outputs.py): a pairwise judge calibrated on ``A``/``B``/``tie`` and scored
on ``a``/``b``/``TIE`` is read as calibrated, by ``score``, ``predict`` (files, panels and
DataFrames), ``audit`` and the SQL export in every dialect alike; an output whose fold
two calibration outputs share stays never seen; each judge is reported once, escaped.

Every expected number is the prediction of the *reference* traffic: the same rows with
the calibration's own spelling (and the ambiguous output left as it is in both), so the
case-changed traffic must score exactly as the reference."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import numpy as np
import pytest

from fcps_core import FCPSPredictor, read_panel
from fcps_core.cli.main import main
from fcps_core.data.encoding import encode_panel, prefix_patterns
from fcps_core.data.panel import MISSING
from fcps_core.deploy.outputs import fold, fold_targets
from fcps_core.deploy.sql import DIALECTS, predictor_sql
from fcps_core.deploy.support import calibration_support
from fcps_core.families import PrefixFeatures, get_family
from test_sql_dialects import assert_dialect_matches, postgres  # noqa: F401 (the server fixture)

ROWS = 400
JUDGES = ["pair", "cat", "flag", "amb"]
#: families that read the joint table, scalar scores, votes
FAMILIES = ["table", "backoff", "mean_iso", "logistic", "ds_jury"]
#: the traffic's spelling of each reference output (amb: 'Hi' and 'hi' were both
#: calibration outputs, so 'HI' is ambiguous and stays never seen; 'lo' has one)
CASED = {"pair": {"A": "a", "B": "b", "tie": "TIE"},
         "cat": {"Good": "GOOD", "Poor": "poor", "Meh": "Meh"},
         "flag": {"true": "TRUE", "false": "False"},
         "amb": {"HI": "HI", "hi": "hi", "lo": "LO", "": ""}}


def _write(path: Path, header, rows) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)
    return path


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("case")
    rng = np.random.default_rng(11)
    y = rng.integers(0, 2, ROWS)

    def noisy(acc):
        return np.where(rng.random(ROWS) < acc, y, 1 - y)

    pair = np.where(noisy(0.8) == 1, "A", "B").astype(object)
    pair[rng.random(ROWS) < 0.1] = "tie"
    cat = np.where(noisy(0.75) == 1, "Good", "Poor").astype(object)
    cat[rng.random(ROWS) < 0.1] = "Meh"
    flag = np.where(noisy(0.7) == 1, "true", "false")
    amb = np.where(noisy(0.7) == 1, "Hi", "lo").astype(object)
    amb[rng.random(ROWS) < 0.2] = "hi"
    amb[rng.random(ROWS) < 0.05] = ""                     # missing outputs: '<missing>' is a cell value
    cal = [[f"i{i}", pair[i], cat[i], flag[i], amb[i], int(y[i])] for i in range(ROWS)]
    header = ["item_id"] + JUDGES
    # the reference: calibration's spelling, but for the ambiguous 'HI', never seen here too
    reference = [[f"t{i}"] + r[1:4] + ["HI" if r[4] == "Hi" else r[4]] for i, r in enumerate(cal)]
    cased = [[r[0]] + [CASED[j][c] for j, c in zip(JUDGES, r[1:])] for r in reference]
    return {"calibration": _write(tmp / "cal.csv", header + ["label"], cal),
            "reference": _write(tmp / "reference.csv", header, reference),
            "cased": _write(tmp / "cased.csv", header, cased)}


def _predictor(panel, family: str) -> FCPSPredictor:
    """``family`` on every judge, fitted on every other row, with its calibration support,
    as its file holds it."""
    fit = np.arange(0, panel.n_rows, 2)
    enc = encode_panel(panel, fit)
    X = PrefixFeatures(patterns=prefix_patterns(enc.codes, enc.alphabet_sizes), scores=enc.scores)
    cls = get_family(family)
    rest = np.setdiff1d(np.arange(panel.n_rows), fit)
    model = cls().fit(X.take(fit), panel.labels[fit], X.take(rest) if cls.uses_unlabelled else None)
    pred = FCPSPredictor.single(panel.judge_names, enc.encoders, family, model, metadata={"panel": "cal"},
                                support=calibration_support(panel, fit, enc.encoders))
    return FCPSPredictor.from_dict(json.loads(json.dumps(pred.to_dict(), default=float)))


@pytest.fixture(scope="module")
def predictors(files):
    panel = read_panel(str(files["calibration"]))
    assert [j.schema for j in panel.judges] == ["pairwise", "categorical", "binary", "categorical"]
    assert panel.judge("amb").vocab == ["Hi", "hi", "lo", MISSING]
    return {f: _predictor(panel, f) for f in FAMILIES}


def _traffic(pred, path):
    return read_panel(str(path), schema=pred.judge_schemas(), require_labels=False)


# -- the rule ----------------------------------------------------------------------------------

def test_the_fold_is_ascii_case_and_surrounding_spaces_only():
    assert fold(" TiE\t") == "tie"
    assert fold("É") == "É" and fold("ß") == "ß"          # beyond ASCII: as SQLite's lower()
    assert fold_targets({"A", "B", "tie"}) == {"a": "A", "b": "B", "tie": "tie"}
    # two calibration outputs with one fold: neither is a target; the missing value never is
    assert fold_targets({"Tie", "tie", "A", MISSING}) == {"a": "A"}
    assert fold_targets({"<Missing>", "x"}) == {"x": "x"}


# -- Python: score and predict ------------------------------------------------------------------

@pytest.mark.parametrize("family", FAMILIES)
def test_case_changed_traffic_scores_as_the_calibration_spelling(predictors, files, family):
    pred = predictors[family]
    reference, cased = _traffic(pred, files["reference"]), _traffic(pred, files["cased"])
    expected, support = pred.score(reference)
    got, got_support = pred.score(cased)
    assert np.array_equal(got, expected)
    assert np.array_equal(pred.predict(cased), expected)
    assert np.array_equal(got_support.codes, support.codes)
    assert np.array_equal(got_support.in_support, support.in_support)
    # the ambiguous 'HI' is never seen in both (so the comparison is not vacuous there)
    k = pred.judges.index("amb")
    assert (support.codes[:, k] == -1).sum() > 0


def test_readings_name_each_output_once_and_keep_known_and_ambiguous_outputs(predictors, files):
    pred = predictors["table"]
    cased = _traffic(pred, files["cased"])
    read, readings = pred.read_outputs(cased)
    by = {r.judge: r for r in readings}
    assert set(by) == {"pair", "cat", "flag", "amb"}
    assert {(o, t) for o, t, _ in by["pair"].read} == {("a", "A"), ("b", "B"), ("TIE", "tie")}
    assert {(o, t) for o, t, _ in by["cat"].read} == {("GOOD", "Good"), ("poor", "Poor")}   # Meh is known
    assert {(o, t) for o, t, _ in by["flag"].read} == {("TRUE", "true"), ("False", "false")}
    assert [(o, t) for o, t, _ in by["amb"].read] == [("LO", "lo")]
    assert [o for o, _ in by["amb"].never_seen] == ["HI"]
    assert not by["pair"].never_seen
    raw = np.asarray(cased.judge("pair").vocab, dtype=object)[cased.judge("pair").codes]
    assert sum(n for _, _, n in by["pair"].read) == len(raw)          # every row, counted once
    # the panel read: calibration outputs where the fold had one; 'hi' (known) and 'HI' as written
    amb = read.judge("amb")
    assert set(amb.vocab) == {"HI", "hi", "lo", MISSING}
    # a panel already read is read as it is
    again, more = pred.read_outputs(read)
    assert again is read and [(r.judge, r.read) for r in more] == [("amb", [])]


def test_traffic_holding_both_spellings_merges_them(predictors, files, tmp_path):
    pred = predictors["backoff"]
    rows = [[f"m{i}", p, "Good", "true", "lo"] for i, p in enumerate(["A", "a", "B", "b", "tie", "Tie"])]
    panel = _traffic(pred, _write(tmp_path / "mixed.csv", ["item_id"] + JUDGES, rows))
    read, _ = pred.read_outputs(panel)
    assert sorted(read.judge("pair").vocab) == ["A", "B", "tie"]
    p = pred.predict(panel)
    assert p[0] == p[1] and p[2] == p[3] and p[4] == p[5]


def test_a_dataframe_reads_case_as_a_file_does(predictors, files):
    pd = pytest.importorskip("pandas")
    pred = predictors["logistic"]
    expected = pred.predict(_traffic(pred, files["reference"]))
    frame = pd.read_csv(files["cased"], keep_default_na=False, dtype=str)
    assert np.array_equal(pred.predict(frame), expected)


def test_whitespace_was_already_stripped_and_stays_so(predictors, files, tmp_path):
    # the panel reader strips every cell; so did score before the case rule
    pred = predictors["table"]
    with open(files["reference"], newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    padded = _write(tmp_path / "padded.csv", rows[0],
                    [[r[0]] + [f" \u00a0{c}\t" if c else c for c in r[1:]] for r in rows[1:]])
    traffic = _traffic(pred, padded)
    assert np.array_equal(pred.predict(traffic), pred.predict(_traffic(pred, files["reference"])))
    assert [r.read for r in pred.read_outputs(traffic)[1]] == [[]]      # only amb's 'Hi' never seen


# -- SQL: the same reading in every dialect -----------------------------------------------------

@pytest.mark.parametrize("dialect", DIALECTS)
@pytest.mark.parametrize("family", ["table", "mean_iso", "ds_jury"])
def test_sql_reads_case_as_python_in_every_dialect(predictors, files, request, dialect, family):
    pred = predictors[family]
    expected = pred.predict(_traffic(pred, files["reference"]))
    got = assert_dialect_matches(pred, files["cased"], dialect, request)   # SQL == Python, text and typed
    assert np.array_equal(np.array([got[f"t{i}"] for i in range(ROWS)]), expected)


@pytest.mark.parametrize("dialect", DIALECTS)
def test_sql_reads_padded_cased_cells_and_missing_markers_as_python(predictors, files, request, tmp_path, dialect):
    # the slow path (a cell trimmed first), missing markers in any case (never a fold's
    # target), the literal '<missing>' in both cases, an output never seen
    cells = [" a\t", "\u00a0TIE ", "NULL", "<MISSING>", "<missing>", "Na", "zz", "\u3000b", "B"]
    with open(files["cased"], newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    for k, cell in enumerate(cells):
        rows[1 + k][1] = cell                                   # pair
        rows[1 + k][2] = cell.replace("a", "good").replace("TIE", "POOR")      # cat
    edited = _write(tmp_path / "odd.csv", rows[0], rows[1:])
    pred = predictors["table"]
    assert_dialect_matches(pred, edited, dialect, request)
    read, _ = pred.read_outputs(_traffic(pred, edited))
    codes = read.judge("pair")
    assert [codes.vocab[c] for c in codes.codes[:len(cells)]] == [
        "A", "tie", MISSING, "<MISSING>", MISSING, MISSING, "zz", "B", "B"]


def test_sql_folds_only_letters_the_known_outputs_hold(predictors):
    sql = predictor_sql(predictors["table"], dialect="sqlite")
    assert "replace(" in sql and "'Z', 'z'" not in sql and "'T', 't'" in sql


# -- the command line: one line per judge, escaped; the audit ----------------------------------

def test_score_tells_each_judge_once_on_stderr_escaped(predictors, files, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "store.duckdb"))
    pred = predictors["table"]
    model = tmp_path / "model.json"
    pred.save(str(model))
    with open(files["cased"], newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    rows[1][2] = "Good\x1b[2J"                      # a never-seen output holding an escape sequence
    rows[2][2] = "\u202eGOOD"                       # and a bidi override
    traffic = _write(tmp_path / "cased-hostile.csv", rows[0], rows[1:])
    out = tmp_path / "scores.csv"
    assert main(["score", str(model), str(traffic), "--out", str(out)]) == 0
    err = capsys.readouterr().err
    assert "\x1b" not in err and "\u202e" not in err
    lines = err.splitlines()
    pair = [line for line in lines if line.startswith("judge 'pair':")]
    assert len(pair) == 1, err
    n_a = sum(1 for r in rows[1:] if r[1] == "a")
    assert f"'a' read as 'A' (case), {n_a:,} rows" in pair[0]
    cat = [line for line in lines if line.startswith("judge 'cat':")]
    assert len(cat) == 2 and "'GOOD' read as 'Good' (case)" in cat[0]
    assert "calibration never saw" in cat[1] and "'Good\\x1b[2J' 1" in cat[1] and "'\\u202eGOOD' 1" in cat[1]
    amb = [line for line in lines if line.startswith("judge 'amb':")]
    assert len(amb) == 2 and "'LO' read as 'lo'" in amb[0] and "'HI'" in amb[1]
    with open(out, newline="", encoding="utf-8") as fh:
        printed = [float(r["prediction"]) for r in csv.DictReader(fh)]
    expected = pred.predict(_traffic(pred, files["reference"]))
    assert np.allclose(printed[2:], expected[2:], atol=1e-6)


def test_audit_reports_readings_per_judge(predictors, files, tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "store.duckdb"))
    pred = predictors["backoff"]
    model = tmp_path / "model.json"
    pred.save(str(model))
    assert main(["audit", str(model), str(files["cased"]), "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    judges = {j["judge"]: j for j in d["judges"]}
    assert {r["output"]: (r["read_as"], r["why"]) for r in judges["pair"]["read_as"]} == {
        "a": ("A", "case"), "b": ("B", "case"), "TIE": ("tie", "case")}
    assert [r["output"] for r in judges["amb"]["never_seen_outputs"]] == ["HI"]
    assert judges["amb"]["never_seen_outputs"][0]["rows"] == round(judges["amb"]["never_seen_traffic"] * ROWS)
    # as the reference traffic: only the ambiguous output outside the support
    assert main(["audit", str(model), str(files["reference"]), "--json"]) == 0
    ref = json.loads(capsys.readouterr().out)
    assert ref["out_of_support_rate"] == d["out_of_support_rate"] and ref["status"] == d["status"]
    assert main(["audit", str(model), str(files["cased"])]) == 0
    text = capsys.readouterr().out
    assert "outputs calibration did not hold as written:" in text
    assert "judge 'pair': 'a' read as 'A' (case)" in text
