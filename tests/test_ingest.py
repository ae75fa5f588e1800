"""The DuckDB import path builds exactly the panel of the reference reader.

``reference.row_reader.read_panel`` / ``panel_from_columns`` (row-by-row Python, tests/reference/) are the reference;
``fcps_core.ingest`` must produce the same panel (rows, labels, groups, blocks, judge
schemas, vocabularies, codes, values) and the same first error, for every format.
"""

from __future__ import annotations

import gzip
import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import reference.row_reader as fio
from fcps_core.errors import PanelError
from fcps_core.ingest import (ImportLimits, build_panel, load_panel, long_to_wide, preview,
                              save_upload)

from store_helpers import ROOT, assert_same_panel, csv_text, good_rows, write

DATA = ROOT / "data"


@pytest.mark.parametrize("name", ["llmbar.csv", "hanna.csv"])
def test_real_panels_match_the_reference_reader(name):
    assert_same_panel(fio.read_panel(str(DATA / name)), load_panel(str(DATA / name)))


def test_tsv_gzip_and_rubric_ranges_match(tmp_path):
    rows = [["item_id", "group_id", "label", "block", "r1", "c1", "t1"]]
    rng = np.random.default_rng(3)
    for i in range(40):
        rows.append([f"x{i}", f"g{i % 13}", str(int(rng.integers(1, 6))), "SMVT"[i % 4],
                     str(int(rng.integers(1, 4))), f"{rng.normal():.6f}",
                     ["safe", "unsafe", "", "uncertain"][i % 4]])
    path = tmp_path / "p.tsv.gz"
    path.write_bytes(gzip.compress(csv_text(rows, "\t").encode()))
    kw = dict(label_range=(1, 5), judge_range=(0, 4))
    ref = fio.read_panel(str(path), **kw)
    got = load_panel(str(path), **kw)
    assert_same_panel(ref, got)
    assert got.judge("r1").value_range == (0, 4)          # the declared range, not observed
    assert got.blocks is not None and set(got.blocks) == {"S", "M", "V", "T"}


def test_long_layout_with_labels_file_matches(tmp_path):
    long_rows = [["item_id", "judge", "output", "group_id"]]
    for i in range(12):
        for j in ("m1", "m2", "m3"):
            if (i + len(j)) % 5:             # some (item, judge) pairs are absent
                long_rows.append([f"i{i}", j, "AB"[(i * 7 + ord(j[1])) % 2], f"g{i // 2}"])
    long_rows.append(["i0", "m1", long_rows[1][2], "g0"])    # a repeated, identical output
    write(tmp_path / "long.csv", csv_text(long_rows))
    present = sorted({r[0] for r in long_rows[1:]}, key=lambda s: int(s[1:]))   # a labels file
    write(tmp_path / "labels.csv", csv_text([["item_id", "label"]] +        # naming others is refused
                                            [[i, str(int(i[1:]) % 2)] for i in present]))
    kw = dict(labels_path=str(tmp_path / "labels.csv"))
    assert_same_panel(fio.read_panel(str(tmp_path / "long.csv"), **kw),
                      load_panel(str(tmp_path / "long.csv"), **kw))


def test_parquet_and_jsonl_give_the_csv_panel(tmp_path):
    rows = good_rows(40)
    write(tmp_path / "p.csv", csv_text(rows))
    frame = pd.DataFrame(rows[1:], columns=rows[0])
    frame.to_parquet(tmp_path / "p.parquet")
    with open(tmp_path / "p.jsonl", "w", encoding="utf-8") as fh:
        for rec in frame.to_dict(orient="records"):
            fh.write(json.dumps(rec) + "\n")
    ref = fio.read_panel(str(tmp_path / "p.csv"))
    for name in ("p.parquet", "p.jsonl"):
        assert_same_panel(ref, load_panel(str(tmp_path / name)))


def test_jsonl_numbers_and_mixed_types_become_the_csv_strings(tmp_path):
    # JSON numbers keep their text; a column mixing numbers and strings is not quoted.
    lines = [{"item_id": f"a{i}", "group_id": f"g{i}", "label": [1, "B", 0.5, "A"][i % 4],
              "j1": ["A", "B"][i % 2], "j2": [3, 4.5, 2][i % 3]} for i in range(12)]
    (tmp_path / "m.jsonl").write_text("\n".join(json.dumps(r) for r in lines) + "\n")
    panel = load_panel(str(tmp_path / "m.jsonl"))
    assert panel.labels.tolist() == [[1.0, 0.0, 0.5, 1.0][i % 4] for i in range(12)]
    assert panel.judge("j2").schema == "continuous"
    assert panel.judge("j2").values.tolist() == [[3.0, 4.5, 2.0][i % 3] for i in range(12)]


# -- property tests: the distinct-value fast path equals panel_from_columns ---------------------

GOOD_LABELS = ["0", "1", "0.5", "A", "B", "tie", "", "NaN", " 1 "]
BAD_LABELS = ["2", "3", "maybe", "inf", "1.5"]
OUTPUTS = ["A", "B", "tie", "parse_error", "", "NA", " A", "1", "2", "3", "4.5", "x", "yes", "no"]
BLOCKS = ["", "S", "M", "V", "T"]


@st.composite
def wide_tables(draw):
    """Mostly valid tables; about one in three carries a bad value somewhere."""
    n = draw(st.integers(1, 25))
    k = draw(st.integers(1, 4))
    bad = draw(st.integers(0, 2)) == 0
    ids = [f"i{i}" for i in range(n)]
    if bad:
        ids = draw(st.lists(st.sampled_from(["a", "b", " b", "c", ""] + ids), min_size=n, max_size=n))
    label_pool = GOOD_LABELS + (BAD_LABELS if bad else [])
    cols = {"item_id": ids,
            "label": draw(st.lists(st.sampled_from(label_pool), min_size=n, max_size=n))}
    if draw(st.booleans()):
        cols["group_id"] = draw(st.lists(st.sampled_from(["g1", "g2", "", " g3"]), min_size=n, max_size=n))
    if draw(st.booleans()):
        # a block only on labelled rows, unless the table is meant to be bad
        blocks = draw(st.lists(st.sampled_from(BLOCKS + (["Q"] if bad else [])), min_size=n, max_size=n))
        cols["block"] = [b if bad or y.strip().lower() not in ("", "nan") else ""
                         for b, y in zip(blocks, cols["label"])]
    for j in range(k):
        pool = draw(st.lists(st.sampled_from(OUTPUTS), min_size=1, max_size=5, unique=True))
        cols[f"j{j}"] = draw(st.lists(st.sampled_from(pool), min_size=n, max_size=n))
    return cols


def _outcome(fn):
    try:
        return fn(), None
    except PanelError as exc:
        return None, str(exc)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(wide_tables(), st.sampled_from([None, (0.0, 5.0)]))
def test_build_panel_equals_from_columns(cols, label_range):
    ref, ref_err = _outcome(lambda: fio.panel_from_columns(cols, label_range=label_range))
    got, got_err = _outcome(lambda: build_panel(cols, label_range=label_range))
    assert ref_err == got_err
    if ref is not None:
        assert_same_panel(ref, got)


@st.composite
def long_tables(draw):
    """Long rows; about one table in three has an empty id, a conflicting output, a
    disagreeing per-item label or a judge named like a per-item column."""
    n = draw(st.integers(1, 30))
    bad = draw(st.integers(0, 2)) == 0
    items = ["a", "b", " b", "c"] + (["", "d"] if bad else [])
    judges = ["m1", "m2", " m2"] + (["", "label"] if bad else [])
    rows = draw(st.lists(st.tuples(st.sampled_from(items), st.sampled_from(judges)),
                         min_size=n, max_size=n, unique=not bad))
    outputs = {key: draw(st.sampled_from(["A", "B", "tie"])) for key in rows}
    item_label = {i: draw(st.sampled_from(["1", "0", " 1"])) for i in items}
    return {"item_id": [i for i, _ in rows], "judge": [j for _, j in rows],
            "output": [outputs[key] if not bad else draw(st.sampled_from(["A", " A", "B"]))
                       for key in rows],
            "label": [draw(st.sampled_from(["", "NA", item_label[i]] + (["0"] if bad else [])))
                      for i, _ in rows]}


@settings(max_examples=300, deadline=None)
@given(long_tables())
def test_long_to_wide_equals_the_reference(cols):
    ref, ref_err = _outcome(lambda: fio.long_to_wide(cols))
    got, got_err = _outcome(lambda: long_to_wide(cols))
    assert ref_err == got_err
    if ref is not None:
        assert list(ref) == list(got)
        for key in ref:
            assert list(ref[key]) == list(got[key]), key


def test_errors_are_located_at_the_first_offending_line(tmp_path):
    rows = good_rows(30)
    rows[7][2] = "maybe"          # line 8
    rows[19][2] = "maybe"
    write(tmp_path / "p.csv", csv_text(rows))
    with pytest.raises(PanelError) as exc:
        load_panel(str(tmp_path / "p.csv"))
    assert exc.value.line == 8 and exc.value.column == "label"


# -- preview -----------------------------------------------------------------------------------

def test_preview_reports_roles_schemas_and_rows_without_reading_everything(tmp_path):
    rows = good_rows(50)
    rows[0].append("score")
    for i, r in enumerate(rows[1:]):
        r.append(f"{i / 7:.4f}")
    write(tmp_path / "p.csv", csv_text(rows))
    info = preview(str(tmp_path / "p.csv"), rows=3, sample_rows=20)
    assert info["layout"] == "wide" and info["format"] == "csv"
    assert info["roles"] == {"item_id": "item", "group_id": "group", "label": "label",
                             "j1": "judge", "j2": "judge", "j3": "judge", "score": "judge"}
    assert info["judge_schemas"]["score"] == "continuous"
    assert info["judge_schemas"]["j1"] == "pairwise"
    assert info["rows"] == [r for r in rows[1:4]]
    assert info["sample_rows"] == 20


# -- uploads -----------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ["../../escape.csv", "/etc/passwd.csv", "a/../../b.tsv",
                                  "..\\..\\win.csv", "ok.csv"])
def test_uploads_stay_inside_the_store_folder(tmp_path, name):
    store_dir = tmp_path / "store"
    target = save_upload(b"item_id,label,j1\nx,1,A\n", name, store_dir)
    assert target.parent == (store_dir / "uploads").resolve()
    assert target.read_bytes() == b"item_id,label,j1\nx,1,A\n"
    assert [p.name for p in tmp_path.iterdir()] == ["store"]        # nothing written elsewhere


def test_uploads_ignore_a_planted_symlink(tmp_path):
    store_dir = tmp_path / "store"
    (store_dir / "uploads").mkdir(parents=True)
    data = b"item_id,label,j1\nx,1,A\n"
    import hashlib
    planted = store_dir / "uploads" / (hashlib.sha256(data).hexdigest()[:32] + ".csv")
    outside = tmp_path / "outside.csv"
    planted.symlink_to(outside)
    target = save_upload(data, "x.csv", store_dir)
    assert not outside.exists()                        # the link was replaced, not followed
    assert target.read_bytes() == data and not target.is_symlink()


@pytest.mark.parametrize("name", ["evil.sh", "x.csv\x00.sh", "noext", ""])
def test_uploads_with_other_names_are_refused(tmp_path, name):
    with pytest.raises(PanelError, match="not a panel file"):
        save_upload(b"a,b\n1,2\n", name, tmp_path)
    assert not (tmp_path / "uploads").exists() or not any((tmp_path / "uploads").iterdir())


def test_upload_size_limit(tmp_path):
    with pytest.raises(PanelError, match="above the import limit"):
        save_upload(b"x" * 2048, "big.csv", tmp_path, limits=ImportLimits(max_bytes=1024))


@pytest.mark.parametrize("labels, message, line", [
    (["0", "1"] * 20 + ["10"], "label '10' is the only one of its value", 42),
    (["1", "2"] * 20 + ["5", "5"], "label '5' leaves a gap in the integer labels", 42),
    (["0", "1"] * 20 + ["1e308"], "label .1e308. is the only one of its value", 42),
])
def test_one_label_outlier_never_rescales_every_label(tmp_path, labels, message, line):
    rows = [["item_id", "label", "j1"]] + [[str(i), y, "A" if i % 2 else "B"] for i, y in enumerate(labels)]
    path = write(tmp_path / "p.csv", csv_text(rows))
    for reader in (load_panel, fio.read_panel):
        with pytest.raises(PanelError, match=message) as err:
            reader(str(path))
        if line is not None:
            assert err.value.line == line


def test_a_believable_rubric_is_inferred_and_a_declared_range_always_wins(tmp_path):
    rows = [["item_id", "label", "j1"]] + [[str(i), str(1 + i % 5), "A" if i % 2 else "B"] for i in range(50)]
    panel = load_panel(str(write(tmp_path / "r.csv", csv_text(rows))))
    assert sorted(set(panel.labels.tolist())) == [0.0, 0.25, 0.5, 0.75, 1.0]
    rows = [["item_id", "label", "j1"]] + [[str(i), y, "A"] for i, y in enumerate(["0", "1"] * 10 + ["10"])]
    panel = load_panel(str(write(tmp_path / "d.csv", csv_text(rows))), label_range=(0, 10))
    assert panel.labels.max() == 1.0 and panel.labels[1] == pytest.approx(0.1)


def test_a_judge_can_never_carry_a_role_name(tmp_path):
    # long file: a judge called "label" would have become the human labels
    long = write(tmp_path / "long.csv", "item_id,judge,output\n1,label,A\n1,j2,B\n2,label,B\n2,j2,A\n")
    for reader in (load_panel, fio.read_panel):
        with pytest.raises(PanelError, match="judge name 'label' is also the name of the label column"):
            reader(str(long), require_labels=False)
    # wide file: one column mapped to two roles
    wide = write(tmp_path / "wide.csv", csv_text(good_rows(30, seed=2)))
    for reader in (load_panel, fio.read_panel):
        with pytest.raises(PanelError, match="mapped to both the item id and the label role"):
            reader(str(wide), item_column="label")


def test_an_item_in_two_groups_is_refused_by_both_readers(tmp_path):
    path = write(tmp_path / "g.csv", "item_id,group_id,label,j1\n1,a,1,A\n2,c,0,B\n1,b,1,A\n")
    for reader in (load_panel, fio.read_panel):
        with pytest.raises(PanelError, match="item id '1' appears on lines 2 and 4 in groups 'a' and 'b'"):
            reader(str(path))


def _long_with_labels(tmp_path):
    rows = [["item_id", "judge", "output", "label"]]
    for i in range(6):
        for j in ("m1", "m2"):
            rows.append([f"i{i}", j, "AB"[(i + len(j)) % 2], str(i % 2)])
    write(tmp_path / "long.csv", csv_text(rows))
    return str(tmp_path / "long.csv")


def test_labels_file_naming_unknown_items_is_refused(tmp_path):
    path = _long_with_labels(tmp_path)
    write(tmp_path / "labels.csv", csv_text([["item_id", "label"], ["i1", "1"], ["I-2", "0"]]))
    with pytest.raises(PanelError, match=r"labels.csv names 1 item the panel does not have, first 'I-2'") as exc:
        load_panel(path, labels_path=str(tmp_path / "labels.csv"))
    assert exc.value.line == 3 and exc.value.column == "item_id"


def test_labels_file_disagreeing_with_the_panel_is_refused_and_agreeing_fills_in(tmp_path):
    path = _long_with_labels(tmp_path)
    write(tmp_path / "clash.csv", csv_text([["item_id", "label"], ["i1", "0"]]))    # i1 is 1 in the file
    with pytest.raises(PanelError, match="item 'i1' has label '1' in the panel file but '0'"):
        load_panel(path, labels_path=str(tmp_path / "clash.csv"))
    write(tmp_path / "same.csv", csv_text([["item_id", "label"], ["i1", "1"], ["i2", "0"]]))
    panel = load_panel(path, labels_path=str(tmp_path / "same.csv"))
    assert list(panel.labels) == [0.0, 1.0, 0.0, 1.0, 0.0, 1.0]


def test_parquet_with_two_same_named_columns_is_refused(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    n = 30
    table = pa.Table.from_arrays(
        [pa.array([f"i{i}" for i in range(n)]), pa.array([str(i % 2) for i in range(n)]),
         pa.array(["A"] * n), pa.array(["B"] * n)], names=["item_id", "label", "j1", "j1"])
    pq.write_table(table, tmp_path / "dup.parquet")
    with pytest.raises(PanelError, match="two columns named 'j1'"):
        load_panel(str(tmp_path / "dup.parquet"))


def test_jsonl_key_first_seen_late_is_kept(tmp_path):
    n = 25_000                      # past DuckDB's default schema sample of 20,480 lines
    with open(tmp_path / "late.jsonl", "w", encoding="utf-8") as fh:
        for i in range(n):
            rec = {"item_id": f"i{i}", "label": i % 2, "j1": "AB"[i % 2], "j2": "AB"[(i // 2) % 2]}
            if i == n - 1:
                rec["j3"] = "A"
            fh.write(json.dumps(rec) + "\n")
    panel = load_panel(str(tmp_path / "late.jsonl"))
    assert "j3" in panel.judge_names
