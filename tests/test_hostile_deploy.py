"""Hostile input against the deploy side (issue 26, items 1, 4, 5, 6, 7, 11): every CSV the
tool writes neutralises spreadsheet formulas; tampered predictor files are refused in one
line before they cost time or memory; a predictor is validated on load with the SQL
export's rules; traffic far outside the calibration range is out of support for every
family; judge names that differ only by case are refused by the SQL export; a judge empty
in every traffic row is what the audit reports, not an error.

Every predictor here is fitted in the test on a small hand-made panel (tmp_path), and
every hostile file is written by the test itself."""

from __future__ import annotations

import csv
import io
import json

import duckdb
import numpy as np
import pytest

from fcps_core.cli.main import main
from fcps_core.deploy.audit import audit_traffic
from fcps_core.deploy.sql import predictor_sql
from fcps_core.deploy.support import calibration_support, predictions_csv
from fcps_core.deploy.validate import MAX_DEPTH, MAX_PREDICTOR_BYTES, parse_predictor_json
from fcps_core.deploy.writer import predictions_csv_bytes
from fcps_core.data.encoding import encode_panel, prefix_patterns
from fcps_core.errors import PredictorError
from fcps_core.families import PrefixFeatures, get_family
from fcps_core.ingest import load_panel
from fcps_core.deploy.predictor import FCPSPredictor
from fcps_core.files.csv_writer import csv_cell, csv_text, frame_csv, neutralise_cell, write_wide_csv
from store_helpers import assert_one_line_error


# -- helpers ---------------------------------------------------------------------------------

def _write_csv(path, header, rows) -> str:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return str(path)


def _fit(panel, family: str, judges=None, **params) -> FCPSPredictor:
    """A predictor of ``family`` fitted on every row of ``panel`` (with its support)."""
    sub = panel.subset_judges(judges or panel.judge_names)
    rows = np.arange(sub.n_rows)
    enc = encode_panel(sub, rows)
    X = PrefixFeatures(patterns=prefix_patterns(enc.codes, enc.alphabet_sizes), scores=enc.scores)
    model = get_family(family)(**params).fit(X, sub.labels)
    pred = FCPSPredictor.single(sub.judge_names, enc.encoders, family, model, metadata={"panel": "cal"})
    pred.support = calibration_support(sub, rows, enc.encoders)
    return pred


def _tie(panel, *members) -> FCPSPredictor:
    judges = [j for j in panel.judge_names if any(j in m.judges for m in members)]
    pred = FCPSPredictor.average([m.models[0] for m in members], judges=judges, metadata={"panel": "cal"})
    pred.support = calibration_support(panel, np.arange(panel.n_rows), pred.support_encoders())
    return pred


def _continuous_panel(tmp_path, names=("c1", "c2"), rows=200, seed=0):
    """Continuous judges with values inside [-3, 3] (both ends reached), binary labels."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)
    vals = np.clip(y[:, None] + rng.normal(0, 1.2, (rows, len(names))), -3, 3)
    vals[0, :], vals[1, :] = -3.0, 3.0
    body = [[f"r{i}", int(y[i])] + [repr(float(v)) for v in vals[i]] for i in range(rows)]
    return load_panel(_write_csv(tmp_path / "cal.csv", ["item_id", "label", *names], body))


def _binary_panel(tmp_path, names=("j1", "j2", "j3"), rows=120, seed=1, item=lambda i: f"c{i}"):
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)
    outs = np.where(rng.random((rows, len(names))) < 0.8, y[:, None], 1 - y[:, None])
    body = [[item(i), int(y[i])] + [str(int(v)) for v in outs[i]] for i in range(rows)]
    # the judges named: judges differing only by case are refused unless named (sections 7-8)
    return load_panel(_write_csv(tmp_path / "bin.csv", ["item_id", "label", *names], body), judges=list(names))


def _cli(capsys, *argv):
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


# -- 1. formula injection: one CSV writer ------------------------------------------------------

@pytest.mark.parametrize("value, expected", [
    ("=1+1", "'=1+1"), ("+cmd|' /C calc'!A0", "'+cmd|' /C calc'!A0"), ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("\nx", "'\nx"),
    ("\uff1d1+1", "'\uff1d1+1"), ("-5", "-5"), ("+1.5e2", "+1.5e2"), ("a=b", "a=b"), ("", ""),
    (-0.5, "-0.5"), (-3, "-3"), (np.float64(-1e-3), "-0.001"), (np.int64(-7), "-7"),
    (float("nan"), ""), (None, ""), (True, "True"),
])
def test_csv_cell_neutralises_text_and_keeps_numbers(value, expected):
    """The one rule: numbers (numeric types) as numbers, text through the neutraliser,
    which leaves only plain decimal numbers alone."""
    assert csv_cell(value) == expected


def test_frame_csv_keeps_numeric_columns_and_neutralises_text():
    """The dashboard's table downloads: a negative number column stays numbers, a text
    column and a column name starting like a formula get the apostrophe."""
    import pandas as pd
    text = frame_csv(pd.DataFrame({"@name": ["=HYPERLINK(\"http://x\")", "ok", None],
                                   "score": [-0.5, 1.25, float("nan")], "n": [-1, 2, 3]}))
    rows = list(csv.reader(io.StringIO(text)))
    assert rows == [["'@name", "score", "n"], ["'=HYPERLINK(\"http://x\")", "-0.5", "-1"],
                    ["ok", "1.25", "2"], ["", "", "3"]]


def _hostile_ids_traffic(tmp_path, judges):
    ids = ["=1+1", "+cmd|' /C calc'!A0", "@SUM(A1)", "-2+3", "-5", "plain", "\uff1dHYPERLINK(1)"]
    rows = [[i] + ["1"] * len(judges) for i in ids]
    rows[5][1] = ""                          # a missing output: the missing_judges column names the judge
    return _write_csv(tmp_path / "traffic.csv", ["item_id", *judges], rows), ids


def test_score_and_audit_out_neutralise_item_ids_and_judge_names(tmp_path, capsys):
    """``score --out`` and ``audit --out`` write item ids and judge names through the one
    writer: formulas neutralised, a numeric id and the prediction numbers unchanged, and
    the file still reads back (one row per item, predictions in [0, 1])."""
    judges = ["=evil()", "j2"]
    panel = _binary_panel(tmp_path, names=judges)
    pred = _fit(panel, "table")
    pred.save(str(tmp_path / "p.json"))
    traffic, ids = _hostile_ids_traffic(tmp_path, judges)
    expected_ids = [neutralise_cell(i) for i in ids]
    assert expected_ids[:4] == ["'=1+1", "'+cmd|' /C calc'!A0", "'@SUM(A1)", "'-2+3"]
    assert expected_ids[4:6] == ["-5", "plain"]
    for cmd in ("score", "audit"):
        out = tmp_path / f"{cmd}.csv"
        code, _, err = _cli(capsys, cmd, tmp_path / "p.json", traffic, "--out", out)
        assert code == 0, err
        rows = list(csv.reader(open(out, encoding="utf-8", newline="")))
        assert rows[0] == ["item_id", "prediction", "N_z", "in_support", "missing_judges"]
        assert [r[0] for r in rows[1:]] == expected_ids
        assert all(0.0 <= float(r[1]) <= 1.0 for r in rows[1:])
        assert rows[6][4] == "'=evil()" and rows[1][4] == ""
        assert not any(c[:1] in ("=", "+", "@") for r in rows for c in r)


def test_both_prediction_writers_neutralise_identically(tmp_path):
    """The Arrow writer (score's fast path) and the text writer (the dashboard) give the same
    bytes for hostile ids, and a plain file keeps the fast path's exact output."""
    panel = _binary_panel(tmp_path)
    pred = _fit(panel, "logistic")
    traffic, _ = _hostile_ids_traffic(tmp_path, panel.judge_names)
    t = load_panel(traffic, require_labels=False, schema=pred.judge_schemas())
    p, support = pred.score(t)
    text = predictions_csv(t, p, support)
    assert predictions_csv_bytes(t.item_ids, p, support) == text.encode("utf-8")
    assert "\r\n'=1+1," in text and "\r\n-5," in text


def test_wide_csv_and_export_go_through_the_writer(tmp_path):
    """``write_wide_csv`` (synth --out) neutralises an item id and keeps numbers as written."""
    panel = _binary_panel(tmp_path, item=lambda i: "=cmd()" if i == 0 else f"c{i}")
    write_wide_csv(panel, str(tmp_path / "w.csv"))
    rows = list(csv.reader(open(tmp_path / "w.csv", encoding="utf-8")))
    assert rows[1][0] == "'=cmd()" and rows[2][0] == "c1"
    assert csv_text(["a"], [[-0.25]]) == "a\r\n-0.25\r\n"


# -- 4. tampered predictor files ------------------------------------------------------------

def _saved(tmp_path) -> dict:
    return _fit(_binary_panel(tmp_path), "table").to_dict()


def _tampered_files(tmp_path) -> dict:
    """name -> (path, words the refusal must hold)."""
    doc = _saved(tmp_path)
    text = json.dumps(doc)
    files = {}

    def put(name, data, words):
        path = tmp_path / f"{name}.json"
        (path.write_bytes if isinstance(data, bytes) else path.write_text)(data)
        files[name] = (path, words)

    put("bigint", text.replace('"format_version": 3', '"format_version": ' + "9" * 5000),
        "integer of 5,000 digits")
    put("bigint_count", text.replace('"rows": ', '"rows": ' + "1" * 400 + ", \"x\": ", 1), "integer of 400 digits")
    put("deep_list", "[" * 100_000 + "]" * 100_000, f"nests deeper than the {MAX_DEPTH} levels")
    put("deep_meta", json.dumps(dict(doc, metadata="DEEP")).replace('"DEEP"', '{"a": ' * 60 + "1" + "}" * 60),
        f"nests deeper than the {MAX_DEPTH} levels")
    put("nan", text.replace('"format_version": 3', '"format_version": 3, "x": NaN'), "non-finite number NaN")
    put("latin1", text.encode("utf-8") + b' \xff', "not UTF-8")
    put("truncated", text[: len(text) // 2], "it is not JSON (line 1")
    meta = dict(doc, metadata=[1, 2])
    put("meta_list", json.dumps(meta), "metadata must be a JSON object")
    judges = dict(doc, judges=[1, 2, 3])
    put("judge_numbers", json.dumps(judges), "its judges must be a list of distinct names")
    member_judges = json.loads(text)
    member_judges["members"][0]["judges"] = [1, 2, 3]
    put("member_judge_numbers", json.dumps(member_judges), "the encoders do not name the judges in order")
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:              # sparse: over the cap without writing it
        fh.truncate(MAX_PREDICTOR_BYTES + 1)
    files["huge"] = (huge, f"above the {MAX_PREDICTOR_BYTES // 2**20} MiB a predictor file can hold")
    return files


@pytest.mark.parametrize("command", ["score", "audit", "export"])
def test_tampered_predictor_files_are_one_line_refusals(tmp_path, capsys, command):
    """Each tampered file is refused by every command that loads a predictor, in one line
    naming the file, never an internal error."""
    traffic = _write_csv(tmp_path / "t.csv", ["item_id", "j1", "j2", "j3"], [["a", "1", "0", "1"]])
    for name, (path, words) in _tampered_files(tmp_path).items():
        argv = [command, path] + ([traffic] if command != "export" else ["--format", "sql"])
        line = assert_one_line_error(_cli(capsys, *argv))
        assert repr(str(path)) in line, (name, line)
        assert words in line, (name, line)
        assert "internal error" not in line


def test_the_page_reads_uploads_with_the_same_bounds(tmp_path):
    """The Deploy page's upload path (fcps_app.deploy.checked_predictor_json) refuses the
    same files in one line naming the upload, and passes a valid one through unchanged."""
    from fcps_app.deploy import checked_predictor_json
    for name, (path, words) in _tampered_files(tmp_path).items():
        if name == "huge":
            continue                              # the page refuses it by up.size before reading
        with pytest.raises(PredictorError) as exc:
            checked_predictor_json(path.read_bytes(), "upload.json")
        assert "'upload.json'" in str(exc.value) and words in str(exc.value) and "\n" not in str(exc.value)
    good = json.dumps(_saved(tmp_path))
    assert json.loads(checked_predictor_json(good.encode(), "ok.json")) == json.loads(good)


def test_the_byte_cap_is_checked_before_parsing():
    """Content over the cap is refused by its size alone (no parse of 64 MiB of brackets)."""
    with pytest.raises(PredictorError, match="above the 64 MiB"):
        parse_predictor_json(b"[" * (MAX_PREDICTOR_BYTES + 1), "'x.json'")


# -- 5. one validation on load and at SQL export ---------------------------------------------

def _reorder(doc: dict, where) -> dict:
    doc = json.loads(json.dumps(doc))
    t = where(doc)
    for key in ("patterns", "sums", "counts"):
        t[key] = t[key][::-1]
    return doc


@pytest.mark.parametrize("family, where", [
    ("table", lambda d: d["members"][0]["model"]["tables"][max(d["members"][0]["model"]["tables"], key=int)]),
    ("backoff", lambda d: d["members"][0]["model"]["levels"][-1]),
    ("residual", lambda d: d["members"][0]["model"]),
])
def test_patterns_in_another_order_are_refused_on_load_and_at_export(tmp_path, capsys, family, where):
    """A table listed in another order (consistently: patterns, sums and counts) used to
    score every row with the fallback; now ``score`` refuses it with the very message the
    SQL export gives, both from the one validation."""
    doc = _reorder(_fit(_binary_panel(tmp_path), family).to_dict(), where)
    path = tmp_path / "reordered.json"
    path.write_text(json.dumps(doc))
    traffic = _write_csv(tmp_path / "t.csv", ["item_id", "j1", "j2", "j3"], [["a", "1", "1", "1"]])
    score_line = assert_one_line_error(_cli(capsys, "score", path, traffic))
    sql_line = assert_one_line_error(_cli(capsys, "export", path, "--format", "sql"))
    assert score_line == sql_line
    assert "pattern ids are not sorted and distinct" in score_line and repr(str(path)) in score_line


def test_the_sql_export_applies_the_load_validation_to_objects(tmp_path):
    """A predictor object tampered in memory (never loaded) is refused by predictor_sql with
    the load's words: one validation, not two."""
    pred = _fit(_binary_panel(tmp_path), "table")
    level = max(pred.models[0].model.tables_)
    uniq, sums, counts = pred.models[0].model.tables_[level]
    pred.models[0].model.tables_[level] = (uniq[::-1].copy(), sums[::-1].copy(), counts[::-1].copy())
    with pytest.raises(PredictorError, match="model table level .*: the pattern ids are not sorted"):
        predictor_sql(pred)


def test_an_isotonic_map_out_of_order_is_refused_on_load(tmp_path):
    pred = _fit(_binary_panel(tmp_path), "mean_iso")
    doc = pred.to_dict()
    doc["members"][0]["model"]["isotonic"]["x"] = doc["members"][0]["model"]["isotonic"]["x"][::-1]
    with pytest.raises(PredictorError, match="isotonic thresholds are not strictly increasing"):
        FCPSPredictor.from_dict(doc)


# -- 6. traffic far outside the calibration range ------------------------------------------

def _far_traffic(tmp_path, names, value="1000000"):
    """Six rows inside the calibration range, four at ``value`` on the first judge."""
    rows = [[f"t{i}"] + ["0.5"] * len(names) for i in range(6)]
    rows += [[f"f{i}", value] + ["0.5"] * (len(names) - 1) for i in range(4)]
    return _write_csv(tmp_path / "far.csv", ["item_id", *names], rows)


@pytest.mark.parametrize("kind", ["table", "logistic", "tie_average"])
def test_values_far_outside_the_calibration_range_are_out_of_support(tmp_path, capsys, kind):
    """A continuous output at 1e6 against a calibration range of [-3, 3] lands in a seen edge
    bin of a table, so its pattern is seen (N_z > 0); it is still outside the support, for
    table, logistic and tie_average alike, and the audit names the judge and its range."""
    panel = _continuous_panel(tmp_path)
    if kind == "tie_average":
        pred = _tie(panel, _fit(panel, "table"), _fit(panel, "logistic"))
    else:
        pred = _fit(panel, kind)
    traffic = load_panel(_far_traffic(tmp_path, panel.judge_names), require_labels=False,
                         schema=pred.judge_schemas())
    _, support = pred.score(traffic)
    assert support.in_support.tolist() == [True] * 6 + [False] * 4
    if pred.table_like:
        assert (support.N_z[6:] > 0).all()         # the edge bin's pattern was seen in calibration
    audit = audit_traffic(pred, traffic, thresholds={"refuse_unseen": 0.3})
    assert audit.out_of_support_rate == pytest.approx(0.4)
    assert audit.status == "REFUSE"
    assert "judge 'c1' is outside its calibration range [-3, 3] on 40% of rows" in audit.reasons[0]
    pred.save(str(tmp_path / "p.json"))
    code, _, err = _cli(capsys, "score", tmp_path / "p.json", tmp_path / "far.csv", "--out", tmp_path / "s.csv")
    assert code == 0 and "4 (40.0%) outside calibration support" in err


def test_values_inside_the_range_stay_in_support(tmp_path):
    """The far test's control: the same traffic with 2.9 instead of 1e6 is all in support."""
    panel = _continuous_panel(tmp_path)
    pred = _fit(panel, "table")
    traffic = load_panel(_far_traffic(tmp_path, panel.judge_names, value="2.9"), require_labels=False,
                         schema=pred.judge_schemas())
    _, support = pred.score(traffic)
    assert support.in_support.all()
    assert audit_traffic(pred, traffic).out_of_support_rate == 0.0


# -- 7. judge names that differ only by case -----------------------------------------------

def test_judges_differing_only_by_case_are_refused_by_the_sql_export(tmp_path, capsys):
    """DuckDB reads "Judge" and "judge" as one column (read_csv even renames the second to
    judge_1): the export refuses such a predictor naming both, while score reads them apart."""
    panel = _binary_panel(tmp_path, names=("Judge", "judge", "other"))
    pred = _fit(panel, "logistic")
    pred.save(str(tmp_path / "p.json"))
    line = assert_one_line_error(_cli(capsys, "export", tmp_path / "p.json", "--format", "sql"))
    assert "judge 'Judge' and judge 'judge' differ only by case" in line
    con = duckdb.connect()
    cols = con.sql(f"SELECT * FROM read_csv('{tmp_path / 'bin.csv'}')").columns
    assert cols[2:4] == ["Judge", "judge_1"]          # why: the second column is renamed
    with pytest.raises(PredictorError, match="the item column 'item_id' and judge 'ITEM_ID' differ only by case"):
        predictor_sql(_fit(_binary_panel(tmp_path, names=("ITEM_ID", "j2")), "logistic"))


def test_names_duckdb_keeps_apart_compile_and_match_score(tmp_path, capsys):
    """Non-ASCII case pairs (Ä, ä) are distinct identifiers in DuckDB: the export compiles
    them, and the SQL run in DuckDB gives score's predictions row for row."""
    panel = _binary_panel(tmp_path, names=("Ä", "ä", "x"))
    pred = _fit(panel, "logistic")
    pred.save(str(tmp_path / "p.json"))
    traffic = tmp_path / "bin.csv"
    assert _cli(capsys, "score", tmp_path / "p.json", traffic, "--out", tmp_path / "s.csv")[0] == 0
    scored = {r["item_id"]: float(r["prediction"]) for r in csv.DictReader(open(tmp_path / "s.csv"))}
    code, sql, _ = _cli(capsys, "export", tmp_path / "p.json", "--format", "sql")
    assert code == 0
    con = duckdb.connect()
    con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv('{traffic}', all_varchar = true)")
    got = dict(con.execute(sql).fetchall())
    assert got.keys() == scored.keys()
    assert max(abs(got[k] - scored[k]) for k in got) < 1e-6       # score writes 6 decimals


# -- 11. a judge empty on every traffic row -------------------------------------------------

def _empty_judge_traffic(tmp_path, names, empty):
    rows = [[f"t{i}"] + ["" if n in empty else str(i % 2) for n in names] for i in range(40)]
    return _write_csv(tmp_path / "empty.csv", ["item_id", *names], rows)


def test_audit_reports_a_judge_empty_on_every_row(tmp_path, capsys):
    """The monitoring case: one judge down on every row. The audit runs, its status is
    REFUSE, the reason names the judge 100 % missing; --strict exits 3; no refusal to read."""
    panel = _binary_panel(tmp_path)
    pred = _fit(panel, "table")
    pred.save(str(tmp_path / "p.json"))
    traffic = _empty_judge_traffic(tmp_path, panel.judge_names, {"j2"})
    code, out, err = _cli(capsys, "audit", tmp_path / "p.json", traffic, "--json")
    assert code == 0, err
    d = json.loads(out)
    assert d["status"] == "REFUSE"
    assert any("judge 'j2' 100% missing" in r for r in d["reasons"])
    assert [j["missing_traffic"] for j in d["judges"]] == [0.0, 1.0, 0.0]
    assert "judge 'j2' is empty in every row" in err
    assert _cli(capsys, "audit", tmp_path / "p.json", traffic, "--strict")[0] == 3
    code, _, err = _cli(capsys, "score", tmp_path / "p.json", traffic, "--out", tmp_path / "s.csv")
    assert code == 0, err
    rows = list(csv.DictReader(open(tmp_path / "s.csv")))
    assert {r["missing_judges"] for r in rows} == {"j2"}


def test_every_needed_judge_empty_is_one_line(tmp_path, capsys):
    panel = _binary_panel(tmp_path)
    pred = _fit(panel, "logistic", judges=["j1"])
    pred.save(str(tmp_path / "p.json"))
    traffic = _empty_judge_traffic(tmp_path, panel.judge_names, {"j1", "j2", "j3"})
    line = assert_one_line_error(_cli(capsys, "audit", tmp_path / "p.json", traffic))
    assert "every judge column the predictor reads is empty in every row ('j1')" in line


def test_a_document_nested_too_deep_is_refused_from_any_source(tmp_path):
    """A stored run's predictor is a document too (a store is a file a user can edit):
    from_dict bounds its nesting, in the model and in the metadata, and from_stored turns a
    reader's RecursionError into one line naming the run."""
    doc = _saved(tmp_path)
    deep = {"a": 1}
    for _ in range(MAX_DEPTH + 5):
        deep = {"a": deep}
    with pytest.raises(PredictorError, match=f"metadata nests deeper than the {MAX_DEPTH} levels"):
        FCPSPredictor.from_dict(dict(doc, metadata=deep))
    with pytest.raises(PredictorError, match=f"it nests deeper than the {MAX_DEPTH} levels"):
        FCPSPredictor.from_dict(dict(doc, support=deep))

    def fetch():
        raise RecursionError("maximum recursion depth exceeded")
    with pytest.raises(PredictorError, match="^run 7: its stored predictor nests too deeply"):
        FCPSPredictor.from_stored(fetch, "run 7")
    assert FCPSPredictor.from_stored(lambda: doc, "run 7").judges == doc["judges"]


def _cont_doc(tmp_path):
    return _fit(_continuous_panel(tmp_path), "table").to_dict()


@pytest.mark.parametrize("edit, words", [
    (lambda d: d["support"]["judges"][0].__setitem__("range", "wide"), "support range of judge 'c1'"),
    (lambda d: d["support"]["judges"][0].__setitem__("range", [1.0]), "support range of judge 'c1'"),
    (lambda d: d["support"]["judges"][0].__setitem__("range", [3.0, -3.0]), "support range of judge 'c1'"),
    (lambda d: d["support"]["judges"][1].__setitem__("range", [True, 2]), "support range of judge 'c2'"),
    (lambda d: d["members"][0]["model"]["tables"]["1"]["patterns"].__setitem__(0, "9" * 30), "predictor file is malformed"),
    (lambda d: d["members"][0]["encoders"][1].__setitem__("bin_edges", None), "continuous judge 'c2' has no bin edges"),
    (lambda d: d["members"][0]["encoders"][1].__setitem__("scale", ["-3", 3]), "the scale of judge 'c2' is not two finite"),
    (lambda d: d["members"][0]["encoders"][0].__setitem__("default_score", "half"), "could not convert string to float: 'half'"),
    (lambda d: d["members"][0]["encoders"][0].__setitem__("bin_edges", [0.0, "1e400"]), "bin edges of judge 'c1' are not a list"),
])
def test_fields_a_fuzzer_broke_are_refused_on_load(tmp_path, edit, words):
    """Found by mutating valid predictors field by field: each of these loaded and then
    failed inside score or audit with a Python error; now the load refuses it in one line."""
    doc = _cont_doc(tmp_path)
    edit(doc)
    with pytest.raises(PredictorError, match=words.replace("(", r"\(")) as exc:
        FCPSPredictor.from_dict(json.loads(json.dumps(doc)))
    assert "\n" not in str(exc.value)


def test_the_deploy_page_audits_traffic_with_a_judge_empty_on_every_row(tmp_path, monkeypatch):
    """The Deploy page's audit (fcps_app.deploy.run_audit, what the page calls) reads an
    uploaded traffic file whose judge j3 is empty on every row: REFUSE, j3 named 100 %
    missing, and predictions for every row (neutralised ids included). The upload is saved
    beside a store of this test's own (never the default store)."""
    from fcps_app.common import get_store
    from fcps_app.deploy import run_audit
    from fcps_core.store import Store
    Store(tmp_path / "s.duckdb").set_meta("seed_version", "test")      # marked: the app seeds nothing
    monkeypatch.setenv("FCPS_STORE", str(tmp_path / "s.duckdb"))
    get_store.clear()
    panel = _binary_panel(tmp_path)
    pred = _fit(panel, "logistic")
    path = _empty_judge_traffic(tmp_path, panel.judge_names, {"j3"})
    data = open(path, "rb").read().replace(b"\nt0,", b"\n=t0,")
    audit, text, _ = run_audit(json.dumps(pred.to_dict()), ("upload", "traffic.csv", data, "item_id"))
    assert audit["status"] == "REFUSE"
    assert any("judge 'j3' 100% missing" in r for r in audit["reasons"])
    rows = list(csv.reader(io.StringIO(text)))
    assert len(rows) == 41 and rows[1][0] == "'=t0" and {r[4] for r in rows[1:]} == {"j3"}
    get_store.clear()


def test_an_empty_column_the_predictor_does_not_read_is_left_out(tmp_path, capsys):
    """Traffic with an extra column empty in every row (a judge the predictor never reads)
    is scored on the predictor's judges; the same column named with --judges is still the
    reader's refusal (the user asked for it)."""
    panel = _binary_panel(tmp_path)
    pred = _fit(panel, "logistic", judges=["j1", "j2"])
    pred.save(str(tmp_path / "p.json"))
    traffic = _empty_judge_traffic(tmp_path, panel.judge_names, {"j3"})
    code, out, err = _cli(capsys, "audit", tmp_path / "p.json", traffic, "--json")
    assert code == 0, err
    assert json.loads(out)["missing_rate"] == 0.0 and "j3" not in err
    line = assert_one_line_error(_cli(capsys, "audit", tmp_path / "p.json", traffic, "--judges", "j1", "j2", "j3"))
    assert "column 'j3': judge column is empty in every row" in line


def test_a_huge_hostile_judge_name_keeps_refusals_one_short_line(tmp_path, capsys):
    """A 100,000-character judge name with a newline and an escape sequence: the refusal
    quotes it cut to 80 characters, on one line, and a predictor whose members are not
    objects says so (not "not an fcps predictor file")."""
    doc = _saved(tmp_path)
    name = "N" * 100_000 + "\n\x1b]0;pwn\x07"
    doc["members"][0]["encoders"][0].update(name=name, schema="evil")
    doc["judges"][0] = doc["members"][0]["judges"][0] = doc["support"]["judges"][0]["name"] = name
    (tmp_path / "long.json").write_text(json.dumps(doc))
    traffic = _write_csv(tmp_path / "t.csv", ["item_id", "j1", "j2", "j3"], [["a", "1", "0", "1"]])
    line = assert_one_line_error(_cli(capsys, "score", tmp_path / "long.json", traffic))
    assert len(line) < 400 and "has an unknown schema 'evil'" in line and "\x1b" not in line
    doc = _saved(tmp_path)
    doc.update(members=[1, 2])
    (tmp_path / "members.json").write_text(json.dumps(doc))
    line = assert_one_line_error(_cli(capsys, "score", tmp_path / "members.json", traffic))
    assert "each of its members must be a JSON object" in line


def test_the_package_has_one_csv_writer():
    """Every CSV goes through fcps_core.files.csv_writer: no other module of the package, the app or
    its pages builds CSV with csv.writer, DictWriter or DataFrame.to_csv (a new one would
    skip the formula neutraliser)."""
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in [*root.joinpath("fcps_core").rglob("*.py"), *root.joinpath("fcps_app").rglob("*.py"),
                 *root.joinpath("app_pages").rglob("*.py"), root / "app.py"]:
        text = path.read_text(encoding="utf-8")
        if any(call in text for call in ("csv.writer(", "csv.DictWriter(", ".to_csv(")):
            found.append(str(path.relative_to(root)))
    assert found == ["fcps_core/files/csv_writer.py"]


def test_a_tampered_stored_predictor_is_one_line_naming_the_run(populated_run, tmp_path, capsys):
    """A store is a file a user can edit: a stored run's predictor with its table patterns
    reversed is refused by score run:N in one line naming the run (the same validation as a
    file), and the store stays readable."""
    store, panel, run_id = populated_run
    doc = store.run_predictor(run_id)
    members = doc.get("members") or [doc]
    table = next(m for m in members if m["family"] == "table")
    level = table["model"]["tables"][max(table["model"]["tables"], key=int)]
    for key in ("patterns", "sums", "counts"):
        level[key] = level[key][::-1]
    con = duckdb.connect(str(store.path))
    con.execute("UPDATE run_predictors SET predictor = ? WHERE run_id = ?", [json.dumps(doc), run_id])
    con.close()
    traffic = tmp_path / "traffic.csv"
    write_wide_csv(panel, str(traffic))
    line = assert_one_line_error(_cli(capsys, "score", f"run:{run_id}", traffic, "--store", store.path))
    assert f"'run {run_id}'" in line and "pattern ids are not sorted and distinct" in line
    assert store.run_predictor(run_id) == doc


# -- review round: probes the first tests missed ----------------------------------------------

@pytest.mark.parametrize("family, tamper", [
    ("table", lambda d: d["members"][0]["model"]["tables"][max(d["members"][0]["model"]["tables"], key=int)]["patterns"].__setitem__(-1, "9")),
    ("backoff", lambda d: d["members"][0]["model"]["levels"][1]["patterns"].__setitem__(0, "-1")),
])
def test_pattern_ids_outside_the_judges_patterns_are_refused(tmp_path, capsys, family, tamper):
    """Three binary judges give pattern ids 0..7: a sorted table holding 9 (or -1) matches no
    row, so the rows of the replaced cell took the fallback while counted as seen."""
    doc = json.loads(json.dumps(_fit(_binary_panel(tmp_path), family).to_dict()))
    tamper(doc)
    path = tmp_path / "outside.json"
    path.write_text(json.dumps(doc))
    traffic = _write_csv(tmp_path / "t.csv", ["item_id", "j1", "j2", "j3"], [["a", "1", "1", "1"]])
    for argv in (["score", path, traffic], ["audit", path, traffic], ["export", path, "--format", "sql"]):
        line = assert_one_line_error(_cli(capsys, *argv))
        assert "is not a pattern of its" in line and repr(str(path)) in line, line


def test_a_key_twice_in_one_object_is_refused(tmp_path, capsys):
    """Python's json keeps the last of two equal keys: a second "ybar" would change every
    prediction without a word."""
    text = json.dumps(_fit(_binary_panel(tmp_path), "table").to_dict())
    path = tmp_path / "dup.json"
    path.write_text(text.replace('"ybar": ', '"ybar": 0.99, "ybar": ', 1))
    traffic = _write_csv(tmp_path / "t.csv", ["item_id", "j1", "j2", "j3"], [["a", "1", "1", "1"]])
    line = assert_one_line_error(_cli(capsys, "score", path, traffic))
    assert "the key 'ybar' appears twice in one object" in line


def test_every_missing_judge_name_is_neutralised(tmp_path):
    """A spreadsheet splitting missing_judges at ';' finds no formula in any name."""
    panel = _binary_panel(tmp_path, names=("good", '=HYPERLINK("http://x","y")', "-cmd|x!A0"))
    pred = _fit(panel, "mean_iso")
    rows = [[f"t{i}", "", "", "1"] for i in range(3)] + [["t9", "1", "0", "1"]]
    traffic = load_panel(_write_csv(tmp_path / "t.csv", ["item_id", *panel.judge_names], rows),
                         require_labels=False)
    cell = pred.row_support(traffic).missing_names()[0]
    assert [name[:1] for name in cell.split(";")] == ["g", "'"]


def test_control_characters_in_judge_names_are_refused_by_the_sql_export(tmp_path, capsys):
    for i, name in enumerate(["\x1b]8;;http://evil/\x1b\\click", "x\u009b2Jy", "a\u202eb", "new\nline"]):
        panel = _binary_panel(tmp_path, names=(name, "j2"))
        path = tmp_path / f"ctl{i}.json"
        _fit(panel, "table").save(str(path))
        line = assert_one_line_error(_cli(capsys, "export", path, "--format", "sql"))
        assert "holds the control character" in line and "\x1b" not in line and "\n" not in line.rstrip("\n")
