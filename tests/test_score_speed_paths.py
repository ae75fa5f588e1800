"""The fast paths of ``score`` give exactly what the general ones give (issue 13: score a
million rows in seconds).

* ``deploy.traffic.read_traffic`` (Arrow/DuckDB traffic reader) against ``load_panel``: the
  same judge columns, item ids and groups, or ``None`` (the panel reader then reads the
  file) on anything unusual;
* ``score`` end to end with the fast reader against ``score`` with it switched off: the
  same predictions file bytes, the same stderr and exit status, on a corpus of traffic
  files (missing, unseen and parse-error outputs, quoting, BOM and CRLF, groups, bad files);
* ``deploy.writer`` against ``predictions_csv`` (and so csv.writer), ``fixed6`` against
  Python's ``%.6f``;
* ``support.pattern_keys`` and ``RowSupport.missing_groups`` against their definitions;
* ``FCPSPredictor.score`` skipping pattern ids for families that never read them.
"""

import random

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pytest

import fcps_core.deploy.traffic as traffic_mod
from fcps_core.cli.main import main
from fcps_core.deploy.support import RowSupport, calibration_support, pattern_keys, predictions_csv
from fcps_core.deploy.traffic import read_traffic
from fcps_core.deploy.writer import fixed6, predictions_csv_bytes
from fcps_core.data.encoding import encode_panel, prefix_patterns
from fcps_core.families import PrefixFeatures, get_family
from fcps_core.ingest import load_panel
from fcps_core.deploy.predictor import FCPSPredictor

JUDGES = ["jp", "jb", "jr", "jc", "jk"]


def _calibration(tmp_path):
    rng = np.random.default_rng(0)
    n = 400
    rows = []
    for i in range(n):
        y = int(rng.random() < 0.5)
        rows.append([f"c{i}", str(y),
                     rng.choice(["A", "B", "tie", "parse_error"] if y else ["B", "A", "tie", "A"]),
                     rng.choice(["yes", "no", ""] if y else ["no", "no", "yes"]),
                     str(int(rng.integers(1, 6))),
                     f"{rng.normal(y, 1):.4f}",
                     rng.choice(["red", "green", "blue"])])
    path = tmp_path / "cal.csv"
    path.write_text("item_id,label," + ",".join(JUDGES) + "\n" + "\n".join(",".join(r) for r in rows) + "\n")
    return load_panel(str(path))


def _single(panel, judges, family):
    sub = panel.subset_judges(judges)
    fit_rows = np.arange(panel.n_rows)
    encoded = encode_panel(sub, fit_rows)
    X = PrefixFeatures(patterns=prefix_patterns(encoded.codes, encoded.alphabet_sizes), scores=encoded.scores)
    model = get_family(family)().fit(X, panel.labels)
    pred = FCPSPredictor.single(list(judges), encoded.encoders, family, model, metadata={"panel": "cal"})
    pred.support = calibration_support(panel, fit_rows, encoded.encoders)
    return pred


@pytest.fixture(scope="module")
def predictors(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("cal")
    panel = _calibration(tmp)
    out = {"table": _single(panel, ["jp", "jb"], "table"),
           "backoff": _single(panel, ["jp", "jb", "jk"], "backoff"),
           "logistic": _single(panel, JUDGES, "logistic"),
           "ds_jury": _single(panel, ["jp", "jb", "jr"], "ds_jury"),
           "residual": _single(panel, ["jp", "jc"], "residual")}
    members = [out["table"], out["logistic"]]
    avg = FCPSPredictor.average([m.models[0] for m in members], judges=list(JUDGES), metadata={"panel": "cal"})
    avg.support = calibration_support(panel, np.arange(panel.n_rows), avg.support_encoders())
    out["tie_average"] = avg
    paths = {}
    for name, pred in out.items():
        paths[name] = tmp / f"{name}.json"
        pred.save(str(paths[name]))
    return paths


def _traffic_rows(n=300, seed=1):
    rng = np.random.default_rng(seed)
    rows = []
    for i in range(n):
        rows.append([f"t{i}",
                     rng.choice(["A", "B", "tie", "parse_error", "", "NA", "a"]),   # 'a' read as 'A' (case)
                     rng.choice(["yes", "no", "", "maybe"]),                        # 'maybe' never seen
                     rng.choice(["1", "2", "3", "4", "5", "5.0", "", "7"]),
                     rng.choice([f"{rng.normal(0, 2):.3f}", "", "nan"]),
                     rng.choice(["red", "green", "blue", "purple", ""]),
                     rng.choice(["x", "y"])])                                      # a judge no predictor uses
    return rows


HEADER = ["item_id"] + JUDGES + ["extra"]


def _write(path, header=HEADER, rows=None, *, sep=",", end="\n", bom=False):
    rows = _traffic_rows() if rows is None else rows
    text = end.join([sep.join(header)] + [sep.join(r) for r in rows]) + end
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _score(capsys, monkeypatch, args, *, fast: bool):
    """(exit status, stdout, stderr, whether the fast reader read the file)."""
    used = []
    real = traffic_mod.read_traffic

    def spy(*a, **k):
        out = real(*a, **k) if fast else None
        used.append(out is not None)
        return out
    with monkeypatch.context() as m:
        m.setattr(traffic_mod, "read_traffic", spy)
        capsys.readouterr()
        rc = main([str(a) for a in args])
        out, err = capsys.readouterr()
    return rc, out, err, any(used)


def _both(tmp_path, capsys, monkeypatch, model, traffic, *extra, expect_fast=True):
    """Score with and without the fast reader; both results, after checking they agree."""
    results = []
    for fast in (True, False):
        out = tmp_path / f"pred-{fast}.csv"
        rc, stdout, err, used = _score(capsys, monkeypatch, ["score", model, traffic, "--out", out, "--force", *extra],
                                       fast=fast)
        results.append((rc, stdout, err, out.read_bytes() if out.exists() else None, used))
        if out.exists():
            out.unlink()
    (rc1, out1, err1, data1, used1), (rc2, out2, err2, data2, _) = results
    assert used1 == expect_fast
    assert (rc1, out1, err1) == (rc2, out2, err2)
    assert data1 == data2
    return rc1, err1, data1


@pytest.mark.parametrize("family", ["table", "backoff", "logistic", "ds_jury", "residual", "tie_average"])
def test_fast_score_writes_the_same_file_for_every_family(tmp_path, capsys, monkeypatch, predictors, family):
    traffic = _write(tmp_path / "traffic.csv")
    rc, err, data = _both(tmp_path, capsys, monkeypatch, predictors[family], traffic)
    # the CLI writes LF line ends (issue 29 item 6; the library writer's bytes stay CRLF)
    assert rc == 0 and data.startswith(b"item_id,prediction,N_z,in_support,missing_judges\n")
    assert data.count(b"\n") == 301 and b"\r" not in data and "outside calibration support" in err


def _variant_rows():
    rows = _traffic_rows(60, seed=3)
    quoted = [r[:] for r in rows]
    quoted[0][0] = '"t,0"'                       # an id that needs quoting in the output
    quoted[1][5] = '"re""d"'
    return rows, quoted


@pytest.mark.parametrize("case", ["crlf_bom", "quoted", "groups", "no_item_column", "collapse_ties",
                                  "stdout", "float_rubric", "unused_continuous"])
def test_fast_reader_cases_match_the_panel_reader(tmp_path, capsys, monkeypatch, predictors, case):
    rows, quoted = _variant_rows()
    extra = []
    header = HEADER
    if case == "crlf_bom":
        traffic = _write(tmp_path / "t.csv", rows=rows, end="\r\n", bom=True)
    elif case == "quoted":
        traffic = _write(tmp_path / "t.csv", rows=quoted)
    elif case == "groups":
        header = HEADER + ["group_id"]
        traffic = _write(tmp_path / "t.csv", header, [r + [("g%d" % (i % 7)) if i % 5 else ""]
                                                       for i, r in enumerate(rows)])
    elif case == "no_item_column":
        traffic = _write(tmp_path / "t.csv", HEADER[1:], [r[1:] for r in rows])
    elif case == "collapse_ties":
        traffic = _write(tmp_path / "t.csv", rows=rows)
        extra = ["--collapse-ties"]
    elif case == "float_rubric":
        traffic = _write(tmp_path / "t.csv", rows=[r[:3] + ["4.0"] + r[4:] for r in rows])
    elif case == "unused_continuous":
        traffic = _write(tmp_path / "t.csv", HEADER + ["score"], [r + [f"{i * 0.37:.2f}"] for i, r in enumerate(rows)])
    else:
        traffic = _write(tmp_path / "t.csv", rows=rows)
    for family in ("table", "logistic", "tie_average"):
        if case == "stdout":
            got = [_score(capsys, monkeypatch, ["score", predictors[family], traffic], fast=f) for f in (True, False)]
            assert got[0][3] and got[0][:3] == got[1][:3] and got[0][0] == 0
            continue
        rc, _, data = _both(tmp_path, capsys, monkeypatch, predictors[family], traffic, *extra)
        assert rc == 0
        if case == "quoted":
            assert b'"t,0",' in data


@pytest.mark.parametrize("case", ["label_column", "spaced_id", "repeated_id", "blank_id", "free_text_judge",
                                  "missing_judge", "lone_cr", "quoted_header", "semicolons", "tsv", "gz",
                                  "bad_rubric", "infinite_continuous", "ragged_row", "header_only", "judges_flag",
                                  "block_column", "long_layout", "empty_judge", "duplicate_header"])
def test_unusual_traffic_goes_to_the_panel_reader(tmp_path, capsys, monkeypatch, predictors, case):
    rows, _ = _variant_rows()
    extra = []
    name = "t.csv"
    header = HEADER
    if case == "label_column":
        header, rows = HEADER + ["label"], [r + ["1"] for r in rows]
    elif case == "spaced_id":
        rows[3][0] = " t3 "
    elif case == "repeated_id":
        rows[3][0] = rows[4][0]
    elif case == "blank_id":
        rows[5][0] = ""
    elif case == "free_text_judge":
        rows = _traffic_rows(1100, seed=4)
        for i, r in enumerate(rows):
            r[6] = f"free text {i}"
    elif case == "missing_judge":
        header, rows = [h for h in HEADER if h != "jb"], [[c for c, h in zip(r, HEADER) if h != "jb"] for r in rows]
    elif case == "bad_rubric":
        rows[7][3] = "lots"
    elif case == "infinite_continuous":
        rows[8][4] = "inf"
    elif case == "ragged_row":
        rows[9] = rows[9] + ["surplus"]
    elif case == "header_only":
        rows = []
    elif case == "judges_flag":
        extra = ["--judges", "jp", "jb"]
    elif case == "block_column":
        header, rows = HEADER + ["block"], [r + [""] for r in rows]
    elif case == "long_layout":
        header, rows = ["item_id", "judge", "output"], [[f"i{k}", j, "A"] for k in range(5) for j in ("jp", "jb")]
    elif case == "empty_judge":
        rows = [r[:6] + [""] for r in rows]
    elif case == "duplicate_header":
        header = HEADER[:-1] + ["jp"]
    if case == "lone_cr":
        traffic = _write(tmp_path / name, header, rows, end="\r")
    elif case == "quoted_header":
        traffic = _write(tmp_path / name, ['"item_id"'] + header[1:], rows)
    elif case == "semicolons":
        traffic = _write(tmp_path / name, header, rows, sep=";")
    elif case == "tsv":
        traffic = _write(tmp_path / "t.tsv", header, rows, sep="\t")
    elif case == "gz":
        import gzip
        plain = _write(tmp_path / name, header, rows)
        traffic = tmp_path / "t.csv.gz"
        traffic.write_bytes(gzip.compress(plain.read_bytes()))
    else:
        traffic = _write(tmp_path / name, header, rows)
    for family in ("table", "logistic"):
        # a bad value in a column the predictor does not score is no error: the table
        # predictor scores jp and jb only, and reads jr and jc as the panel reader would
        fast = family == "table" and case in ("bad_rubric", "infinite_continuous")
        rc, err, data = _both(tmp_path, capsys, monkeypatch, predictors[family], traffic, *extra, expect_fast=fast)
        if rc != 0:
            assert err.startswith("fcps: error: ") and data is None


def test_read_traffic_is_the_panel_readers_panel(tmp_path, predictors):
    pred = FCPSPredictor.load(str(predictors["tie_average"]))
    header = HEADER + ["group_id"]
    rows = [r + [f"g{i % 3}" if i % 4 else ""] for i, r in enumerate(_traffic_rows(500, seed=5))]
    path = _write(tmp_path / "t.csv", header, rows)
    fast = read_traffic(str(path), pred.judges, schema=pred.judge_schemas())
    ref = load_panel(str(path), schema=pred.judge_schemas(), require_labels=False)
    panel = fast.panel
    assert fast.item_ids.to_pylist() == list(ref.item_ids)
    assert list(panel.item_ids) == list(ref.item_ids) and list(panel.group_ids) == list(ref.group_ids)
    assert np.isnan(panel.labels).all() and panel.name == ref.name and panel.n_rows == ref.n_rows
    assert panel.judge_names == [j for j in ref.judge_names if j in pred.judges]
    for col in panel.judges:
        want = ref.judge(col.name)
        assert (col.schema, col.vocab, col.scalar_map, col.value_range, col.range_declared) == \
            (want.schema, want.vocab, want.scalar_map, want.value_range, want.range_declared)
        if want.codes is None:
            assert col.codes is None
        else:
            assert col.codes.dtype == want.codes.dtype and np.array_equal(col.codes, want.codes)
        if want.values is None:
            assert col.values is None
        else:
            assert np.array_equal(col.values, want.values, equal_nan=True)
    # and the predictor scores both alike
    p1, s1 = pred.score(panel)
    p2, s2 = pred.score(ref)
    assert np.array_equal(p1, p2) and np.array_equal(s1.N_z, s2.N_z)
    assert np.array_equal(s1.in_support, s2.in_support) and s1.missing_names() == s2.missing_names()


@pytest.mark.parametrize("ids", [
    ["a", "b c", "d"], ["a ", "b"], [" a", "b"], ["a\t"], ["\x1fa"], ["a\x0b"], ["é", "ü✓x"], ["a\xa0"],
    ["\u3000a"], ["\u2028"], ["x\u0085"], ["", "a"], ["ab", "é b", "\u00e9"], ["a\u200b"]])
def test_plain_ids_is_what_strip_leaves_alone(ids):
    from fcps_core.deploy.traffic import _plain_ids
    want = all(i and i == i.strip() for i in ids)
    arr = pa.array(ids, type=pa.string())
    assert _plain_ids(arr, pa, pc) == want
    assert _plain_ids(pa.array(["pad"] + ids, type=pa.string()).slice(1), pa, pc) == want


def test_fixed6_is_pythons_format():
    rng = np.random.default_rng(7)
    special = [0.0, 1.0, 0.5, 1 / 128, 3 / 128, 127 / 128, 0.0000005, 0.0000015, 0.9999995, 0.1234565,
               5e-7 - 1e-18, 5e-7 + 1e-18, 1e-300, 999.9999995, 0.30000000000000004]
    halves = [(k + 0.5) / 1e6 for k in range(0, 2000)]
    ties = [k / 128 for k in range(129)] + [k / 2 ** 20 for k in range(0, 2 ** 20, 997)]
    values = np.concatenate([rng.random(200_000), rng.random(1000) * 999, special, halves, ties,
                             np.nextafter(np.array(halves), 0), np.nextafter(np.array(halves), 1)])
    got = fixed6(values, pa, pc).to_pylist()
    assert got == [f"{v:.6f}" for v in values.tolist()]
    for bad in ([-0.0], [-1e-9], [np.nan], [np.inf], [1000.0]):
        assert fixed6(np.array(bad), pa, pc) is None


def _support(ids, judges, seed=0):
    rng = np.random.default_rng(seed)
    n = len(ids)
    missing = rng.random((n, len(judges))) < 0.3
    return RowSupport(codes=np.zeros((n, len(judges)), dtype=np.int64), N_z=rng.integers(0, 10**12, n),
                      in_range=np.ones(n, bool), in_support=rng.random(n) < 0.5, missing=missing,
                      parse_error=np.zeros((n, len(judges)), bool), judges=judges)


class _Panel:
    def __init__(self, ids):
        self.item_ids = np.array(ids, dtype=object)


@pytest.mark.parametrize("ids,judges", [
    ([f"i{k}" for k in range(500)], ["j1", "j2", "j3"]),
    (["a,1", 'b"q', "c", "d\ne"], ["j1", "j2"]),
    (["a", "b", "c"], ["j,1", "j2"]),
    (["é", "ü✓", "x"], ["jé", "j2"]),
    (["a", "b"], [f"j{k}" for k in range(70)]),
    (["only"], ["j1"]),
])
def test_writer_bytes_are_predictions_csv(ids, judges):
    preds = np.random.default_rng(1).random(len(ids))
    preds[0] = 0.0078125                         # a tie at six decimals
    panel = _Panel(ids)
    for support in (None, _support(ids, judges)):
        want = predictions_csv(panel, preds, support).encode("utf-8")
        assert predictions_csv_bytes(panel.item_ids, preds, support) == want
        assert predictions_csv_bytes(pa.array(ids, type=pa.string()), preds, support) == want
        assert predictions_csv_bytes(pa.chunked_array([pa.array(ids, type=pa.string())]), preds, support) == want
    weird = predictions_csv_bytes(panel.item_ids, -preds, None)       # negative: the text path
    assert weird == predictions_csv(panel, -preds, None).encode("utf-8")
    assert predictions_csv_bytes(np.array([], dtype=object), np.zeros(0), None) == b"item_id,prediction\r\n"


def test_writer_takes_non_string_ids_through_the_text_path():
    panel = _Panel([1, 2, 3])
    preds = np.array([0.1, 0.2, 0.3])
    assert predictions_csv_bytes(panel.item_ids, preds, None) == predictions_csv(panel, preds, None).encode()


def _reference_keys(codes, sizes):
    ids = prefix_patterns(np.where(codes < 0, sizes, codes), sizes + 1)[-1]
    if ids is not None:
        return ids
    flat = np.ascontiguousarray(codes)
    return flat.view(np.dtype((np.void, flat.dtype.itemsize * flat.shape[1]))).reshape(-1)


@pytest.mark.parametrize("sizes", [[3], [2, 5, 4], [7] * 10, [1000] * 6, [2 ** 40, 2 ** 30]])
def test_pattern_keys_are_the_last_prefix_ids(sizes):
    rng = np.random.default_rng(len(sizes))
    sizes = np.array(sizes, dtype=np.int64)
    codes = np.stack([rng.integers(-1, min(s, 10**6), 5000) for s in sizes], axis=1)
    got, want = pattern_keys(codes, sizes), _reference_keys(codes, sizes)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    assert np.array_equal(pattern_keys(np.zeros((4, 0), np.int64), np.zeros(0, np.int64)), np.zeros(4))


@pytest.mark.parametrize("width", [1, 3, 20, 21, 40, 62, 63, 90])
def test_missing_groups_join_each_rows_missing_judges(width):
    rng = np.random.default_rng(width)
    judges = [f"j{k}" for k in range(width)]
    n = 2000
    missing = rng.random((n, width)) < (3 / width)
    s = RowSupport(codes=np.zeros((n, width), np.int64), N_z=np.zeros(n, np.int64), in_range=np.ones(n, bool),
                   in_support=np.ones(n, bool), missing=missing, parse_error=np.zeros((n, width), bool),
                   judges=judges)
    want = [";".join(j for j, m in zip(judges, row) if m) for row in missing.tolist()]
    assert s.missing_names() == want
    texts, inverse = s.missing_groups()
    assert [texts[i] for i in inverse.tolist()] == want and len(set(texts)) == len(texts)


def test_scalar_families_score_without_pattern_ids(tmp_path, predictors, monkeypatch):
    """A logistic predictor never computes the joint-pattern ids it does not read; a table does."""
    import fcps_core.deploy.predictor as predictor_mod
    calls = []
    real = predictor_mod.prefix_patterns
    monkeypatch.setattr(predictor_mod, "prefix_patterns", lambda *a: calls.append(1) or real(*a))
    path = _write(tmp_path / "t.csv")
    for family, expected in (("logistic", 0), ("ds_jury", 0), ("table", 1)):
        pred = FCPSPredictor.load(str(predictors[family]))
        panel = load_panel(str(path), schema=pred.judge_schemas(), require_labels=False)
        calls.clear()
        p, _ = pred.score(panel)
        assert len(calls) == expected
        X = pred.models[0].features(pred.read_outputs(panel)[0])       # 'a' read as 'A', as score reads it
        assert np.array_equal(p, pred.models[0].model.predict(X))        # the full features, same predictions


def test_random_small_traffic_round_trips(tmp_path, capsys, monkeypatch, predictors):
    """Random mixtures of cell values through both readers and writers."""
    rnd = random.Random(11)
    tokens = ["A", "B", "tie", "", "NA", "none", "yes", "no", "1", "2", "5", "0.25", "-3", "red", "x y", "é"]
    for trial in range(6):
        rows = [[f"r{trial}-{i}"] + [rnd.choice(tokens) for _ in range(6)] for i in range(rnd.randint(1, 40))]
        path = _write(tmp_path / "t.csv", rows=rows)
        for family in ("table", "logistic", "ds_jury"):
            _both(tmp_path, capsys, monkeypatch, predictors[family], path,
                  expect_fast=_expected_fast(path, predictors[family]))


def _expected_fast(path, model):
    pred = FCPSPredictor.load(str(model))
    try:
        load_panel(str(path), schema=pred.judge_schemas(), require_labels=False)
    except Exception:
        return False
    return read_traffic(str(path), pred.judges, schema=pred.judge_schemas()) is not None


def test_predictions_stdout_is_text(capsys, monkeypatch, tmp_path, predictors):
    path = _write(tmp_path / "t.csv")
    rc, out, err, used = _score(capsys, monkeypatch, ["score", predictors["table"], path, "--quiet"], fast=True)
    assert rc == 0 and used and err == ""
    assert out.startswith("item_id,prediction,N_z,in_support,missing_judges\n") and "\r" not in out
