"""A predictor compiled to one SQL SELECT (fcps_core/deploy/sql.py) scores a table exactly as
``FCPSPredictor.predict`` scores the same file.

Every expected number comes from ``FCPSPredictor.predict`` on the panel ``score`` would read
(the predictor's schemas, no labels); the SQL runs in DuckDB on the same file loaded with
``read_csv`` twice: with DuckDB's inferred column types (BIGINT, DOUBLE, BOOLEAN, VARCHAR)
and with every column VARCHAR. Panels: the shipped LLMBar (pairwise and rubric judges) and
HANNA (continuous judges), a synthetic continuous panel with missing and odd cells, and a
synthetic discrete one (binary judges spelled 0/1, 0.0/1.0, yes/no/unsure and true/false, a
categorical and an integer rubric judge).
"""

from __future__ import annotations

import csv
import json
import platform
from pathlib import Path

import duckdb
import numpy as np
import pytest

from fcps_core import FAMILIES, FCPSPredictor, PanelError, PredictorError, make_blocks, read_panel
from fcps_core.cli.main import main
from fcps_core.deploy import sql as sqlmod
from fcps_core.deploy.sql import predictor_sql
from fcps_core.data.encoding import apply_encoders, encode_panel, prefix_patterns
from fcps_core.families import PrefixFeatures, get_family
from fcps_core.selection import PAPER_PROTOCOL, select
from store_helpers import assert_one_line_error

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "data"
TOL = 1e-9


# -- panels ----------------------------------------------------------------------------------

def _write(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.writer(fh)
        w.writerow(header)
        w.writerows(rows)
    return path


def continuous_csv(path: Path, rows: int = 600, seed: int = 5) -> Path:
    """Four noisy real-valued judges (3% empty, 1% 'NA', a few cells with surrounding
    spaces) and an integer-valued metric with ~100 levels (continuous, BIGINT in DuckDB)."""
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)
    header = ["item_id", "group_id", "label"] + [f"c{j}" for j in range(4)] + ["count"]
    cols = []
    for j in range(4):
        v = y * (0.3 + 0.2 * j) + rng.normal(0, 0.5, rows)
        cells = [repr(float(x)) for x in v]
        for i in np.flatnonzero(rng.random(rows) < 0.03):
            cells[i] = ""
        for i in np.flatnonzero(rng.random(rows) < 0.01):
            cells[i] = "NA"
        for i in np.flatnonzero(rng.random(rows) < 0.01):
            cells[i] = f"  {cells[i]} "
        cols.append(cells)
    cols.append([str(int(x)) for x in np.clip(50 + 20 * y + rng.normal(0, 15, rows), 0, 100)])
    body = [[f"c-{i}", f"g{i // 2}", str(int(y[i]))] + [c[i] for c in cols] for i in range(rows)]
    return _write(path, header, body)


def discrete_csv(path: Path, rows: int = 600, seed: int = 6) -> Path:
    rng = np.random.default_rng(seed)
    y = rng.integers(0, 2, rows)

    def noisy(acc):
        return np.where(rng.random(rows) < acc, y, 1 - y)

    def with_missing(cells, share=0.03):
        cells = list(cells)
        for i in np.flatnonzero(rng.random(rows) < share):
            cells[i] = ""
        return cells

    bin_num = with_missing(str(v) for v in noisy(0.8))                       # BIGINT in DuckDB
    bin_float = [f"{v:.1f}" for v in noisy(0.75)]                            # DOUBLE
    word = np.where(noisy(0.7) == 1, "yes", "no").astype(object)
    word[rng.random(rows) < 0.08] = "unsure"
    bin_word = with_missing(word)                                            # VARCHAR
    bin_bool = ["true" if v else "false" for v in noisy(0.65)]               # BOOLEAN
    cat = np.array(["cat", "dog", "bird", "fish"], dtype=object)[
        np.clip(y * 2 + rng.integers(0, 2, rows), 0, 3)]
    rubric = with_missing(str(v) for v in np.clip(y * 2 + rng.integers(1, 4, rows), 1, 5))  # BIGINT
    header = ["item_id", "group_id", "label", "bin_num", "bin_float", "bin_word", "bin_bool",
              "cat", "rubric"]
    body = [[f"d-{i}", f"g{i // 2}", str(int(y[i])), bin_num[i], bin_float[i], bin_word[i],
             bin_bool[i], cat[i], rubric[i]] for i in range(rows)]
    return _write(path, header, body)


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    tmp = tmp_path_factory.mktemp("sqlpanels")
    return {"llmbar": DATA / "llmbar.csv", "hanna": DATA / "hanna.csv",
            "continuous": continuous_csv(tmp / "continuous.csv"),
            "discrete": discrete_csv(tmp / "discrete.csv")}


@pytest.fixture(scope="module")
def panels(files):
    return {name: read_panel(str(path)) for name, path in files.items()}


def _sql_str(text) -> str:
    return "'" + str(text).replace("'", "''") + "'"


def column_types(path) -> dict[str, str]:
    """The column types DuckDB's read_csv infers for a file."""
    return {r[0]: r[1] for r in duckdb.sql(f"DESCRIBE SELECT * FROM read_csv({_sql_str(path)})").fetchall()}


def test_the_panels_exercise_every_reader_path(panels, files):
    # Guard for the matrix below: the schemas and DuckDB column types the panels hold.
    assert {j.schema for j in panels["continuous"].judges} == {"continuous"}
    assert {j.name: j.schema for j in panels["discrete"].judges} == {
        "bin_num": "binary", "bin_float": "binary", "bin_word": "binary", "bin_bool": "binary",
        "cat": "categorical", "rubric": "rubric"}
    assert {j.schema for j in panels["llmbar"].judges} == {"pairwise", "rubric"}
    assert {j.schema for j in panels["hanna"].judges} == {"continuous"}
    types = column_types(files["discrete"])
    assert (types["bin_num"], types["bin_float"], types["bin_word"], types["bin_bool"], types["rubric"]) == (
        "BIGINT", "DOUBLE", "VARCHAR", "BOOLEAN", "BIGINT")
    assert column_types(files["continuous"])["count"] == "BIGINT"


# -- helpers ---------------------------------------------------------------------------------

def python_scores(pred: FCPSPredictor, path) -> dict[str, float]:
    """What ``score`` computes: the file read with the predictor's schemas, no labels needed."""
    traffic = read_panel(str(path), schema=pred.judge_schemas(), require_labels=False)
    assert len(set(traffic.item_ids)) == traffic.n_rows          # the comparison is keyed by item
    return dict(zip(traffic.item_ids, pred.predict(traffic)))


def sql_scores(pred: FCPSPredictor, path, *, varchar: bool, con=None, **kw) -> dict[str, float | None]:
    con = con or duckdb.connect()
    con.execute(f"CREATE OR REPLACE TABLE traffic AS SELECT * FROM read_csv({_sql_str(path)}, "
                f"all_varchar = {str(varchar).lower()})")
    rows = con.execute(predictor_sql(pred, **kw)).fetchall()
    out = {str(item).strip(): p for item, p in rows}
    assert len(out) == len(rows)
    return out


def assert_sql_matches(pred: FCPSPredictor, path, tol: float = TOL) -> dict[str, float]:
    expected = python_scores(pred, path)
    for varchar in (False, True):
        got = sql_scores(pred, path, varchar=varchar)
        assert got.keys() == expected.keys()
        diff = max(abs(got[k] - v) for k, v in expected.items())
        assert diff <= tol, (pred.family, "all_varchar" if varchar else "typed", diff)
    return expected


def roundtrip(pred: FCPSPredictor) -> FCPSPredictor:
    """What a predictor file holds (JSON), read back."""
    return FCPSPredictor.from_dict(json.loads(json.dumps(pred.to_dict(), default=float)))


def handmade(panel, judges, family, fit=None, **params) -> FCPSPredictor:
    """A predictor of ``family`` on exactly these judges (for cases a selection may not
    pick: rubric judges, K >= 8, lower-prefix fallback, zero shrinkage), fitted with the
    library's encoders and family code on ``fit`` (default: every other labelled row)."""
    sub = panel.subset_judges(judges)
    fit = np.flatnonzero(panel.labelled)[::2] if fit is None else np.asarray(fit)
    enc = encode_panel(sub, fit, n_bins=5)
    X = PrefixFeatures(patterns=prefix_patterns(enc.codes, enc.alphabet_sizes), scores=enc.scores)
    cls = get_family(family)
    rest = np.setdiff1d(np.arange(panel.n_rows), fit)
    model = cls(**params).fit(X.take(fit), panel.labels[fit], X.take(rest) if cls.uses_unlabelled else None)
    return roundtrip(FCPSPredictor.single(list(judges), enc.encoders, family, model))


_selected: dict = {}


def selected(panels, name: str, family: str) -> FCPSPredictor:
    """The predictor ``select --families FAMILY --protocol split`` deploys (cached)."""
    key = (name, family)
    if key not in _selected:
        panel = panels[name]
        result = select(panel, make_blocks(panel, split="1:2:1", seed=0), families=[family],
                        paths=["info_first"], **PAPER_PROTOCOL)
        _selected[key] = roundtrip(result.predictor())
    return _selected[key]


# -- every family on every panel -------------------------------------------------------------

@pytest.mark.parametrize("name", ["llmbar", "hanna", "continuous", "discrete"])
@pytest.mark.parametrize("family", FAMILIES)
def test_every_family_scores_as_predict(panels, files, name, family):
    pred = selected(panels, name, family)
    assert pred.families == [family] and pred.members[0][0] == 1.0
    assert_sql_matches(pred, files[name])


def test_tie_average_selected_by_crossfit(panels, files):
    # The library's default choice rule on the full menu (2 folds x 1 repeat to stay fast).
    panel = panels["continuous"]
    result = select(panel, make_blocks(panel, split="1:2:1", seed=0), paths=["info_first"],
                    protocol="crossfit", folds=2, repeats=1, choice="tie_average", estimate="none",
                    with_baselines=False)
    pred = roundtrip(result.predictor())
    assert len(set(pred.families)) >= 2 and all(w == 1 / len(pred.members) for w, _ in pred.members)
    assert_sql_matches(pred, files["continuous"])


def test_tie_average_of_members_with_their_own_encoders(panels, files):
    # Members share judges but were fitted on different rows: the same judge has different
    # bin edges and scales in each member, and the SQL must keep them apart.
    panel = panels["continuous"]
    lab = np.flatnonzero(panel.labelled)
    members = [handmade(panel, ["c0", "c1"], "table", fit=lab[::2]),
               handmade(panel, ["c1", "c2", "c3", "count"], "logistic", fit=lab[1::2]),
               handmade(panel, ["c0", "c2", "count"], "ds_jury", fit=lab[::3]),
               handmade(panel, ["c3", "c0", "c1"], "backoff", fit=lab[1::3], shrinkage=3.0)]
    members = [m.models[0] for m in members]
    assert members[0].encoders[0].bin_edges != members[2].encoders[0].bin_edges
    judges = [j for j in panel.judge_names if any(j in m.judges for m in members)]
    pred = roundtrip(FCPSPredictor.average(members, judges=judges))
    expected = assert_sql_matches(pred, files["continuous"])
    # the average really mixes the members (not one member repeated)
    traffic = read_panel(str(files["continuous"]), schema=pred.judge_schemas(), require_labels=False)
    first = members[0].predict(traffic)
    assert np.abs(first - np.array(list(expected.values()))).max() > 1e-3


# -- reader paths and arithmetic the matrix may not reach ------------------------------------

def test_rubric_judges_typed_double_compare_as_numbers(panels, files):
    # LLMBar's rating judges are "1.0", "-5.0": DuckDB types them DOUBLE (CAST gives '1.0'),
    # the reader's tokens are '1', '-5'. Rubric cells must match by value.
    llmbar = panels["llmbar"]
    rubric = [j.name for j in llmbar.judges if j.schema == "rubric"][:3]
    types = column_types(files["llmbar"])
    assert {types[j] for j in rubric} == {"DOUBLE"}
    judges = rubric + ["GPT-4/CoT"]
    for family, params in (("table", {"fallback": "lower_prefix"}), ("logistic", {}),
                           ("one_coin_iso", {}), ("residual", {"base": "mean_iso"})):
        assert_sql_matches(handmade(llmbar, judges, family, **params), files["llmbar"])


@pytest.mark.skipif(platform.machine().lower() not in ("x86_64", "amd64"),
                    reason="bit-exactness assumes numpy's interp is not compiled with fused multiply-add")
def test_mean_iso_sums_in_numpy_pairwise_order_to_the_last_bit(panels, files):
    hanna = panels["hanna"]
    judges = hanna.judge_names[:12]
    pred = handmade(hanna, judges, "mean_iso")
    traffic = read_panel(str(files["hanna"]), schema=pred.judge_schemas(), require_labels=False)
    expected = pred.predict(traffic)
    # Control: adding the twelve scores left to right changes some predictions, so only
    # numpy's pairwise order can pass the bitwise comparison.
    scores = apply_encoders(traffic, pred.models[0].encoders).scores
    sequential = np.zeros(traffic.n_rows)
    for j in range(scores.shape[1]):
        sequential = sequential + scores[:, j]
    assert np.any(np.clip(pred.models[0].model.iso_.predict(sequential / 12), 0, 1) != expected)
    got = sql_scores(pred, files["hanna"], varchar=False)
    assert all(got[i] == p for i, p in zip(traffic.item_ids, expected))


def test_lower_prefix_table_falls_back_level_by_level(panels, files):
    pred = handmade(panels["discrete"], ["cat", "bin_word", "rubric", "bin_num"], "table",
                    fallback="lower_prefix", alpha=0.5)
    assert sorted(pred.models[0].model.tables_) == [0, 1, 2, 3]
    assert_sql_matches(pred, files["discrete"])


# -- missing, never-seen and invalid outputs -------------------------------------------------

def _edit(src: Path, dst: Path, edits) -> Path:
    """Copy a panel file with ``edits(row_index, column, cell) -> cell`` applied."""
    with open(src, newline="", encoding="utf-8") as fh:
        rows = list(csv.reader(fh))
    header = rows[0]
    return _write(dst, header, [[edits(i, h, c) for h, c in zip(header, r)] for i, r in enumerate(rows[1:])])


def test_missing_and_never_seen_outputs(panels, files, tmp_path):
    llmbar = panels["llmbar"]
    schema = {j.name: j.schema for j in llmbar.judges}
    reserved = {"item_id", "group_id", "label"}

    def edits(i, col, cell):
        if col in reserved or i > 5:
            return cell
        rubric = schema[col] == "rubric"
        return [
            "",                                  # missing
            "99" if rubric else "maybe",         # an output never seen in calibration
            "  NULL " if rubric else "n/a",      # missing markers, any case and spacing
            (cell.replace(".0", "") if cell else cell) if rubric else f" {cell}\t",   # 3.0 vs 3, whitespace
            "-0" if rubric else "<missing>",     # -0 is 0; '<missing>' reads as a missing output
            "3e0" if rubric else "Tie",          # exponent form; no calibration output folds to 'tie'
        ][i]

    edited = _edit(files["llmbar"], tmp_path / "llmbar-edited.csv", edits)
    rubric = [j.name for j in llmbar.judges if j.schema == "rubric"][:2]
    preds = [selected(panels, "llmbar", f) for f in ("table", "backoff", "residual", "logistic", "ds_jury")]
    preds += [handmade(llmbar, rubric + ["GPT-4/CoT", "PaLM2/Swap"], f) for f in ("table", "mean_iso", "backoff")]
    unseen = 0
    for pred in preds:
        assert_sql_matches(pred, edited)
        traffic = read_panel(str(edited), schema=pred.judge_schemas(), require_labels=False)
        unseen += int((apply_encoders(traffic, pred.models[0].encoders).codes[:6] == -1).sum())
    assert unseen > 0          # the edits did reach never-seen codes


def test_discrete_outputs_by_case_and_unseen_ones_get_the_default_score(panels, files, tmp_path):
    edits_by_column = {
        # 'YES' and 'Cat' are outputs the predictor does not know, read as 'yes' and 'cat'
        # (their only calibration outputs up to case: deploy.outputs); 'maybe', 'zebra' unseen
        "bin_word": ["YES", " no ", "Unsure", "maybe", "N/A"],
        "cat": ["Cat", "zebra", " dog ", "", "NONE"],
        # rubric cells are stripped of every str.isspace() character, \x1c included
        # (float() alone would refuse it), then compared as numbers
        "rubric": ["\x1c3\x1c", " 4.0 ", "6", "2e0", "null"],
        "bin_num": [" 1 ", "", "2", "0", "1"],
    }

    def edits(i, col, cell):
        return edits_by_column[col][i] if (col in edits_by_column and i < 5) else cell

    edited = _edit(files["discrete"], tmp_path / "discrete-edited.csv", edits)
    panel = panels["discrete"]
    judges = ["bin_word", "cat", "rubric", "bin_num", "bin_float", "bin_bool"]
    preds = [handmade(panel, judges, f) for f in ("logistic", "mean_iso", "table", "backoff", "ds_jury")]
    cat = preds[0].models[0].encoders[1]
    assert cat.schema == "categorical" and cat.default_score != 0.5      # ybar, not the neutral score
    for pred in preds:
        assert_sql_matches(pred, edited)
    traffic = read_panel(str(edited), schema=preds[0].judge_schemas(), require_labels=False)
    encoders = preds[0].models[0].encoders
    codes = apply_encoders(traffic, encoders).codes
    assert codes[0, 0] == -1 and codes[0, 1] == -1 and codes[0, 2] >= 0     # as written: YES, Cat unknown
    codes = apply_encoders(preds[0].read_outputs(traffic)[0], encoders).codes
    assert codes[0, 0] == encoders[0].vocab.index("yes") and codes[0, 1] == encoders[1].vocab.index("cat")
    assert codes[3, 0] == -1 and codes[1, 1] == -1 and codes[0, 2] >= 0      # maybe, zebra unseen; 3 seen


def test_continuous_missing_out_of_range_and_spaced_cells(panels, files, tmp_path):
    def edits(i, col, cell):
        if col in ("item_id", "group_id", "label") or i > 4:
            return cell
        return ["", "1e6", "-1e6", " nan ", f"\u3000{cell}\u00a0"][i]

    edited = _edit(files["hanna"], tmp_path / "hanna-edited.csv", edits)
    for family in ("table", "backoff", "ridge_iso", "one_coin_iso", "ds_jury"):
        assert_sql_matches(selected(panels, "hanna", family), edited)


def test_a_non_numeric_continuous_cell_scores_null_where_python_refuses(panels, files, tmp_path):
    pred = selected(panels, "hanna", "ridge_iso")
    judge = pred.judges[0]
    bad_item = panels["hanna"].item_ids[7]
    edited = _edit(files["hanna"], tmp_path / "bad.csv",
                   lambda i, col, cell: "abc" if (i == 7 and col == judge) else cell)
    with pytest.raises(PanelError, match="not a finite number"):
        read_panel(str(edited), schema=pred.judge_schemas(), require_labels=False)
    without = _edit(files["hanna"], tmp_path / "without.csv", lambda i, col, cell: cell)
    expected = python_scores(pred, without)
    for varchar in (False, True):
        got = sql_scores(pred, edited, varchar=varchar)
        assert got.pop(bad_item) is None
        assert max(abs(got[k] - expected[k]) for k in got) <= TOL


def test_residual_without_shrinkage_is_null_where_python_is_nan(panels, files, tmp_path):
    pred = handmade(panels["discrete"], ["cat", "bin_word", "rubric"], "residual", base="logistic",
                    shrinkage=0.0)
    traffic = read_panel(str(files["discrete"]), schema=pred.judge_schemas(), require_labels=False)
    with np.errstate(invalid="ignore"):          # 0/0 on unseen patterns is the point here
        expected = pred.predict(traffic)
    assert np.isnan(expected).any() and not np.isnan(expected).all()
    got = sql_scores(pred, files["discrete"], varchar=False)
    for item, p in zip(traffic.item_ids, expected):
        assert (got[item] is None) if np.isnan(p) else abs(got[item] - p) <= TOL


# -- identifiers, table names, size ----------------------------------------------------------

NAMES = ['judge "one"', "it's", "a b", "select", "x;--", "ünï\tcode"]


def test_judge_and_item_names_with_spaces_and_quotes(tmp_path):
    rng = np.random.default_rng(9)
    n = 400
    y = rng.integers(0, 2, n)
    cols = [np.where(np.where(rng.random(n) < 0.75, y, 1 - y) == 1, "A", "B") for _ in NAMES]
    path = _write(tmp_path / "names.csv", ['item "id"', "label"] + NAMES,
                  [[f"i{i}", str(y[i])] + [c[i] for c in cols] for i in range(n)])
    panel = read_panel(str(path), item_column='item "id"')
    assert panel.judge_names == NAMES
    for family in ("table", "logistic"):
        pred = handmade(panel, NAMES, family)
        traffic = read_panel(str(path), item_column='item "id"', schema=pred.judge_schemas(),
                             require_labels=False)
        expected = dict(zip(traffic.item_ids, pred.predict(traffic)))
        got = sql_scores(pred, path, varchar=False, item_column='item "id"')
        assert max(abs(got[k] - v) for k, v in expected.items()) <= TOL


@pytest.mark.parametrize("table", ["traffic; DROP TABLE traffic", 'traffic"', "traffic --", "a.b.c.d",
                                   "", "1abc", "t(x)", "read_csv('/etc/passwd')", "tra ffic", "traffic\n"])
def test_hostile_table_names_are_refused(panels, table):
    with pytest.raises(PredictorError, match="table name"):
        predictor_sql(selected(panels, "discrete", "logistic"), table)


def test_a_qualified_table_name_is_quoted_and_runs(panels, files):
    pred = selected(panels, "discrete", "table")
    con = duckdb.connect()
    con.execute("CREATE SCHEMA warehouse")
    con.execute(f"CREATE TABLE warehouse.Traffic_2 AS SELECT * FROM read_csv({_sql_str(files['discrete'])})")
    sql = predictor_sql(pred, "warehouse.Traffic_2")
    assert '"warehouse"."Traffic_2"' in sql
    got = dict(con.execute(sql).fetchall())
    expected = python_scores(pred, files["discrete"])
    assert max(abs(got[k] - v) for k, v in expected.items()) <= TOL


def test_oversized_predictors_are_refused(panels, monkeypatch):
    pred = selected(panels, "llmbar", "table")
    predictor_sql(pred)
    monkeypatch.setattr(sqlmod, "MAX_SQL_CELLS", 5)
    with pytest.raises(PredictorError, match="too large to compile"):
        predictor_sql(pred)


@pytest.mark.parametrize("family, edit, message", [
    ("logistic", lambda d: d["members"][0]["encoders"][0].__setitem__("scale", [0.0, 1.0, 2.0]), "malformed"),
    ("logistic", lambda d: d["members"][0]["model"].__setitem__("coef", d["members"][0]["model"]["coef"][:-1]), "coefficients"),
    ("table", lambda d: next(iter(d["members"][0]["model"]["tables"].values()))["patterns"].reverse(), "not sorted"),
    ("ridge_iso", lambda d: d["members"][0]["model"]["isotonic"]["x"].reverse(), "strictly increasing"),
])
def test_files_that_load_but_do_not_fit_together_are_one_line_errors(panels, tmp_path, capsys, store_path,
                                                                     family, edit, message):
    doc = json.loads(json.dumps(selected(panels, "hanna", family).to_dict(), default=float))
    edit(doc)
    path = tmp_path / "tampered.json"
    path.write_text(json.dumps(doc))
    line = assert_one_line_error(cli(capsys, "export", path, "--format", "sql"))
    assert message in line


def test_the_item_column_cannot_be_a_judge(panels):
    pred = selected(panels, "discrete", "logistic")
    with pytest.raises(PredictorError, match="also a judge"):
        predictor_sql(pred, item_column=pred.judges[0])


# -- command line ----------------------------------------------------------------------------

@pytest.fixture
def store_path(tmp_path, monkeypatch):
    path = tmp_path / "cli.duckdb"
    monkeypatch.setenv("FCPS_STORE", str(path))      # never the project's default store
    return path


def cli(capsys, *args) -> tuple[int, str, str]:
    code = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return code, out, err


def test_cli_exports_a_predictor_file_and_refuses_to_overwrite(files, tmp_path, capsys, store_path):
    model = tmp_path / "model.json"
    code, _, err = cli(capsys, "select", files["discrete"], "--families", "backoff", "--protocol", "split",
                       "--choice", "argmin", "--paths", "info_first", "--save-model", model, "--quiet")
    assert code == 0, err
    out = tmp_path / "model.sql"
    assert cli(capsys, "export", model, "--format", "sql", "--out", out)[0] == 0
    text = out.read_text(encoding="utf-8")
    pred = FCPSPredictor.load(str(model))
    assert text == predictor_sql(pred)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv({_sql_str(files['discrete'])})")
    got = dict(con.execute(text).fetchall())
    expected = python_scores(pred, files["discrete"])
    assert max(abs(got[k] - v) for k, v in expected.items()) <= TOL

    line = assert_one_line_error(cli(capsys, "export", model, "--format", "sql", "--out", out, "--table", "t2"))
    assert "already exists" in line and "--force" in line
    assert out.read_text(encoding="utf-8") == text                       # untouched
    assert cli(capsys, "export", model, "--format", "sql", "--out", out, "--table", "t2", "--force")[0] == 0
    assert 'FROM "t2"' in out.read_text(encoding="utf-8")
    # no --format: a predictor file exports as SQL, to stdout
    code, stdout, _ = cli(capsys, "export", model, "--table", "events", "--item-column", "id")
    assert code == 0 and stdout == predictor_sql(pred, "events", item_column="id")
    assert not store_path.exists()          # a predictor file needs no store


def test_cli_exports_the_predictor_of_a_stored_run(populated_run, tmp_path, capsys):
    store, panel, run_id = populated_run
    pred = FCPSPredictor.from_dict(store.run_predictor(run_id))
    out = tmp_path / "run.sql"
    code, _, err = cli(capsys, "export", f"run:{run_id}", "--format", "sql", "--out", out,
                       "--store", store.path)
    assert code == 0, err
    assert out.read_text(encoding="utf-8") == predictor_sql(pred)
    from fcps_core.files.csv_writer import write_wide_csv
    path = tmp_path / "base.csv"
    write_wide_csv(panel, str(path))
    con = duckdb.connect()
    con.execute(f"CREATE TABLE traffic AS SELECT * FROM read_csv({_sql_str(path)})")
    got = dict(con.execute(out.read_text(encoding="utf-8")).fetchall())
    expected = python_scores(pred, path)
    assert max(abs(got[k] - v) for k, v in expected.items()) <= TOL


@pytest.mark.parametrize("args, message", [
    (["export", "base", "--format", "sql"], "is a panel name"),
    (["export", "base", "--format", "csv", "--table", "t"], "--table applies only to --format sql"),
    (["export", "run:999", "--format", "sql"], "no stored run"),
])
def test_cli_sql_export_errors_are_one_line(populated_run, capsys, args, message):
    store = populated_run[0]
    line = assert_one_line_error(cli(capsys, *args, "--store", store.path))
    assert message in line


def test_cli_refuses_hostile_table_and_non_sql_formats_of_a_predictor_file(panels, tmp_path, capsys, store_path):
    model = tmp_path / "p.json"
    selected(panels, "discrete", "logistic").save(str(model))
    line = assert_one_line_error(cli(capsys, "export", model, "--format", "sql", "--table", "t; DROP TABLE t"))
    assert "table name" in line
    line = assert_one_line_error(cli(capsys, "export", model, "--format", "csv"))
    assert "predictor file" in line and "--format sql" in line
    broken = tmp_path / "broken.json"
    broken.write_text("{}")
    line = assert_one_line_error(cli(capsys, "export", broken, "--format", "sql"))
    assert "not an fcps predictor file" in line
