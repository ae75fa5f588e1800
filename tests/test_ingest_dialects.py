"""Every valid CSV that Python's csv module reads is read, and every refusal is one line
naming the file, the line and column, and the fix.

The one reader (``fcps_core.ingest.read_columns``) reads CSV/TSV with DuckDB and falls back
to Python's csv module, under the same limits, for the files DuckDB refuses or could
misread (mixed or lone-CR line ends, a quote next to a space, a header spanning lines, a
record over the cell limit). Files are built in ``tmp_path``; the reference is Python's
csv module and the row-by-row reference reader (``tests/reference/row_reader.py``).
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import os
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference.row_reader as fio
from fcps_core.errors import FCPSError, PanelError
from fcps_core.ingest import ImportLimits, import_file, load_panel, preview, read_columns, save_upload

from store_helpers import (assert_one_line_error, assert_same_panel, csv_text, good_rows, run_cli,
                           write)

MB = 1024 * 1024


def good_bytes(n: int = 60) -> bytes:
    return csv_text(good_rows(n)).encode()


def with_cell(row: int, col: int, value: str, rows=None) -> list[list[str]]:
    """The good panel with one cell replaced (row 0 is the header), quoted as csv writes it."""
    rows = [list(r) for r in (rows or good_rows(60))]
    rows[row][col] = value
    return rows


def written(rows: list[list[str]], lineterminator: str = "\n") -> bytes:
    """Rows as csv.writer writes them; a row holding a CR or LF is quoted in full (the
    writer quotes only the characters of its own line terminator)."""
    buf = io.StringIO()
    for row in rows:
        quoting = csv.QUOTE_ALL if any("\r" in c or "\n" in c for c in row) else csv.QUOTE_MINIMAL
        csv.writer(buf, lineterminator=lineterminator, quoting=quoting).writerow(row)
    return buf.getvalue().encode()


def python_rows(data: bytes, delimiter: str = ",") -> list[list[str]]:
    """The data rows Python's csv module reads (blank lines dropped as the reference
    reader does; empty fields after the last column dropped, as DuckDB does)."""
    rows = list(csv.reader(io.StringIO(data.decode("utf-8-sig"), newline=""), delimiter=delimiter,
                           strict=True))
    width = len(rows[0])
    rows = [r[:width] if len(r) > width and not any(r[width:]) else r for r in rows[1:]]
    return [r for r in rows if r and not (len(r) == 1 and width > 1 and r[0].strip() == "")]


def read_rows(path) -> list[list[str]]:
    table = read_columns(str(path))
    return [[str(table.columns[h][i]) for h in table.header] for i in range(table.n_rows)]


def refusal(path, **kw) -> PanelError:
    """The error ``load_panel`` raises, checked to be one line that names the file."""
    with pytest.raises(FCPSError) as exc:
        load_panel(str(path), **kw)
    message = str(exc.value)
    assert "\n" not in message and "\r" not in message, message
    assert message.startswith(str(kw.get("source_name", path))), message
    return exc.value


# -- accepted dialects -----------------------------------------------------------------------

GOOD = good_bytes()
MIXED = b"".join(line + (b"\r\n" if k % 2 else b"\n") for k, line in enumerate(GOOD.split(b"\n")[:-1]))
ONE_CRLF = GOOD.replace(b"\n", b"\r\n", 7).replace(b"\r\n", b"\n", 6)

ACCEPTED = {
    "mixed CRLF and LF line ends": MIXED,
    "one CRLF line in an LF file": ONE_CRLF,
    "CRLF": GOOD.replace(b"\n", b"\r\n"),
    "CR only (classic Mac)": GOOD.replace(b"\n", b"\r"),
    "a quoted field starting with a CR": written(with_cell(5, 0, "\rit4")),
    "a quoted field starting with a CR, CRLF file": written(with_cell(5, 0, "\rit4"), "\r\n"),
    "a quoted CR inside a cell": written(with_cell(7, 3, "A\rB")),
    "a quoted line break inside a cell": written(with_cell(5, 0, "it\n4")),
    "a quoted CR in the header": written(with_cell(0, 5, "j\r3")),
    "a quoted line break in the header": written(with_cell(0, 5, "j\n3")),
    "UTF-8 BOM": b"\xef\xbb\xbf" + GOOD,
    "UTF-8 BOM and CRLF": b"\xef\xbb\xbf" + GOOD.replace(b"\n", b"\r\n"),
    "no newline at the end": GOOD.rstrip(b"\n"),
    "blank lines between and after rows": GOOD.replace(b"\nit9,", b"\n\n\nit9,") + b"\n\n",
    "a space before a quoted field": GOOD.replace(b"\nit3,g1,", b'\nit3, "g1",', 1),
    "a quote after a space inside a quoted cell": written(with_cell(4, 0, 'it "3" x')),
}


def trailing(data: bytes, extra: bytes) -> bytes:
    """``extra`` appended to data lines 2 and 3 (file lines 3 and 4), before any CR."""
    lines = data.split(b"\n")
    for k in (2, 3):
        cr = lines[k].endswith(b"\r")
        lines[k] = lines[k].rstrip(b"\r") + extra + (b"\r" if cr else b"")
    return b"\n".join(lines)


@pytest.mark.parametrize("base", [GOOD, MIXED], ids=["fast path", "fallback"])
@pytest.mark.parametrize("extra", [b",", b",,", b',""'])
def test_empty_fields_after_the_last_column_are_dropped_by_both_readers(tmp_path, base, extra):
    path = write(tmp_path / "t.csv", trailing(base, extra))
    assert read_rows(path) == good_rows(60)[1:]
    err = refusal(write(tmp_path / "x.csv", trailing(base, b",,x")))
    assert err.line == 3 and "expected 6 fields (as in the header) but found" in str(err)


@pytest.mark.parametrize("name", list(ACCEPTED))
def test_valid_dialects_are_read_as_pythons_csv_module_reads_them(tmp_path, name):
    path = write(tmp_path / "p.csv", ACCEPTED[name])
    assert read_rows(path) == python_rows(ACCEPTED[name])
    assert_same_panel(fio.read_panel(str(path)), load_panel(str(path)))


@pytest.mark.parametrize("data, fallback", [
    (GOOD, False), (GOOD.replace(b"\n", b"\r\n"), False), (b"\xef\xbb\xbf" + GOOD, False),
    (written(with_cell(5, 0, "it\n4")), False), (MIXED, True), (GOOD.replace(b"\n", b"\r"), True),
    (written(with_cell(0, 5, "j\n3")), True), (GOOD.replace(b"\nit3,g1,", b'\nit3, "g1",', 1), True),
], ids=["LF", "CRLF", "BOM", "quoted LF", "mixed", "CR only", "header over two lines", "space-quote"])
def test_the_row_by_row_reader_runs_only_when_duckdb_cannot_read_the_file(tmp_path, monkeypatch, data, fallback):
    from fcps_core.ingest import columns
    calls = []
    real = columns._python_delimited
    monkeypatch.setattr(columns, "_python_delimited", lambda *a, **k: calls.append(1) or real(*a, **k))
    read_columns(str(write(tmp_path / "p.csv", data)))
    assert calls == ([1] if fallback else [])


def test_the_fallback_reads_gzip_tsv_and_previews(tmp_path):
    text = MIXED.replace(b",", b"\t")
    path = write(tmp_path / "p.tsv.gz", gzip.compress(text))
    assert read_rows(path) == python_rows(text, "\t")
    info = preview(str(path), rows=2, sample_rows=7)
    assert info["sample_rows"] == 7 and info["rows"] == python_rows(text, "\t")[:2]


def test_a_header_over_one_mib_is_read(tmp_path):
    judges = [f"j{k:04d}" + "x" * 1200 for k in range(900)]
    rows = [["item_id", "group_id", "label"] + judges]
    rows += [[f"it{i}", f"g{i // 2}", str(i % 2)] + ["AB"[(i + k) % 2] for k in range(900)] for i in range(60)]
    path = write(tmp_path / "wide.csv", written(rows))
    assert path.stat().st_size > MB and len(",".join(rows[0])) > MB
    panel = load_panel(str(path))
    assert panel.judge_names == judges and panel.n_rows == 60


def test_three_400k_character_column_names_are_read(tmp_path):
    rows = good_rows(60)
    rows[0][3:6] = [f"j{k}" + "n" * 400_000 for k in range(3)]
    panel = load_panel(str(write(tmp_path / "names.csv", written(rows))))
    assert [len(n) for n in panel.judge_names] == [400_002] * 3


def test_a_record_longer_than_the_cell_limit_with_small_cells_is_read(tmp_path):
    # 200 judges x 8 characters: each row is over a 1,000-byte cell limit, no cell is
    rows = [["item_id", "label"] + [f"judge{k:03d}" for k in range(200)]]
    rows += [[f"i{r}", str(r % 2)] + ["correct" if (r + k) % 3 else "wrong" for k in range(200)]
             for r in range(20)]
    path = write(tmp_path / "w.csv", written(rows))
    table = read_columns(str(path), limits=ImportLimits(max_cell_bytes=1000))
    assert table.n_rows == 20 and table.header == rows[0]


@st.composite
def csv_files(draw):
    """A CSV file as csv.writer writes it: random cells (CR, LF, quotes, delimiters, spaces,
    non-ASCII) and a line terminator per row drawn from LF, CRLF and CR (so a CR or LF in a
    cell may be left unquoted: whatever Python's csv module then reads is the reference)."""
    width = draw(st.integers(2, 4))
    cell = st.text(alphabet=st.sampled_from(["a", "B", "1", " ", "\r", "\n", '"', ",", "é", "\t"]),
                   max_size=5)
    rows = [[f"h{i}" for i in range(width)]]
    rows += draw(st.lists(st.lists(cell, min_size=width, max_size=width), min_size=1, max_size=8))
    terminators = draw(st.lists(st.sampled_from(["\n", "\r\n", "\r"]), min_size=1, max_size=3))
    buf = io.StringIO()
    for k, row in enumerate(rows):
        csv.writer(buf, lineterminator=terminators[k % len(terminators)]).writerow(row)
    return buf.getvalue().encode()


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=csv_files())
def test_any_file_pythons_csv_module_reads_is_read_the_same(tmp_path, data):
    path = write(tmp_path / "f.csv", data)
    try:
        expected = python_rows(data)
    except csv.Error:
        with pytest.raises(PanelError):
            read_columns(str(path))
        return
    width = len(next(csv.reader(io.StringIO(data.decode(), newline=""))))
    if any(len(r) != width for r in expected):       # a bare CR or LF split a row
        with pytest.raises(PanelError, match=r"expected \d+ fields"):
            read_columns(str(path))
        return
        with pytest.raises(PanelError, match="no data rows"):
            read_columns(str(path))
        return
    assert read_rows(path) == expected


# -- the delimiter and the encoding are detected and named ------------------------------------

@pytest.mark.parametrize("sep, name, says", [
    (";", "';'", "the file looks ';'-delimited: pass --delimiter ';'"),
    ("|", "'|'", "the file looks '|'-delimited: pass --delimiter '|'"),
    ("\t", "tab", "the file looks tab-delimited: pass --delimiter $'\\t' or --format tsv"),
])
def test_another_delimiter_is_detected_used_and_said(tmp_path, sep, name, says):
    """A header that is one column under the default delimiter and the first lines split
    evenly by another: that one is used (issue 26: detected with confidence, not asked),
    and a note says so. A delimiter the user states is never overridden: the refusal names
    the flag."""
    path = write(tmp_path / "p.csv", csv_text(good_rows(60), sep))
    panel = load_panel(str(path))
    assert panel.n_rows == 60 and panel.judge_names == ["j1", "j2", "j3"]
    assert_same_panel(panel, load_panel(str(path), delimiter=sep))
    assert panel.import_notes == [f"read as {name}-delimited: its first lines split into 6 columns by {name} "
                                  "and into one by ',' (pass --delimiter to choose another)"]
    err = refusal(path, delimiter=",")
    assert says in str(err) and err.line == 1


def test_a_semicolon_file_with_commas_in_cells_names_the_missing_label_column(tmp_path):
    rows = [["item_id", "label", "note, free text", "j1"]]
    rows += [[f"i{k}", str(k % 2), "a, b", "AB"[k % 2]] for k in range(30)]
    path = write(tmp_path / "semi.csv", csv_text(rows, ";"))
    err = refusal(path)
    assert "no 'label' column" in str(err)
    assert "pass --delimiter ';'" in str(err)


def test_a_tsv_file_holding_commas_is_read_with_commas_and_said(tmp_path):
    path = write(tmp_path / "p.tsv", csv_text(good_rows(60)))
    panel = load_panel(str(path))
    assert panel.n_rows == 60 and panel.import_notes[0].startswith("read as ','-delimited")
    assert "pass --delimiter ','" in str(refusal(path, delimiter="\t"))


@pytest.mark.parametrize("data, says", [
    (GOOD.decode().encode("utf-16"), "the file looks UTF-16"),
    (b"\xfe\xff" + GOOD.decode().encode("utf-16-be"), "the file looks UTF-16"),
    (GOOD.decode().encode("utf-16-le"), "the file looks UTF-16 (no byte-order mark)"),
    (GOOD.decode().encode("utf-32"), "the file looks UTF-32"),
])
def test_utf16_and_utf32_files_are_named_with_the_fix(tmp_path, data, says):
    err = refusal(write(tmp_path / "enc.csv", data))
    assert says in str(err) and "save it as UTF-8" in str(err)


def test_latin1_bytes_name_line_column_and_encoding(tmp_path):
    data = written(with_cell(6, 4, "réponse A")).decode().encode("latin-1")
    err = refusal(write(tmp_path / "latin.csv", data))
    assert (err.line, err.column) == (7, "j2")
    assert "not UTF-8" in str(err) and "Latin-1" in str(err) and "re-save the file as UTF-8" in str(err)
    # the same in a file the fallback reads (mixed line ends) and in a gzip file
    mixed = data.replace(b"\n", b"\r\n", 3)
    for path in (write(tmp_path / "mixed.csv", mixed), write(tmp_path / "l.csv.gz", gzip.compress(mixed))):
        err = refusal(path)
        assert (err.line, err.column) == (7, "j2")


@pytest.mark.parametrize("data, says", [
    (b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8, "looks like a PNG image"),
    (b"PK\x03\x04" + bytes(range(256)) * 8, "looks like a ZIP archive"),
    (gzip.compress(GOOD), "looks gzip-compressed"),
    (bytes(range(32)) * 64, "looks like binary data"),
])
def test_binary_files_say_what_they_look_like(tmp_path, data, says):
    assert says in str(refusal(write(tmp_path / "bin.csv", data)))


# -- limits, enforced while reading ---------------------------------------------------------------

@pytest.mark.parametrize("name, data", [
    ("fast path", written(with_cell(5, 3, "A" * 3000))),
    ("fallback (mixed line ends)", written(with_cell(5, 3, "A" * 3000)).replace(b"\n", b"\r\n", 2)),
    ("a quoted cell over many lines", written(with_cell(5, 3, "\n".join(["A" * 50] * 60)))),
])
def test_a_cell_over_the_limit_names_line_column_size_and_limit(tmp_path, name, data):
    path = write(tmp_path / "cell.csv", data)
    err = refusal(path, limits=ImportLimits(max_cell_bytes=2048))
    assert (err.line, err.column) == (6, "j1"), str(err)
    assert "is over the 2,048 bytes limit" in str(err) and "a cell of 3," in str(err)
    assert "CSV Error" not in str(err)


def test_the_default_cell_limit_is_one_mib(tmp_path):
    path = write(tmp_path / "huge.csv", written(with_cell(5, 3, "A" * (3 * MB))))
    err = refusal(path)
    assert (err.line, err.column) == (6, "j1")
    assert f"a cell of {3 * MB:,} bytes is over the 1 MiB limit" in str(err)


def test_a_header_cell_over_the_limit_is_named(tmp_path):
    err = refusal(write(tmp_path / "h.csv", written(with_cell(0, 4, "j" * 5000))),
                  limits=ImportLimits(max_cell_bytes=4096))
    assert err.line == 1 and "a cell of 5,000 bytes is over the 4,096 bytes limit" in str(err)


def test_a_line_over_the_limit_is_refused_when_read(tmp_path):
    data = GOOD.replace(b"\nit4,", b"\nit4," + b"x" * 5000, 1).replace(b"\n", b"\r\n", 1)
    err = refusal(write(tmp_path / "line.csv", data), limits=ImportLimits(max_line_bytes=4096))
    assert err.line == 6 and "the line is over the 4,096 bytes limit" in str(err)


def test_an_unclosed_quote_in_a_large_file_stops_at_the_cell_limit(tmp_path):
    data = GOOD.replace(b"\nit3,", b'\n"it3,', 1) + GOOD.split(b"\n", 1)[1] * 200
    err = refusal(write(tmp_path / "q.csv", data), limits=ImportLimits(max_cell_bytes=4096))
    assert err.line == 5 and "never closed" in str(err)


@pytest.mark.parametrize("data", [GOOD, MIXED], ids=["fast path", "fallback"])
def test_the_row_limit_counts_every_row_and_keeps_none_past_it(tmp_path, data):
    err = refusal(write(tmp_path / "rows.csv", data), limits=ImportLimits(max_rows=10))
    assert "the file has 60 data rows, above the import limit of 10" in str(err)
    assert "--max-rows" in str(err)


@pytest.mark.parametrize("line, bad, says", [
    (5, b"it3,g1,1,A,B", "expected 6 fields (as in the header) but found 5"),
    (4, b'"it2,g1,1,A,B,A', "a quoted field is never closed"),
    (9, b'it7,"g3"x,0,A,B,A', "malformed quoting"),
])
def test_malformed_rows_in_the_fallback_are_located(tmp_path, line, bad, says):
    lines = MIXED.split(b"\n")
    lines[line - 1] = bad + (b"\r" if lines[line - 1].endswith(b"\r") else b"")
    err = refusal(write(tmp_path / "bad.csv", b"\n".join(lines)))
    assert err.line == line and says in str(err)


# -- files: links, names ----------------------------------------------------------------------------

def test_a_symlink_loop_has_its_own_message(tmp_path):
    a, b = tmp_path / "loop.csv", tmp_path / "loop.csv.other"
    os.symlink(b, a)
    os.symlink(a, b)
    message = str(refusal(a))
    assert "symbolic link loop" in message and "does not exist" not in message


def test_a_dangling_symlink_names_its_target(tmp_path):
    link = tmp_path / "dangling.csv"
    os.symlink(tmp_path / "gone.csv", link)
    assert "symbolic link to" in str(refusal(link)) and "gone.csv" in str(refusal(link))


def test_messages_name_the_users_file_not_the_stored_upload(tmp_path):
    stored = save_upload(csv_text(good_rows(60), ";").encode(), "my panel.csv", tmp_path / "store")
    err = refusal(stored, source_name="my panel.csv", delimiter=",")
    assert str(err).startswith("my panel.csv line 1: ") and stored.name not in str(err)
    assert ".part" not in str(err)
    for fn in (preview, read_columns):
        with pytest.raises(PanelError, match=r"^my panel\.csv line 1: .*--delimiter ';'"):
            fn(str(stored), source_name="my panel.csv", delimiter=",")


def test_file_names_with_control_characters_stay_on_one_line(tmp_path):
    path = write(tmp_path / "evil\n\x1b[31m.csv", b"")
    with pytest.raises(PanelError) as exc:
        load_panel(str(path))
    assert "\n" not in str(exc.value) and "\x1b" not in str(exc.value)
    assert "evil\\n\\x1b[31m.csv: the file is empty" in str(exc.value)


def test_import_records_and_names_the_source_name(populated_store, tmp_path):
    stored = save_upload(GOOD, "mine.csv", tmp_path / "store")
    info = import_file(populated_store, str(stored), name="mine", source_name="mine.csv")
    try:
        assert info["source"] == "mine.csv"
    finally:
        populated_store.delete_panel("mine")
    one_group = [r[:1] + ["g" if k else r[1]] + r[2:] for k, r in enumerate(good_rows(60, seed=1))]
    bad = save_upload(csv_text(one_group).encode(), "one group.csv", tmp_path / "store")
    with pytest.raises(PanelError, match=r"^one group\.csv column 'group_id': the 60 labelled rows fall in 1 group"):
        import_file(populated_store, str(bad), name="two", source_name="one group.csv")


# -- JSON Lines ----------------------------------------------------------------------------------

@pytest.mark.parametrize("lines, line, column, says", [
    (['{"item_id": "a", "label": 1, "j1": "A"}', '{"item_id": "b", "label": 0, "j1": "B"}', '[1, 2, 3]'],
     3, None, "this line is not a JSON object"),
    (['{"item_id": "a", "label": 1, "j1": "A"}', '{"item_id": "b", "label": 0, "j1": {"v": "B"}}'],
     2, "j1", "nested JSON object or array"),
    (['{"item_id": "a", "label": 1, "j1": "A", "j1": "B"}'], 1, "j1", "the key 'j1' appears twice"),
    (['{"item_id": "a", "label": 1, "j1": "A", "J1": "B"}'], 1, "J1", "differ only by case"),
])
def test_jsonl_lines_that_are_not_flat_objects_are_located(tmp_path, lines, line, column, says):
    err = refusal(write(tmp_path / "p.jsonl", "\n".join(lines) + "\n"))
    assert (err.line, err.column) == (line, column) and says in str(err), str(err)


# -- label-range inference (design.md) ---------------------------------------------------------------

def label_file(tmp_path, labels, name="l.csv"):
    rows = [["item_id", "label", "j1"]] + [[f"i{k}", y, "AB"[k % 2]] for k, y in enumerate(labels)]
    return write(tmp_path / name, csv_text(rows))


@pytest.mark.parametrize("labels, lo, hi", [
    (["1", "2", "3", "4", "5"] * 4, 1, 5),
    (["-2", "-1", "0", "1", "2"] * 2, -2, 2),
    (["0", "1", "2"] * 2, 0, 2),
    (["3", "4.0", "3.0", "4"], 3, 4),
])
def test_contiguous_integer_labels_each_seen_twice_set_the_range(tmp_path, labels, lo, hi):
    panel = load_panel(str(label_file(tmp_path, labels)))
    assert panel.label_range_inferred and f"[{lo:g}, {hi:g}]" in panel.label_note
    assert panel.labels.min() == 0.0 and panel.labels.max() == 1.0


@pytest.mark.parametrize("labels, line, says", [
    (["1", "2", "3"] * 5 + ["4"], 17, "label '4' is the only one of its value"),
    (["0", "1"] * 5 + ["7", "1"], 12, "label '7' is the only one of its value"),
    (["1", "2", "4", "5"] * 3, 4, "label '4' leaves a gap"),
    (["1", "3"] * 4, 3, "label '3' leaves a gap"),
    (["0", "1", "2.5", "2.5"], 4, "label '2.5' is outside [0,1] and not an integer rubric score"),
    # averaged 1-5 scores: the first label outside [0,1] ('4.0') is a whole number, so the error
    # names a fraction (it said "label '4.0' ... not an integer rubric score")
    (["4.0", "4.0", "3.6666666666666665", "2", "1"], 4,
     "label '3.6666666666666665' is outside [0,1] and not an integer rubric score"),
    (["0.5", "0.5", "3", "3", "4", "4"], 2,
     "label '0.5' is not a whole number, so the labels are not integer rubric scores, "
     "and some are outside [0,1] (such as '3')"),
])
def test_any_other_label_scale_is_an_error_naming_the_row(tmp_path, labels, line, says):
    path = label_file(tmp_path, labels)
    err = refusal(path)
    assert (err.line, err.column) == (line, "label") and says in str(err) and "--label-range" in str(err)
    with pytest.raises(PanelError, match=re.escape(says)):   # the reference reader agrees
        fio.read_panel(str(path))


def test_a_declared_label_range_replaces_inference(tmp_path):
    panel = load_panel(str(label_file(tmp_path, ["1", "2", "4", "5"] * 3)), label_range=(1, 5))
    assert not panel.label_range_inferred and sorted(set(panel.labels)) == [0.0, 0.25, 0.75, 1.0]


def test_label_inference_is_the_same_for_long_and_jsonl_files(tmp_path):
    long_rows = [["item_id", "judge", "output", "label"]]
    labels = ["1", "2", "3"] * 4 + ["9"]
    for k, y in enumerate(labels):
        long_rows += [[f"i{k}", j, "AB"[k % 2], y] for j in ("m1", "m2")]
    err = refusal(write(tmp_path / "long.csv", csv_text(long_rows)))
    assert "item 'i12'" in str(err) and "label '9' is the only one of its value" in str(err)
    jsonl = "".join(json.dumps({"item_id": f"i{k}", "label": int(y), "j1": "AB"[k % 2]}) + "\n"
                    for k, y in enumerate(labels))
    err = refusal(write(tmp_path / "p.jsonl", jsonl))
    assert err.line == 13 and "label '9' is the only one of its value" in str(err)


# -- the command line ------------------------------------------------------------------------------

@pytest.mark.parametrize("name, data, says", [
    # a comma in the header: ',' splits it too, so ';' is advised, not assumed
    ("semi.csv", csv_text(good_rows(60), ";").replace("j3", "j3,v2", 1).encode(), "pass --delimiter ';'"),
    ("utf16.csv", GOOD.decode().encode("utf-16"), "the file looks UTF-16"),
    ("cell.csv", written(with_cell(5, 3, "A" * (2 * MB))), "line 6, column 'j1': a cell of"),
])
@pytest.mark.parametrize("command", ["import", "select"])
def test_the_cli_refuses_in_one_line_naming_the_file(tmp_path, name, data, says, command):
    path = write(tmp_path / name, data)
    args = ["--name", "x"] if command == "import" else ["--protocol", "split", "--choice", "argmin"]
    line = assert_one_line_error(run_cli(command, str(path), *args, "--store", str(tmp_path / "s.duckdb")))
    assert f"fcps: error: {path}" in line and says in line, line


def test_the_cli_imports_a_mixed_line_end_file(tmp_path):
    path = write(tmp_path / "mixed.csv", MIXED)
    code, out, err = run_cli("import", str(path), "--name", "mixed", "--json", "--quiet",
                             "--store", str(tmp_path / "s.duckdb"))
    assert code == 0, err
    assert json.loads(out)["panel"]["n_rows"] == 60


def test_free_text_judge_is_refused_before_any_per_output_work(tmp_path, monkeypatch):
    """The distinct-output limit is checked on the factorized values: schema detection and
    vocabularies are never built for 5,000 free-text outputs."""
    from fcps_core.ingest import build as build_module
    from fcps_core.ingest.files import ImportLimits
    path = tmp_path / "chatty.csv"
    path.write_text("item_id,label,j1,chatty\n" + "".join(f"i{k},{k % 2},A,said thing {k}\n" for k in range(5000)))
    seen = []
    real = build_module.build_judge_column

    def spy(name, uniques, **kw):
        seen.append((name, len(uniques)))
        return real(name, uniques, **kw)
    monkeypatch.setattr(build_module, "build_judge_column", spy)
    with pytest.raises(FCPSError, match="5,000 distinct outputs"):
        load_panel(str(path), limits=ImportLimits(max_distinct_outputs=1000))
    assert ("chatty", 5000) not in seen
