"""The command line's bad-input contract, end to end through a subprocess.

Contract (README "Command line", ``fcps_core/errors.py``): bad input exits with status 2,
stdout stays empty, and stderr holds exactly one line starting with ``fcps: error:`` that
names where the problem is ("line N", the header being line 1, and/or "column 'name'")
and what to do -- never a Python traceback. Positive controls show that the valid
variants next to each bad input are accepted (exit 0).
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import pytest

from store_helpers import assert_one_line_error

ROOT = Path(__file__).resolve().parents[1]
VENV_PYTHON = ROOT / ".venv" / "bin" / "python"
PYTHON = str(VENV_PYTHON) if VENV_PYTHON.exists() else sys.executable


# -- helpers -----------------------------------------------------------------------------

def run_cli(tmp_path: Path, content: str | bytes | None, *args: str,
            name: str = "panel.csv") -> tuple[int, str, str]:
    """Write ``content`` (text or raw bytes; None = write nothing) to ``tmp_path/name``,
    run ``python -m fcps_core select FILE ARGS`` from the project root and return
    (returncode, stdout, stderr)."""
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8", newline="")
    # Input handling is not about the protocol: the paper's split protocol keeps it fast.
    proc = subprocess.run([PYTHON, "-m", "fcps_core", "select", str(path), "--protocol", "split",
                           "--choice", "argmin", *args],
                          cwd=ROOT, capture_output=True, timeout=300)
    return (proc.returncode, proc.stdout.decode("utf-8", "replace"),
            proc.stderr.decode("utf-8", "replace"))


def csv_text(rows: list[list[str]]) -> str:
    return "".join(",".join(r) + "\n" for r in rows)


def judge_outputs(label: str, rng: random.Random, accuracy: float) -> str:
    """A pairwise verdict that agrees with the preferred side ``label`` ('A'/'B') with
    probability ``accuracy``; a few ties and parse errors."""
    u = rng.random()
    if u < 0.05:
        return "tie"
    if u < 0.08:
        return "parse_error"
    if rng.random() < accuracy:
        return label
    return "B" if label == "A" else "A"


def good_rows(n: int = 120, seed: int = 0) -> list[tuple[str, str, list[str]]]:
    """(item_id, label A/B, [3 judge outputs correlated with the label])."""
    rng = random.Random(seed)
    rows = []
    for i in range(n):
        lab = "A" if rng.random() < 0.5 else "B"
        outs = [judge_outputs(lab, rng, acc) for acc in (0.85, 0.75, 0.65)]
        rows.append((f"it{i:03d}", lab, outs))
    return rows


def wide_panel(n: int = 120, *, label_fn=None, seed: int = 0) -> list[list[str]]:
    """Wide panel rows (header first). ``label_fn(i, 'A'|'B')`` renders the label cell."""
    label_fn = label_fn or (lambda i, lab: "1.0" if lab == "A" else "0.0")
    rows = [["item_id", "label", "j1", "j2", "j3"]]
    for i, (item, lab, outs) in enumerate(good_rows(n, seed)):
        rows.append([item, label_fn(i, lab), *outs])
    return rows


def small_panel(n: int = 6) -> list[list[str]]:
    """A small valid wide panel; bad inputs are made by editing one cell of it."""
    rows = [["item_id", "label", "j1", "j2"]]
    for i in range(n):
        a = i % 2 == 0
        rows.append([f"x{i}", "1" if a else "0", "A" if a else "B", "A" if i % 3 else "B"])
    return rows


def run_json_ok(tmp_path: Path, content: str | bytes, *args: str) -> dict:
    code, out, err = run_cli(tmp_path, content, "--quiet", "--json", *args)
    assert "Traceback" not in err, err
    assert code == 0, (code, err)
    assert "fcps: error" not in err, err
    return json.loads(out)


# -- bad inputs --------------------------------------------------------------------------

def test_missing_label_column_names_it_and_the_option(tmp_path):
    rows = [["item_id", "j1", "j2"]] + [[f"x{i}", "A", "B"] for i in range(8)]
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "'label'" in line
    assert "--label-column" in line


def test_missing_custom_label_column_names_it(tmp_path):
    line = assert_one_line_error(run_cli(tmp_path, csv_text(small_panel()),
                                         "--label-column", "human"))
    assert "'human'" in line
    assert "--label-column" in line


def test_unmappable_text_label_names_line_and_column(tmp_path):
    rows = small_panel()
    rows[3][1] = "maybe"  # 3rd data row = file line 4
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 4" in line
    assert "column 'label'" in line
    assert "'maybe'" in line
    assert "[0,1]" in line  # says what labels are acceptable


def test_non_integer_out_of_range_label_names_line_and_column(tmp_path):
    rows = small_panel()
    rows[4][1] = "3.7"  # 4th data row = file line 5
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 5" in line
    assert "column 'label'" in line
    assert "3.7" in line
    assert "--label-range" in line


@pytest.mark.parametrize("token", ["inf", "-inf", "Infinity"])
def test_infinite_label_names_line(tmp_path, token):
    rows = small_panel()
    rows[2][1] = token  # 2nd data row = file line 3
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 3" in line
    assert "column 'label'" in line
    assert "finite" in line


def test_entirely_empty_judge_column_names_it(tmp_path):
    rows = small_panel()
    rows[0].append("silent_judge")
    for r in rows[1:]:
        r.append("")
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "column 'silent_judge'" in line
    assert "empty" in line
    assert "line " not in line  # a whole column has no single line


def test_duplicate_item_ids_with_different_labels_name_both_lines(tmp_path):
    rows = small_panel()
    rows[2][0] = "dup"   # file line 3
    rows[2][1] = "1"
    rows[5][0] = "dup"   # file line 6
    rows[5][1] = "0"
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "'dup'" in line
    assert "lines 3 and 6" in line
    assert "column 'item_id'" in line


def test_too_few_labelled_rows_for_requested_counts(tmp_path):
    rows = small_panel(10)
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows), "--n-select", "5",
                                         "--n-cal", "5", "--n-val", "5"))
    assert "15" in line  # rows needed
    assert "10" in line  # rows available
    assert "label" in line


def test_too_few_labelled_groups_for_blocks(tmp_path):
    rows = [["item_id", "group_id", "label", "j1", "j2"]]
    for i in range(40):
        a = i % 2 == 0
        rows.append([f"x{i}", "g0", "1" if a else "0", "A" if a else "B", "A" if i % 3 else "B"])
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "group" in line
    assert "1 labelled group" in line
    assert "3 blocks" in line


def test_a_negative_label_range_is_read_as_the_option_s_value(tmp_path):
    """MQM-style scores run from -25 to 0: ``--label-range -25,0`` is the option's value, not
    an unknown option (argparse alone takes only plain negative numbers as values), and
    means what ``--label-range=-25,0`` means."""
    from fcps_core.cli.args import joined_range_values
    assert joined_range_values(["select", "p.csv", "--label-range", "-25,0", "--judge-range", "-1,1", "--json"]) == \
        ["select", "p.csv", "--label-range=-25,0", "--judge-range=-1,1", "--json"]
    assert joined_range_values(["--label-range", "0,25", "--quiet"]) == ["--label-range", "0,25", "--quiet"]
    assert joined_range_values(["--label-range", "--quiet"]) == ["--label-range", "--quiet"]   # still refused
    rows = [["item_id", "label", "j1", "j2"]]
    for i in range(60):
        a = i % 2 == 0
        rows.append([f"x{i}", "0" if a else "-20", "A" if a else "B", "A" if i % 3 else "B"])
    spaced = run_json_ok(tmp_path, csv_text(rows), "--label-range", "-25,0")
    joined = run_json_ok(tmp_path, csv_text(rows), "--label-range=-25,0")
    assert spaced["selected"] == joined["selected"]


def _qa_rows(n: int = 60, extra: str | None = None) -> list[list[str]]:
    """A binary QA panel whose item column is named ``question_id`` (not the default), with
    an optional ``extra`` text column of a different prompt on every row."""
    rows = [["question_id", "label", "j1", "j2"] + ([extra] if extra else [])]
    for i in range(n):
        a = i % 2 == 0
        rows.append([f"q{i}", "1" if a else "0", "yes" if a else "no", "yes" if i % 3 else "no"]
                    + ([f"What is {i} plus {i}?"] if extra else []))
    return rows


def test_an_id_column_is_not_read_as_a_judge(tmp_path):
    """An item id under another name has a different value on every row: read as a
    categorical judge it could learn nothing and would be counted among "all N judges". The
    refusal names the column and the option that makes it the item column."""
    line = assert_one_line_error(run_cli(tmp_path, csv_text(_qa_rows())))
    assert "column 'question_id'" in line and "60 different values in 60 rows" in line
    assert "--item-column 'question_id'" in line
    out = run_json_ok(tmp_path, csv_text(_qa_rows()), "--item-column", "question_id")
    assert sorted(j["judge"] for j in out["judges_report"]["judges"]) == ["j1", "j2"]


def test_a_free_text_column_is_not_read_as_a_judge_unless_the_judges_are_named(tmp_path):
    rows = _qa_rows(extra="prompt")
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows), "--item-column", "question_id"))
    assert "column 'prompt'" in line and "--judges" in line
    out = run_json_ok(tmp_path, csv_text(rows), "--item-column", "question_id", "--judges", "j1", "j2")
    assert sorted(j["judge"] for j in out["judges_report"]["judges"]) == ["j1", "j2"]


def _long_rows() -> list[list[str]]:
    rows = [["item", "judge", "output", "label"]]
    for i in range(40):
        for j in range(3):
            rows.append([f"d{i}", f"judge_{j}", "A" if (i + j) % 3 else "B", str(i % 2)])
    return rows


def test_a_long_file_s_missing_columns_are_named_with_the_columns_there_are(tmp_path):
    """A named judge column that is not there asks for the long layout: it is an error, not a
    wide read in which the judge-name and output columns would each become a judge; a long
    file without the item column lists the columns it has."""
    line = assert_one_line_error(run_cli(tmp_path, csv_text(_long_rows()), "--item-column", "item",
                                         "--judge-column", "model_name"))
    assert "'model_name'" in line and "--judge-column" in line and "'judge', 'output'" in line
    line = assert_one_line_error(run_cli(tmp_path, csv_text(_long_rows())))
    assert "no 'item_id' column" in line and "columns are 'item', 'judge', 'output', 'label'" in line
    assert "--item-column" in line
    out = run_json_ok(tmp_path, csv_text(_long_rows()), "--item-column", "item")
    assert sorted(j["judge"] for j in out["judges_report"]["judges"]) == ["judge_0", "judge_1", "judge_2"]


def test_non_utf8_bytes_name_line_and_encoding(tmp_path):
    lines = csv_text(small_panel()).encode("utf-8").splitlines(keepends=True)
    assert lines[2] == b"x1,0,B,A\n"
    lines[2] = b"x1,0,B\xff,A\n"  # judge cell j1 on data row 2 = file line 3
    line = assert_one_line_error(run_cli(tmp_path, b"".join(lines)))
    assert "line 3" in line
    assert "UTF-8" in line


def test_ragged_row_names_line_and_expected_field_count(tmp_path):
    rows = small_panel()
    rows[3].append("extra")  # data row 3 = file line 4
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 4" in line
    assert "expected 4 fields" in line
    assert "found 5" in line


def test_empty_file(tmp_path):
    line = assert_one_line_error(run_cli(tmp_path, b""))
    assert "empty" in line
    assert "panel.csv" in line


def test_header_only_file(tmp_path):
    line = assert_one_line_error(run_cli(tmp_path, "item_id,label,j1,j2\n"))
    assert "no data rows" in line
    assert "line 2" in line


def test_duplicated_header_name(tmp_path):
    rows = small_panel()
    rows[0][3] = "j1"  # header: item_id,label,j1,j1
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 1" in line
    assert "duplicated" in line
    assert "'j1'" in line
    assert "columns 3 and 4" in line


def test_invalid_block_value_names_line_and_column(tmp_path):
    rows = small_panel(12)
    rows[0].append("block")
    for i, r in enumerate(rows[1:]):
        r.append("SMMV"[i % 4])
    rows[5][-1] = "X"  # data row 5 = file line 6
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows)))
    assert "line 6" in line
    assert "column 'block'" in line
    assert "'X'" in line
    assert "S, M, V, T" in line


@pytest.mark.parametrize("split", ["1:2", "a:b:c", "1:2:1:1:1", "0:2:1", "1:-2:1", ""])
def test_bad_split_text(tmp_path, split):
    line = assert_one_line_error(run_cli(tmp_path, csv_text(wide_panel(40)), "--split", split))
    assert f"split {split!r}" in line
    assert "S:M:V" in line


def test_missing_file(tmp_path):
    line = assert_one_line_error(run_cli(tmp_path, None, name="no_such_panel.csv"))
    assert "no_such_panel.csv" in line
    assert "does not exist" in line


# -- positive controls -------------------------------------------------------------------

def test_control_numeric_labels_accepted(tmp_path):
    d = run_json_ok(tmp_path, csv_text(wide_panel()))
    assert d["panel"]["rows"] == 120 and d["panel"]["labelled"] == 120
    assert d["panel"]["judges"] == ["j1", "j2", "j3"]
    assert d["panel"]["schema"] == "pairwise"


def test_control_ab_labels_accepted(tmp_path):
    code, out, err = run_cli(tmp_path, csv_text(wide_panel(label_fn=lambda i, lab: lab)), "--quiet")
    assert "Traceback" not in err
    assert code == 0, err
    assert "SELECTED" in out
    assert "120 rows, 120 labelled, 3 judges" in out


def test_control_utf8_bom_accepted(tmp_path):
    data = b"\xef\xbb\xbf" + csv_text(wide_panel()).encode("utf-8")
    d = run_json_ok(tmp_path, data)
    # The BOM must not end up in the first column's name: item_id is still the id column.
    assert d["panel"]["judges"] == ["j1", "j2", "j3"]
    assert d["panel"]["labelled"] == 120


def test_control_integer_rubric_labels_normalised(tmp_path):
    # A-preferred items get rubric 4-5, B-preferred 1-2; 3 on a few of each.
    def rubric(i, lab):
        if i % 10 == 0:
            return "3"
        return ("5" if i % 2 else "4") if lab == "A" else ("1" if i % 2 else "2")
    d = run_json_ok(tmp_path, csv_text(wide_panel(label_fn=rubric)))
    assert d["panel"]["labelled"] == 120
    assert "[1, 5]" in (d["panel"]["label_note"] or "")


def test_control_unlabelled_rows_mixed_in(tmp_path):
    # Every 4th row has an empty label, plus one "NA": unlabelled traffic, not an error.
    def lab(i, l):
        if i == 8:
            return "NA"
        return "" if i % 4 == 3 else ("1" if l == "A" else "0")
    d = run_json_ok(tmp_path, csv_text(wide_panel(label_fn=lab)))
    assert d["panel"]["rows"] == 120
    assert d["panel"]["labelled"] == 120 - 30 - 1
    sp = d["split"]
    assert sp["n_S"] + sp["n_M"] + sp["n_V"] + sp["n_T"] == 89


def test_control_long_format_accepted(tmp_path):
    rows = [["item_id", "judge", "output", "label"]]
    for item, lab, outs in good_rows():
        for j, o in zip(("j1", "j2", "j3"), outs):
            rows.append([item, j, o, "1" if lab == "A" else "0"])
    assert len(rows) == 1 + 360
    d = run_json_ok(tmp_path, csv_text(rows))
    assert d["panel"]["rows"] == 120 and d["panel"]["labelled"] == 120
    assert d["panel"]["judges"] == ["j1", "j2", "j3"]


def test_argparse_usage_errors_are_one_line(tmp_path):
    line = assert_one_line_error(run_cli(tmp_path, "item_id,label,j1\n1,1,A\n", "--n-select", "abc",
                                         "--n-cal", "1", "--n-val", "1"))
    assert "--n-select" in line and "abc" in line


@pytest.mark.parametrize("args,expect", [
    (["--seed", "-1"], "--seed must be at least 0"),
    (["--n-bins", "0"], "--n-bins must be at least 1"),
    (["--alpha", "nan"], "--alpha must be a finite number"),
    (["--k-max", "0"], "--k-max must be at least 1"),
    (["--save-model", "/nonexistent-dir/m.json"], "cannot use '/nonexistent-dir/m.json'"),
])
def test_bad_numbers_and_unwritable_paths_are_one_line(tmp_path, args, expect):
    rows = [["item_id", "label", "j1", "j2"]] + [[str(i), str(i % 2), "A" if i % 3 else "B", "B" if i % 5 else "A"]
                                                  for i in range(80)]
    line = assert_one_line_error(run_cli(tmp_path, csv_text(rows), "--quiet", *args))
    assert expect in line


def test_score_reads_judges_with_the_predictors_schemas(tmp_path):
    """A rubric judge stays a rubric when a new file happens to hold fractional values."""
    rows = [["item_id", "label", "j1", "j2"]] + [[str(i), str(i % 2), str(1 + (i * 7) % 5), "A" if i % 2 else "B"]
                                                  for i in range(120)]
    path = tmp_path / "train.csv"
    path.write_text(csv_text(rows))
    model = tmp_path / "m.json"
    proc = subprocess.run([PYTHON, "-m", "fcps_core", "select", str(path), "--quiet", "--families", "ridge_iso",
                           "table", "--save-model", str(model)], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    new = tmp_path / "new.csv"
    new.write_text("item_id,j1,j2\nx,2.37,A\ny,4,B\n")
    proc = subprocess.run([PYTHON, "-m", "fcps_core", "score", str(model), str(new)], cwd=ROOT,
                          capture_output=True, text=True)
    assert "Traceback" not in proc.stderr
    if proc.returncode == 0:
        lines = proc.stdout.strip().splitlines()
        assert lines[0] == "item_id,prediction,N_z,in_support,missing_judges" and len(lines) == 3
    else:
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1


@pytest.mark.parametrize("args, expect", [
    (["--split", "1e308:1e308:1"], "give positive S:M:V parts"),
    (["--seed", str(2 ** 64)], "--seed must be at most"),
    (["--folds", "1"], "--folds must be at least 2"),
    (["--folds", "1000"], "folds must be an integer from 2 to 100"),
    (["--n-boot", "100000000"], "--n-boot must be an integer from 10 to 100000"),
    (["--choice", "argmin", "--estimate", "nested", "--protocol", "split"], "nested estimate needs the crossfit protocol"),
    (["--choice", "tie_average", "--guard", "one_se"], "use --choice argmin with --guard"),
])
def test_protocol_and_number_flags_are_one_line_errors(tmp_path, args, expect):
    rows = [["item_id", "label", "j1", "j2"]] + [[str(i), str(i % 2), "A" if i % 3 else "B", "B" if i % 5 else "A"]
                                                  for i in range(80)]
    path = tmp_path / "p.csv"
    path.write_text(csv_text(rows))
    proc = subprocess.run([PYTHON, "-m", "fcps_core", "select", str(path), "--quiet", *args], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    line = assert_one_line_error((proc.returncode, proc.stdout, proc.stderr))
    assert expect in line


@pytest.mark.parametrize("flags, expect", [
    (["--max-mb", "nan"], "--max-mb must be a finite number"),
    (["--max-mb", "inf"], "--max-mb must be a finite number"),
    (["--delimiter", ""], "--delimiter must be exactly one character"),
    (["--delimiter", "||"], "--delimiter must be exactly one character"),
])
def test_import_flags_are_one_line_errors(tmp_path, flags, expect):
    path = tmp_path / "p.csv"
    path.write_text(csv_text([["item_id", "label", "j1"], ["1", "1", "A"], ["2", "0", "B"]]))
    proc = subprocess.run([PYTHON, "-m", "fcps_core", "import", str(path), "--name", "p", "--store",
                           str(tmp_path / "s.duckdb"), *flags], cwd=ROOT, capture_output=True, text=True, timeout=300)
    line = assert_one_line_error((proc.returncode, proc.stdout, proc.stderr))
    assert expect in line
    assert not (tmp_path / "s.duckdb").exists()      # refused before the store is touched


@pytest.mark.skipif(not hasattr(__import__("os"), "mkfifo"), reason="needs named pipes")
def test_a_pipe_or_a_device_is_refused_before_reading(tmp_path):
    """A named pipe would block the reader forever and /dev/zero never ends: both are
    refused before any byte is read, as panels, as traffic and as predictor files."""
    import os
    fifo = tmp_path / "pipe.csv"
    os.mkfifo(fifo)
    line = assert_one_line_error(run_cli(tmp_path, None, name="pipe.csv"))
    assert "is not a regular file" in line
    panel = tmp_path / "panel.csv"
    panel.write_text(csv_text(wide_panel(120)), encoding="utf-8")
    pred = tmp_path / "pred.json"
    code, _, err = run_cli(tmp_path, None, "--save-model", str(pred), name="panel.csv")
    assert code == 0, err
    for args in (["/dev/zero", str(panel)], [str(pred), "/dev/zero"], [str(pred), str(fifo)]):
        proc = subprocess.run([PYTHON, "-m", "fcps_core", "score", *args], cwd=ROOT,
                              capture_output=True, timeout=60)
        line = assert_one_line_error((proc.returncode, proc.stdout.decode(), proc.stderr.decode()))
        assert "not a regular file" in line, line


def test_gzip_bomb_is_refused_by_its_decompressed_size(tmp_path):
    """A small .gz that expands past the import limit is refused while counting, before
    parsing (the store's ``import --max-mb`` sets the same limit)."""
    import gzip as gz
    from fcps_core.errors import PanelError
    from fcps_core.ingest.files import MB, ImportLimits
    from fcps_core.ingest.load import load_panel
    header = "item_id,label,j1,j2\n"
    body = "".join(f"i{i},{i % 2},A,B\n" for i in range(400_000))     # about 6 MB of text
    data = gz.compress((header + body).encode(), compresslevel=9)
    assert len(data) < 2 * MB
    (tmp_path / "bomb.csv.gz").write_bytes(data)
    with pytest.raises(PanelError, match="expands to more than the import limit of 2 MB"):
        load_panel(str(tmp_path / "bomb.csv.gz"), limits=ImportLimits(max_bytes=2 * MB))
