"""Hostile input, round two (issue 26), the readers and the store: a file given as the
store that is no store, tables over the row limit, a second label column spelled
differently, decimal commas, constant labels and judges. Every file is built here, in
tmp_path; each test asserts the exact safe behaviour (the message, and that nothing was
written)."""

from __future__ import annotations

import gzip
import hashlib
import json

import numpy as np
import pytest

from fcps_core.errors import FCPSError, PanelError
from fcps_core.ingest import ImportLimits, import_file, load_panel, preview, read_columns
from fcps_core.store import Store, StoreError

from store_helpers import assert_one_line_error, csv_text, good_rows, run_cli, write


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def refusal(fn, *args, **kw) -> FCPSError:
    with pytest.raises(FCPSError) as exc:
        fn(*args, **kw)
    assert "Traceback" not in str(exc.value) and "\n" not in str(exc.value)
    return exc.value


# -- item 13: a store path that is no fcps store ---------------------------------------------------

def _foreign_duckdb(path):
    import duckdb
    con = duckdb.connect(str(path))
    con.execute("CREATE TABLE measurements (a INTEGER)")
    con.execute("INSERT INTO measurements VALUES (1)")
    con.close()
    return path


def _sqlite(path):
    import sqlite3
    con = sqlite3.connect(str(path))
    con.execute("CREATE TABLE t (a)")
    con.commit()
    con.close()
    return path


def _old(path):
    """Written an hour ago: a young empty file may be a store another process is creating."""
    import os
    import time
    os.utime(path, (time.time() - 3600, time.time() - 3600))
    return path


NOT_STORES = {
    "panel.csv": (lambda p: write(p, csv_text(good_rows(20))), "it holds text (a CSV file?)"),
    "csv-named.duckdb": (lambda p: write(p, csv_text(good_rows(20))), "it holds text (a CSV file?)"),
    "table.parquet": (lambda p: write(p, b"PAR1" + bytes(200) + b"PAR1"), "it is a Parquet file"),
    "lite.db": (_sqlite, "it is an SQLite database"),
    "empty.duckdb": (lambda p: _old(write(p, b"")), "the file is empty"),
    "noise.duckdb": (lambda p: write(p, bytes(range(256)) * 20), "it does not start like a DuckDB database"),
    "other.duckdb": (_foreign_duckdb, "it is a DuckDB database of something else (tables 'measurements'"),
}


@pytest.mark.parametrize("name", sorted(NOT_STORES))
def test_a_file_that_is_no_store_is_named_and_left_unchanged(tmp_path, name):
    """DuckDB's own words ("Catalog Error: Cannot launch in-memory database...", an
    extension download for an SQLite file) never reach the user, and the file, which may
    be the user's data, is not written to (a foreign DuckDB database is not migrated)."""
    make, says = NOT_STORES[name]
    path = make(tmp_path / name)
    before = digest(path)
    for call in (lambda s: s.panels(), lambda s: s.add_panel(load_panel(str(write(
            tmp_path / "p.csv", csv_text(good_rows(20))))), name="p")):
        err = refusal(call, Store(path, timeout=2))
        assert isinstance(err, StoreError)
        assert str(err).startswith(f"{path} is not a readable fcps store: {says}"), str(err)
        assert "point --store (or $FCPS_STORE) at an fcps store file" in str(err)
        assert "Error:" not in str(err)
    assert digest(path) == before
    assert not (tmp_path / (name + ".wal")).exists()


def test_a_young_empty_file_is_left_to_duckdb_and_still_refused_unchanged(tmp_path):
    """An empty file just created may be a store another process is creating (its lock
    makes this one wait); when it stays empty DuckDB refuses it, in the store's words."""
    for name in ("new.duckdb", "new.csv"):
        path = write(tmp_path / name, b"")
        err = refusal(Store(path, timeout=2).panels)
        assert str(err).startswith(f"{path} is not a readable fcps store: the file is empty"), str(err)
        assert path.read_bytes() == b""


def test_a_directory_given_as_the_store_is_named(tmp_path):
    err = refusal(Store(tmp_path, timeout=2).panels)
    assert str(err).startswith(f"{tmp_path} is a directory, not an fcps store file")


def test_a_truncated_store_is_named_damaged_and_left_unchanged(tmp_path):
    """A store cut short fails when it is opened, or only when a query reaches the missing
    part: both say the file is damaged and what to do, and nothing is written to it."""
    good = tmp_path / "good.duckdb"
    store = Store(good)
    store.add_panel(load_panel(str(write(tmp_path / "p.csv", csv_text(good_rows(400, judges=6))))), name="p")
    data = good.read_bytes()
    for keep in (5_000, len(data) // 3, len(data) // 2):    # the tail may be free blocks only
        cut = write(tmp_path / f"cut{keep}.duckdb", data[:keep])
        before = digest(cut)
        with pytest.raises(StoreError) as exc:
            s = Store(cut, timeout=2)
            s.panels()
            s.load_panel("p")
        assert "is not a readable fcps store: the database file is damaged or truncated" in str(exc.value)
        assert "Restore it from a backup" in str(exc.value) and "IO Error" not in str(exc.value)
        assert digest(cut) == before


def test_the_cli_names_a_csv_given_as_the_store_in_one_line(tmp_path):
    path = write(tmp_path / "labels.csv", "a,b\n1,2\n")
    panel = write(tmp_path / "p.csv", csv_text(good_rows(20)))
    for args in (["panels"], ["import", str(panel), "--name", "p"]):
        line = assert_one_line_error(run_cli(*args, "--store", str(path)))
        assert line.startswith(f"fcps: error: {path} is not a readable fcps store: it holds text"), line
    assert path.read_text() == "a,b\n1,2\n"


# -- item 10: Parquet and JSON Lines over --max-rows -----------------------------------------------

def _rows(n):
    return [{"item_id": f"i{k}", "group_id": f"g{k // 2}", "label": k % 2, "j1": "AB"[k % 3 % 2]}
            for k in range(n)]


def _parquet(path, n):
    import pyarrow as pa
    import pyarrow.parquet as pq
    pq.write_table(pa.Table.from_pylist(_rows(n)), path, row_group_size=100)
    return path


def _jsonl(path, n, *, blank_every=0):
    lines = []
    for k, r in enumerate(_rows(n)):
        lines.append(json.dumps(r) + "\n")
        if blank_every and k % blank_every == 0:
            lines.append("\n")
    data = "".join(lines).encode()
    path.write_bytes(gzip.compress(data) if path.name.endswith(".gz") else data)
    return path


@pytest.mark.parametrize("name, make, says", [
    ("big.parquet", _parquet, "the file has 1,500 rows, above the import limit of 1,000"),
    ("big.jsonl", _jsonl, "the file has over 1,000 rows (JSON Lines records), above the import limit of 1,000"),
    ("big.jsonl.gz", _jsonl, "the file has over 1,000 rows (JSON Lines records), above the import limit of 1,000"),
])
def test_structured_files_over_the_row_limit_say_the_limit_before_duckdb_reads_them(
        tmp_path, monkeypatch, name, make, says):
    """Not "not a readable Parquet file (Resource In Use Error...)" nor "not valid JSON
    Lines": the limit and the flag, found from the Parquet footer or by counting lines,
    before DuckDB parses a row (the reader is replaced by one that fails)."""
    from fcps_core.ingest import columns
    path = make(tmp_path / name, 1500)
    limits = ImportLimits(max_rows=1000)

    def no_duckdb():
        raise AssertionError("DuckDB was asked to read a file over the row limit")
    monkeypatch.setattr(columns, "_duck", no_duckdb)
    err = refusal(load_panel, str(path), limits=limits)
    assert str(err) == f"{path}: {says} (split the file or raise the limit with --max-rows)"


def test_blank_lines_do_not_count_as_json_lines_rows(tmp_path):
    """1,000 records and 200 blank lines: at the limit, not over it."""
    path = _jsonl(tmp_path / "p.jsonl", 1000, blank_every=5)
    assert load_panel(str(path), limits=ImportLimits(max_rows=1000)).n_rows == 1000
    assert load_panel(str(_parquet(tmp_path / "p.parquet", 1000)), limits=ImportLimits(max_rows=1000)).n_rows == 1000


def test_a_json_array_over_the_row_limit_names_the_limit(tmp_path):
    """A .json file holding one array (one line): DuckDB reads it, and the count that
    follows says the limit (the count's result no longer blocks the exact count)."""
    path = write(tmp_path / "arr.json", json.dumps(_rows(1500)))
    err = refusal(load_panel, str(path), limits=ImportLimits(max_rows=1000))
    assert "the file has 1,500 rows, above the import limit of 1,000" in str(err)


def test_the_cli_names_the_row_limit_of_a_parquet_file(tmp_path):
    path = _parquet(tmp_path / "big.parquet", 1500)
    store = tmp_path / "s.duckdb"
    line = assert_one_line_error(run_cli("import", str(path), "--name", "big", "--max-rows", "1000",
                                         "--store", str(store)))
    assert line == (f"fcps: error: {path}: the file has 1,500 rows, above the import limit of 1,000 "
                    "(split the file or raise the limit with --max-rows)")
    assert not store.exists()


# -- item 8: a second label column spelled differently ---------------------------------------------

def _leaky(second: str, *, label: str = "label", n: int = 40) -> list[list[str]]:
    rows = good_rows(n)
    rows[0][2] = label
    for k, r in enumerate(rows):
        r.insert(3, second if k == 0 else r[2])
    return rows


@pytest.mark.parametrize("second", ["LABEL", "Label", "label\u200b", "LA BEL", "\ufeffLabel", "ｌａｂｅｌ"])
def test_a_judge_named_like_the_label_column_is_refused(tmp_path, second):
    """A copy of the labels under a name equal up to case, spaces, invisible or
    full-width characters would be read as a perfect judge: refused in one line that names
    it and the way to keep it."""
    path = write(tmp_path / "p.csv", csv_text(_leaky(second)))
    err = refusal(load_panel, str(path))
    assert str(err) == (f"{path}: judge {second.strip()!r} is named like the label column 'label' (the same up "
                        "to case, spaces or a duplicate column's suffix): read as a judge, a second copy of the labels would leak them into "
                        f"the selection (remove or rename {second.strip()!r}; if it really is a judge, name the "
                        "judges with --judges)")


def test_the_other_spelling_chosen_as_the_label_refuses_the_first(tmp_path):
    path = write(tmp_path / "p.csv", csv_text(_leaky("LABEL")))
    err = refusal(load_panel, str(path), label_column="LABEL")
    assert "judge 'label' is named like the label column 'LABEL'" in str(err)


def test_naming_the_judges_takes_a_lookalike_as_meant(tmp_path):
    path = write(tmp_path / "p.csv", csv_text(_leaky("LABEL")))
    panel = load_panel(str(path), judges=["LABEL", "j1"])
    assert panel.judge_names == ["LABEL", "j1"]
    assert load_panel(str(path), judges=["j1", "j2"]).judge_names == ["j1", "j2"]


def test_a_missing_label_column_names_its_lookalike(tmp_path):
    rows = good_rows(40)
    rows[0][2] = "Label"
    err = refusal(load_panel, str(write(tmp_path / "p.csv", csv_text(rows))))
    assert str(err).endswith("(name it with --label-column 'Label')")


def test_a_long_file_with_a_judge_named_like_the_label_is_refused(tmp_path):
    rows = [["item_id", "judge", "output", "label"]]
    for k in range(30):
        rows += [[f"i{k}", "m1", "AB"[k % 2], str(k % 2)], [f"i{k}", "Label", str(k % 2), str(k % 2)]]
    err = refusal(load_panel, str(write(tmp_path / "long.csv", csv_text(rows))))
    assert "judge 'Label' is named like the label column 'label'" in str(err)


def test_parquet_columns_differing_only_by_case_are_refused(tmp_path):
    """DuckDB would rename the second to LABEL_1, a judge nobody named."""
    import pyarrow as pa
    import pyarrow.parquet as pq
    path = tmp_path / "p.parquet"
    pq.write_table(pa.table({"item_id": ["a", "b"], "label": [0, 1], "LABEL": [0, 1], "j1": ["A", "B"]}), path)
    err = refusal(load_panel, str(path))
    assert str(err) == (f"{path} column 'LABEL': the columns 'label' and 'LABEL' differ only by case (column "
                        "names ignore case) (give every column its own name before importing)")


def test_a_leaky_import_leaves_the_store_unchanged(tmp_path):
    store = Store(tmp_path / "s.duckdb")
    store.add_panel(load_panel(str(write(tmp_path / "ok.csv", csv_text(good_rows(40))))), name="ok")
    before = store.content_digest()
    refusal(import_file, store, str(write(tmp_path / "p.csv", csv_text(_leaky("LABEL")))), name="leaky")
    assert store.content_digest() == before and not store.has_panel("leaky")


# -- item 9: decimal commas and detected delimiters --------------------------------------------------

def _euro_rows(n=120, *, fmt=lambda v: f"{v:.2f}".replace(".", ",")):
    """A spreadsheet export in a decimal-comma locale: continuous judges and soft labels."""
    rng = np.random.default_rng(3)
    rows = [["item_id", "group_id", "label", "j1", "j2"]]
    for k in range(n):
        y = k % 2
        rows.append([f"i{k}", f"g{k // 2}", fmt(0.25 + 0.5 * y), fmt(rng.normal(y, 1)), fmt(rng.normal(0, 3))])
    return rows


def _as_point(rows):
    return [r[:2] + [v.replace(",", ".") for v in r[2:]] for r in rows]


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_decimal_commas_are_read_as_numbers_and_said(tmp_path, sep):
    """Not hundreds of categorical "distinct outputs" and refused labels: the panel the
    same file with decimal points gives, with the delimiter and the decimal mark named."""
    path = write(tmp_path / "euro.csv", csv_text(_euro_rows(), sep))
    panel = load_panel(str(path))
    expected = load_panel(str(write(tmp_path / "point.csv", csv_text(_as_point(_euro_rows())))))
    assert [j.schema for j in panel.judges] == ["continuous", "continuous"]
    np.testing.assert_array_equal(panel.labels, expected.labels)
    for a, b in zip(panel.judges, expected.judges):
        np.testing.assert_array_equal(a.values, b.values)
    name = "tab" if sep == "\t" else repr(sep)
    assert panel.import_notes[0].startswith(f"read as {name}-delimited")
    assert panel.import_notes[1].startswith("decimal commas read as numbers in columns 'label', 'j1', 'j2' (")
    assert panel.import_notes[1].endswith("(detected: pass --decimal . if the comma means something else)")
    assert panel.import_warnings == []


def test_a_stated_decimal_point_keeps_commas_as_text_with_a_warning(tmp_path):
    rows = [r[:2] + [r[2] if k == 0 else str(k % 2)] + r[3:] for k, r in enumerate(_euro_rows())]
    path = write(tmp_path / "euro.csv", csv_text(rows, ";"))
    panel = load_panel(str(path), decimal=".", judges=["j1"])
    assert panel.judges[0].schema == "categorical"
    assert panel.import_warnings[0].startswith("column 'j1' holds numbers written with a comma (")
    assert "read as text (the decimal mark is '.')" in panel.import_warnings[0]


@pytest.mark.parametrize("cells, value", [
    (["1.234,5", "2.000,25", "-3,5"], [1234.5, 2000.25, -3.5]),            # '.' thousands, ',' decimal
    (["1\u00a0234,5", "2 000,25", "0,5"], [1234.5, 2000.25, 0.5]),          # space thousands
    (["1,234.5", "2,000,000", "0.5"], [1234.5, 2000000.0, 0.5]),            # ',' thousands, '.' decimal
])
def test_thousands_separators_are_read_with_the_files_decimal_mark(tmp_path, cells, value):
    rows = [["item_id", "label", "j1"]] + [[f"i{k}", str(k % 2), cells[k % 3]] for k in range(30)]
    panel = load_panel(str(write(tmp_path / "p.csv", csv_text(rows, ";"))), require_labels=False)
    assert panel.judges[0].schema == "continuous"
    assert panel.judges[0].values[:3].tolist() == value


@pytest.mark.parametrize("cells, says", [
    (["1,234", "2,500", "17"], "line 2, column 'j1': '1,234' is ambiguous: a decimal comma (1.234) or a "
                               "thousands separator (1234)? (pass --decimal ',' or --decimal . to say which "
                               "mark the file uses)"),
    (["0,85", "0.5", "1"], "line 3, column 'j1': the file mixes decimal marks: column 'j1' has both '0,85' "
                           "(a decimal comma) and '0.5' (a decimal point or thousands commas) (pass --decimal "
                           "',' or --decimal . to say which mark the file uses)"),
])
def test_ambiguous_or_mixed_decimal_marks_are_refused_naming_the_cell(tmp_path, cells, says):
    rows = [["item_id", "label", "j1"]] + [[f"i{k}", str(k % 2), cells[k % 3]] for k in range(30)]
    path = write(tmp_path / "p.csv", csv_text(rows, ";"))
    assert str(refusal(load_panel, str(path))) == f"{path} {says}"


def test_stating_the_decimal_mark_settles_an_ambiguous_file(tmp_path):
    rows = [["item_id", "label", "j1"]] + [[f"i{k}", str(k % 2), ["1,234", "2,500", "17"][k % 3]]
                                           for k in range(30)]
    path = write(tmp_path / "p.csv", csv_text(rows, ";"))
    assert load_panel(str(path), decimal=",").judges[0].values[:3].tolist() == [1.234, 2.5, 17.0]
    assert load_panel(str(path), decimal=".").judges[0].values[:3].tolist() == [1234.0, 2500.0, 17.0]
    err = refusal(load_panel, str(write(tmp_path / "q.csv", csv_text(
        [["item_id", "label", "j1"]] + [[f"i{k}", str(k % 2), "0.5"] for k in range(30)], ";"))), decimal=",")
    assert "line 2, column 'j1': '0.5' has a decimal point, but the file's decimal mark is ','" in str(err)


def test_item_ids_with_commas_are_never_rewritten(tmp_path):
    rows = [["item_id", "group_id", "label", "j1"]] + [[f"{k},5", f"{k // 2},0", str(k % 2), f"0,{k + 10}"]
                                                      for k in range(30)]
    panel = load_panel(str(write(tmp_path / "p.csv", csv_text(rows, ";"))))
    assert panel.item_ids[:2].tolist() == ["0,5", "1,5"] and panel.group_ids[:2].tolist() == ["0,0", "0,0"]
    assert panel.judges[0].values[:2].tolist() == [0.10, 0.11]


def test_a_comma_delimited_file_keeps_quoted_commas_as_text_and_warns(tmp_path):
    """In a comma-delimited file such cells are quoted: read as written (categorical),
    with a warning naming --decimal; a label refusal there names --decimal too."""
    rows = [["item_id", "label", "j1"]] + [[f"i{k}", str(k % 2), f'"0,{k % 7 + 1}"'] for k in range(30)]
    panel = load_panel(str(write(tmp_path / "p.csv", csv_text(rows))))
    assert panel.judges[0].schema == "categorical"
    assert panel.import_warnings == [
        "column 'j1' holds numbers written with a comma ('0,1'), read as text (in a comma-delimited file): pass "
        "--decimal ',' if the comma is the decimal mark, or --decimal . if it separates thousands"]
    assert load_panel(str(tmp_path / "p.csv"), decimal=",").judges[0].schema == "continuous"
    soft = [["item_id", "label", "j1"]] + [[f"i{k}", f'"0,{k % 3 * 4 + 1}"', "AB"[k % 2]] for k in range(30)]
    err = refusal(load_panel, str(write(tmp_path / "soft.csv", csv_text(soft))))
    assert err.column == "label" and "pass --decimal ',' if the comma is the decimal mark" in str(err)
    assert load_panel(str(tmp_path / "soft.csv"), decimal=",").labels[:3].tolist() == [0.1, 0.5, 0.9]


def test_the_cli_reads_a_decimal_comma_file_and_says_how(tmp_path):
    path = write(tmp_path / "euro.csv", csv_text(_euro_rows(), ";"))
    store = tmp_path / "s.duckdb"
    code, out, err = run_cli("import", str(path), "--name", "euro", "--store", str(store))
    assert code == 0, err
    assert out.startswith("imported 'euro': 120 rows (120 labelled), 2 judges, schema continuous")
    lines = err.splitlines()
    assert lines[0].startswith("fcps: note: read as ';'-delimited") and len(lines) == 2
    assert lines[1].startswith("fcps: note: decimal commas read as numbers in columns 'label', 'j1', 'j2'")
    code, out, err = run_cli("import", str(path), "--name", "text", "--decimal", ".", "--judges", "j1",
                             "--store", str(store), "--json")
    assert code == 2 and "--decimal ','" in err       # the labels 0,25 / 0,75 cannot be read as text
    line = assert_one_line_error(run_cli("import", str(path), "--name", "x", "--decimal", ";",
                                         "--store", str(store)))
    assert "argument --decimal: invalid choice: ';'" in line


# -- item 14: a constant label or judge --------------------------------------------------------------

def _constant(label=None, judge=None, n=40):
    rows = good_rows(n)
    for r in rows[1:]:
        if label is not None:
            r[2] = label
        if judge is not None:
            r[4] = judge
    return rows


def test_a_constant_label_is_warned_about_and_refused_for_a_store(tmp_path):
    path = write(tmp_path / "p.csv", csv_text(_constant(label="1")))
    panel = load_panel(str(path))
    assert panel.import_warnings == [
        "every one of the 40 labelled rows has the label 1: a selection on a constant label measures nothing "
        "(every judge looks perfect or useless); check the label column, or label items of the other class"]
    store = Store(tmp_path / "s.duckdb")
    err = refusal(import_file, store, str(path), name="flat")
    assert "every labelled row has the same label (1)" in str(err) and not store.has_panel("flat")


def test_constant_judges_are_warned_about_and_stored(tmp_path):
    """A judge saying B on every row (missing outputs aside) is stored with a warning."""
    rows = _constant(judge="B")
    for k, r in enumerate(rows[1:]):
        r[5] = "NA" if k % 3 else "A"
    path = write(tmp_path / "p.csv", csv_text(rows))
    store = Store(tmp_path / "s.duckdb")
    info = import_file(store, str(path), name="flat")
    assert info["warnings"] == [
        "judges 'j2' ('B'), 'j3' ('A') give the same output on every row with an output: they carry no "
        "information (check the columns, or leave them out with --judges)"]
    assert store.has_panel("flat")
    assert Store(tmp_path / "s.duckdb").add_panel(load_panel(str(path)), name="again")["warnings"] == info["warnings"]


def test_a_constant_continuous_judge_is_warned_about(tmp_path):
    rows = [["item_id", "label", "j1", "j2"]] + [[f"i{k}", str(k % 2), "0.5", str(k / 10)] for k in range(30)]
    panel = load_panel(str(write(tmp_path / "p.csv", csv_text(rows))))
    assert panel.import_warnings == ["judge 'j1' ('0.5') gives the same output on every row with an output: "
                                     "it carries no information (check the column, or leave it out with --judges)"]


def test_a_varied_panel_has_no_warnings(tmp_path):
    assert load_panel(str(write(tmp_path / "p.csv", csv_text(good_rows(40))))).import_warnings == []


def test_the_cli_warns_on_import_and_select(tmp_path):
    path = write(tmp_path / "p.csv", csv_text(_constant(judge="A", n=60)))
    store = tmp_path / "s.duckdb"
    code, out, err = run_cli("import", str(path), "--name", "flat", "--store", str(store))
    assert code == 0 and err == ("fcps: warning: judge 'j2' ('A') gives the same output on every row with an "
                                 "output: it carries no information (check the column, or leave it out with "
                                 "--judges)\n")
    for panel in (str(path), "flat"):
        code, out, err = run_cli("select", panel, "--store", str(store), "--protocol", "split", "--choice",
                                 "argmin", "--estimate", "none", "--families", "table")
        assert code == 0 and "fcps: warning: judge 'j2' ('A') gives the same output" in err, err
    flat = write(tmp_path / "flat.csv", csv_text(_constant(label="0", n=60)))
    code, out, err = run_cli("select", str(flat), "--protocol", "split", "--choice", "argmin",
                             "--estimate", "none", "--families", "table")
    assert "fcps: warning: every one of the 60 labelled rows has the label 0" in err


def test_json_text_with_decimal_commas_is_warned_about_and_json_numbers_are_kept(tmp_path):
    """In JSON Lines only text can hold a decimal comma: '0,1' stays text with a warning
    unless --decimal ',' is given, and the numbers of other columns (0.5) are numbers
    whatever the mark (not refused as decimal points)."""
    path = write(tmp_path / "p.jsonl", "".join(json.dumps({"item_id": f"i{k}", "label": k % 2, "j1": f"0,{k % 9 + 1}",
                                                            "j2": k / 30}) + "\n" for k in range(30)))
    panel = load_panel(str(path))
    assert [j.schema for j in panel.judges] == ["categorical", "continuous"]
    assert panel.import_warnings == [
        "column 'j1' holds numbers written with a comma ('0,1'), read as text (in a Parquet or JSON Lines file): "
        "pass --decimal ',' if the comma is the decimal mark, or --decimal . if it separates thousands"]
    panel = load_panel(str(path), decimal=",")
    assert [j.schema for j in panel.judges] == ["continuous", "continuous"]
    assert panel.judges[0].values[:2].tolist() == [0.1, 0.2] and panel.judges[1].values[1] == pytest.approx(1 / 30)


def test_the_other_columns_settle_the_mark(tmp_path):
    """'1.234' beside decimal commas is 1234 (thousands); '1,234' beside decimal points is
    1234 too; neither is taken as evidence of the other mark."""
    rows = [["item_id", "label", "j1", "j2"]] + [[f"i{k}", str(k % 2), ["0,85", "2,5"][k % 2], ["1.234", "7"][k % 2]]
                                                 for k in range(30)]
    panel = load_panel(str(write(tmp_path / "a.csv", csv_text(rows, ";"))))
    assert [j.values[:2].tolist() for j in panel.judges] == [[0.85, 2.5], [1234.0, 7.0]]
    rows = [["item_id", "label", "j1", "j2"]] + [[f"i{k}", str(k % 2), ["1,234", "5"][k % 2], ["0.25", "7"][k % 2]]
                                                 for k in range(30)]
    panel = load_panel(str(write(tmp_path / "b.csv", csv_text(rows, ";"))))
    assert [j.values[:2].tolist() for j in panel.judges] == [[1234.0, 5.0], [0.25, 7.0]]


def test_columns_without_a_comma_are_not_examined(tmp_path, monkeypatch):
    """A fully quoted comma-delimited file (a quote anywhere sends it to the comma check):
    one C-level search per column, and no column is factorized when none holds a comma."""
    from fcps_core.ingest import numbers
    seen = []
    real = numbers._distinct
    monkeypatch.setattr(numbers, "_distinct", lambda name, values: seen.append(name) or real(name, values))
    rows = [[f'"{v}"' for v in r] for r in good_rows(40)]
    panel = load_panel(str(write(tmp_path / "q.csv", csv_text(rows))))
    assert panel.n_rows == 40 and seen == [] and panel.import_warnings == []


def test_a_long_file_with_decimal_comma_outputs_is_read_as_numbers(tmp_path):
    rows = [["item_id", "judge", "output", "label"]]
    for k in range(30):
        rows += [[f"i{k}", "m1", f"0,{k % 9 + 1}", str(k % 2)], [f"i{k}", "m2", f"{k % 4},5", str(k % 2)]]
    panel = load_panel(str(write(tmp_path / "long.csv", csv_text(rows, ";"))))
    assert [j.schema for j in panel.judges] == ["continuous", "continuous"]
    assert panel.judges[0].values[:2].tolist() == [0.1, 0.2] and panel.judges[1].values[:2].tolist() == [0.5, 1.5]
    assert panel.import_notes[1].startswith("decimal commas read as numbers in column 'output'")


# -- review round: a duplicated label column under a tool's suffix ------------------------------

@pytest.mark.parametrize("copy", ["label.1", "label_1", "Label (2)", "label_y"])
def test_a_copy_of_the_label_column_under_a_duplicate_suffix_is_refused(tmp_path, copy):
    """pandas writes a duplicated column as ``label.1``, DuckDB as ``label_1``, a merge as
    ``label_y``: read as a judge it would leak the labels."""
    path = tmp_path / "copy.csv"
    rows = [f"i{i},{i % 2},{i % 2},{(i // 2) % 2}" for i in range(40)]
    path.write_text(f"item_id,label,{copy},j1\n" + "\n".join(rows) + "\n")
    with pytest.raises(PanelError, match="named like the label column"):
        load_panel(str(path))
    assert [j.name for j in load_panel(str(path), judges=[copy, "j1"]).judges] == [copy, "j1"]


def test_the_preview_warns_about_a_label_lookalike(tmp_path):
    from fcps_core.ingest import preview
    path = tmp_path / "look.csv"
    path.write_text("item_id,label,LABEL,j1\n" + "\n".join(f"i{i},{i % 2},{i % 2},1" for i in range(10)) + "\n")
    assert any("'LABEL' is named like the label column" in w for w in preview(str(path))["warnings"])


def test_select_says_a_constant_label_under_quiet_and_in_its_json(tmp_path):
    """--quiet silences progress, not the warning; a script reading --json finds it too."""
    path = write(tmp_path / "p.csv", csv_text(_constant(label="1", n=80)))
    code, out, err = run_cli("select", str(path), "--json", "--quiet", "--protocol", "split",
                             "--families", "table", "--estimate", "none")
    assert code == 0, err
    assert "fcps: warning: every one of the 80 labelled rows has the label 1" in err
    assert any("constant label measures nothing" in w for w in json.loads(out)["panel"]["warnings"])
