"""Issue 24 walk 2: what people read says "1 judge" / "3 judges", never "3 judge(s)", in the
dashboard, the reports and the figures (the answer said "has 3 judge(s)", the frontier legend
"5 judge(s) used (limit k 6)", the Judges page "over 9 judge(s)"); and the plain names of
families and path rules (fcps_core.reports.names) are checked against hand-written words."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
#: everything people read: the pages, the reports and figures, the CLI and every message the
#: package raises or warns with (readers, deploy, planning, store, service, paper)
SHOWN = [ROOT / "app_pages", ROOT / "fcps_app", ROOT / "fcps_core"]


def _literals(path: Path) -> list[str]:
    """The string pieces of ``path`` (f-string parts included), docstrings left out."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docs = {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
            and node.body and isinstance(node.body[0], ast.Expr)}
    return [n.value for n in ast.walk(tree)
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs]


def test_no_user_string_says_judge_s():
    """Nor "candidate(s)" (the costs caption), any other "noun(s)" ("pattern(s)", "pair(s)",
    "label(s)": count_of says it) or the guard's internal "one_se" (review)."""
    import re
    found = {str(p.relative_to(ROOT)): [s for s in _literals(p)
                                        if re.search(r"[a-z]\(s\)", s) or "guard one_se" in s]
             for top in SHOWN for p in sorted(top.rglob("*.py"))}
    assert {k: v for k, v in found.items() if v} == {}


def test_plain_names_of_families_and_paths():
    from fcps_core.reports.names import family_name, judges_count, parameters_text, path_name
    from fcps_core.reports.names import count_of
    assert (count_of(1, "pattern"), count_of(1204, "pattern"), count_of(0, "pair")) == \
        ("1 pattern", "1,204 patterns", "0 pairs")
    assert count_of(2, "new label") == "2 new labels" and count_of(3, "wolf", "wolves") == "3 wolves"
    assert judges_count(1) == "1 judge" and judges_count(3) == "3 judges"
    from fcps_core.reports.names import estimate_name      # one name of the estimate everywhere
    assert (estimate_name("mse"), estimate_name(None), estimate_name("nll")) == \
        ("MSE on new items", "MSE on new items", "NLL on new items")
    import numpy as np
    assert (count_of(np.int64(1204), "row"), count_of(2.0, "label"), count_of(1.5, "label")) == \
        ("1,204 rows", "2 labels", "1.5 labels")
    assert family_name("ridge_iso") == "ridge + isotonic"
    assert family_name("mean_iso") == "mean vote + isotonic"      # the fixed recipe's own label
    assert family_name("ds_jury") == "Dawid-Skene jury"
    assert family_name("tie_average") == "tie_average"            # not a family: unchanged
    assert path_name("info_first") == "best single judge first"
    assert path_name("complexity_penalized") == "greedy, complexity-penalised"
    assert path_name("fixed:my path") == "fixed:my path"
    assert parameters_text({"base": "one_coin_iso", "shrinkage": 8.0}) == \
        "base=one-coin reliability + isotonic, shrinkage=8.0"
    assert parameters_text({}) == "-"
    assert (judges_count(1), judges_count(3)) == ("1 judge", "3 judges")
