"""The families' prediction halves (``families.fitted``) and the light scoring path (issue
13: ``score`` a million rows in under 3 s, a second of which was importing scikit-learn).

* every family's model class, loaded from an estimator's state, predicts bit for bit what
  the estimator predicts, and gives the same state back;
* a predictor file loads into the model classes, and scores as the estimators do;
* ``score`` (and ``python -m fcps_core --help``) run without importing scikit-learn,
  SciPy or pandas; a selection imports SciPy (the check can fail) but not scikit-learn,
  in its main process or in the fold worker processes of ``select --json`` (issue 25);
* the Arrow helpers equal ``pyarrow.array``; the reader's dict factorizer equals pandas'.
"""

import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from fcps_core.deploy.arrow import flags, integer_view, numbers, string_scalar, strings
from fcps_core.data.encoding import prefix_patterns
from fcps_core.errors import MenuError
from fcps_core.families import FAMILIES, FITTED, REGISTRY, PrefixFeatures, fitted_family, get_family
from fcps_core.families.fitted import FittedModel
from fcps_core.ingest.build import factorize_values

ROOT = Path(__file__).resolve().parent.parent


def _data(n=300, K=4, seed=0):
    rng = np.random.default_rng(seed)
    codes = rng.integers(0, 3, size=(n, K))
    y = ((codes[:, 0] + (codes[:, 1] == codes[:, 2])) >= 2).astype(float)
    flip = rng.random(n) < 0.2
    y[flip] = 1 - y[flip]
    X = PrefixFeatures(patterns=prefix_patterns(codes, np.full(K, 3)), scores=codes / 2.0)
    return X, y


SETTINGS = {"table": [{}, {"fallback": "lower_prefix", "alpha": 2.0}], "backoff": [{"shrinkage": 4.0}],
            "residual": [{"base": b} for b in ("mean_iso", "one_coin_iso", "ridge_iso", "logistic")]}


@pytest.mark.parametrize("family", FAMILIES)
def test_model_class_predicts_what_the_estimator_predicts(family):
    X, y = _data()
    new = _data(n=200, seed=1)[0]        # rows the fit never saw (unseen patterns included)
    for params in SETTINGS.get(family, [{}]):
        est = REGISTRY[family](**params).fit(X, y, X if REGISTRY[family].uses_unlabelled else None)
        state = json.loads(json.dumps(est.get_state()))          # through JSON, as in a file
        model = FITTED[family].from_state(state)
        assert type(model) is FITTED[family] and isinstance(est, FITTED[family])
        assert not hasattr(model, "get_params")                   # no scikit-learn in it
        for rows in (X, new):
            np.testing.assert_array_equal(model.predict(rows), est.predict(rows))
        assert json.loads(json.dumps(model.get_state())) == state
        assert model.get_state()["params"] == est.get_params(deep=False)


def test_model_classes_carry_the_family_kinds():
    assert list(FITTED) == list(REGISTRY) == list(FAMILIES)
    for name, est in REGISTRY.items():
        model = FITTED[name]
        assert issubclass(model, FittedModel) and model.name == est.name == name
        for kind in ("table_like", "needs_patterns", "pairwise"):
            assert getattr(model, kind) == getattr(est, kind)
        assert get_family(name) is est and fitted_family(name) is model


def test_unknown_family_is_one_error_for_both_lookups():
    for lookup in (get_family, fitted_family):
        with pytest.raises(MenuError, match="unknown family 'tabel'; use table, backoff"):
            lookup("tabel")


@pytest.mark.parametrize("family", ["table", "residual"])
def test_model_class_validates_parameters_on_load(family):
    X, y = _data()
    state = REGISTRY[family]().fit(X, y).get_state()
    key = {"table": "fallback", "residual": "base"}[family]
    state["params"][key] = "nonsense"
    for cls in (FITTED[family], REGISTRY[family]):
        with pytest.raises(ValueError):
            cls.from_state(state)


def _child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it prints a JSON object."""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=300, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"})
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


HEAVY = ("sklearn", "scipy", "pandas")


def test_score_never_imports_scikit_learn_scipy_or_pandas(tmp_path):
    from fcps_core import make_blocks, select
    from fcps_core.paper.synthetic import make_regime
    from fcps_core.files.csv_writer import write_wide_csv
    panel = make_regime("mixed", rows=600, judges=4, seed=0)
    result = select(panel, make_blocks(panel, split="1:2:1:1", seed=0), families=["table", "logistic", "ds_jury"],
                    paths=["info_first"], protocol="split", choice="tie_average")
    model = tmp_path / "p.json"
    result.predictor().save(str(model))
    labelled = tmp_path / "labelled.csv"
    write_wide_csv(make_regime("mixed", rows=300, judges=4, seed=5), str(labelled))
    traffic = tmp_path / "traffic.csv"           # unlabelled traffic: ids and judge outputs
    lines = [line.split(",") for line in labelled.read_text().splitlines()]
    keep = [i for i, h in enumerate(lines[0]) if h not in ("group_id", "label")]
    traffic.write_text("\n".join(",".join(row[i] for i in keep) for row in lines) + "\n")
    out = tmp_path / "pred.csv"
    code = f"""
import json, sys
from fcps_core.cli.main import main
rc = main(["score", {str(model)!r}, {str(traffic)!r}, "--out", {str(out)!r}, "--quiet"])
print(json.dumps({{"rc": rc, "loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    got = _child(code)
    assert got == {"rc": 0, "loaded": []}
    assert out.read_text().startswith("item_id,prediction,N_z,in_support,missing_judges")
    # the same check sees a selection's imports (it can fail): SciPy, never scikit-learn
    code = f"""
import json, sys
from fcps_core import make_blocks, read_panel, select
panel = read_panel({str(labelled)!r})
select(panel, make_blocks(panel, split="1:2:1:1", seed=0), families=["logistic"], paths=["info_first"],
       protocol="split")
print(json.dumps({{"loaded": [m for m in {HEAVY!r} if m in sys.modules]}}))
"""
    loaded = _child(code)["loaded"]
    assert "scipy" in loaded and "sklearn" not in loaded


def test_default_selection_never_imports_scikit_learn_in_any_process():
    """``select --json`` with its default (cross-fitted) protocol on LLMBar runs its folds in
    joblib worker processes (every core: 838 rows x 65 judges is a large panel); afterwards
    the same reused workers (same ``n_jobs``) report their modules. Those that ran selection
    tasks (the engine is loaded) and the main process have not imported scikit-learn (nor
    SciPy's statistics). Before issue 25 all of them had."""
    code = f"""
import contextlib, io, json, sys, time
from joblib import Parallel, delayed
from fcps_core.cli.main import main

def modules():
    import os, sys, time
    time.sleep(0.3)                     # every worker takes a probe
    return {{"pid": os.getpid(), "engine": "fcps_core.selection.crossfit" in sys.modules,
            "loaded": [m for m in ("sklearn", "scipy.stats") if m in sys.modules]}}

out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(["select", "data/llmbar.csv", "--seed", "0", "--quiet", "--json"])
report = json.loads(out.getvalue())
main_loaded = [m for m in ("sklearn", "scipy.stats") if m in sys.modules]
workers = Parallel(n_jobs=-1)(delayed(modules)() for _ in range(4))   # the selection's n_jobs
print(json.dumps({{"rc": rc, "protocol": report["protocol"], "main": main_loaded, "workers": workers}}))
"""
    got = _child(code)
    assert got["rc"] == 0 and got["protocol"] == "crossfit" and got["main"] == []
    ran = [w for w in got["workers"] if w["engine"]]      # (on many cores a worker may have had no fold)
    assert ran and all(w["loaded"] == [] for w in ran), got["workers"]


def test_help_and_package_import_stay_light():
    code = f"""
import json, sys, contextlib, io
import fcps_core
from fcps_core.cli.main import build_parser
with contextlib.redirect_stdout(io.StringIO()):
    try:
        build_parser().parse_args(["--help"])
    except SystemExit:
        pass
print(json.dumps({{"loaded": [m for m in {HEAVY!r} if m in sys.modules], "version": fcps_core.__version__}}))
"""
    got = _child(code)
    assert got["loaded"] == [] and got["version"]


def test_package_names_load_on_first_use():
    import fcps_core
    assert fcps_core.read_panel is fcps_core.load_panel
    assert fcps_core.REGISTRY is REGISTRY and fcps_core.FAMILIES == FAMILIES
    assert set(fcps_core.__all__) <= set(dir(fcps_core))
    with pytest.raises(AttributeError):
        fcps_core.no_such_name


def test_arrow_helpers_equal_pyarrow():
    ints = np.array([0, -3, 2**40, 7], dtype=np.int64)
    assert numbers(ints).equals(pa.array(ints))
    floats = np.array([0.5, -1.25, 1e300])
    assert numbers(floats).equals(pa.array(floats))
    assert numbers(ints[::2]).equals(pa.array(ints[::2]))          # a strided view is copied
    words = ["", "a", "é,x", "tie\r\n", "長い"]
    assert strings(words).equals(pa.array(words, type=pa.string()))
    assert strings([]).equals(pa.array([], type=pa.string()))
    assert string_scalar(",").equals(pa.scalar(",", type=pa.string()))
    mask = np.array([True, False, False, True])
    assert flags(mask).equals(pa.array(["1", "0", "0", "1"], type=pa.string()))
    encoded = pa.array(["x", "y", "x", "z", "y"]).dictionary_encode()
    sliced = encoded.indices.slice(1, 3)
    np.testing.assert_array_equal(integer_view(sliced), sliced.to_numpy())


def test_dict_factorizer_equals_pandas():
    rng = np.random.default_rng(3)
    pool = np.array(["A", "B", "tie", "", " a ", "é", "1", "1.0", "NaN"], dtype=object)
    for _ in range(100):
        raw = rng.choice(pool, size=int(rng.integers(0, 40)))
        codes, uniques, first = factorize_values(raw)
        want, want_u = pd.factorize(np.asarray(raw, dtype=object), use_na_sentinel=False)
        assert codes.dtype == want.dtype
        np.testing.assert_array_equal(codes, want)
        assert list(uniques) == list(want_u)
        for k, u in enumerate(uniques):
            assert first[k] == list(raw).index(u)
    # missing values still go through pandas (grouped as one value)
    codes, uniques, _ = factorize_values(np.array(["a", None, np.nan, "a"], dtype=object))
    assert list(codes) == list(pd.factorize(np.array(["a", None, np.nan, "a"], dtype=object),
                                            use_na_sentinel=False)[0])
