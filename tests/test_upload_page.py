"""AppTest of the upload page: it says how labels and judge outputs were read and lets the
user change it; its errors name the user's file and the page's controls (never CLI flags);
"replace the stored panel" is a control; mixed-type outputs display without an Arrow fix-up.
Plus the library hooks behind it (label word mapping, its report, the page wording)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from app_helpers import by_label, help_problems, seeded_app_store

APP = str(Path(__file__).resolve().parent.parent / "app.py")
TIMEOUT = 300


@pytest.fixture(scope="module", autouse=True)
def seeded_store(tmp_path_factory):
    yield from seeded_app_store(tmp_path_factory)


def upload(name: str, data: bytes) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at.switch_page("app_pages/upload.py").run()
    assert not at.exception, at.exception
    at.file_uploader[0].set_value((name, data, "text/csv")).run()
    assert not at.exception, at.exception
    return at


def csv(rows: int = 60, labels=("good", "bad"), *, judges=("j1",), judge_out=None, extra: str = "") -> bytes:
    """A wide panel: labels cycle through ``labels`` (every 7th row 'n/a'), groups of two."""
    lines = ["item_id,group_id,label," + ",".join(judges) + ("," + extra if extra else "")]
    for i in range(rows):
        y = "n/a" if i % 7 == 6 else labels[i % len(labels)]
        outs = [judge_out(i, k) if judge_out else labels[(i + (i % 5 == 0)) % len(labels)]
                for k in range(len(judges))]
        lines.append(f"it{i},g{i // 2},{y}," + ",".join(outs))
    return ("\n".join(lines) + "\n").encode()


def shown(markdown: str) -> str:
    """Markdown text as the reader sees it: the page escapes every user string
    (fcps_app.common.md: backslashes before punctuation, a word joiner after colons)."""
    return re.sub(r"\\(.)", r"\1", markdown).replace("\u2060", "")


def mapping(at: AppTest) -> str:
    found = [shown(i.value) for i in at.info if shown(i.value).startswith("Labels:")]
    assert len(found) == 1, [i.value for i in at.info]
    return found[0]


def judge_outputs(at: AppTest) -> str:
    found = [shown(m.value) for m in at.markdown if m.value.startswith("**Judge outputs**")]
    assert len(found) == 1
    return found[0]


def used_panel(at: AppTest, name: str):
    """The panel other pages get for this upload ('Use this panel')."""
    by_label(at.text_input, "Name").set_value(name)
    by_label(at.button, "Use this panel").click().run()
    assert not at.exception, at.exception
    filename, data, options_json = at.session_state["uploads"][name]
    from fcps_app.common import load_bytes
    return load_bytes(filename, data, options_json), json.loads(options_json)


# -- label mapping shown and changeable -----------------------------------------------------------

def test_good_bad_labels_are_shown_mapped_and_the_control_swaps_them():
    at = upload("verdicts.csv", csv())
    assert not at.error, [e.value for e in at.error]
    text = mapping(at)
    assert "Labels: 'good' -> 1 (26 rows), 'bad' -> 0 (26 rows); 'n/a' -> unlabelled (8 rows)." == text
    assert "- j1 (binary): 'good' -> 1, 'bad' -> 0" in judge_outputs(at)
    box = by_label(at.multiselect, "label texts that mean 1")
    assert box.value == ["good"] and sorted(box.options) == ["bad", "good"]
    box.set_value(["bad"]).run()
    assert not at.exception and not at.error, (at.exception, [e.value for e in at.error])
    text = mapping(at)
    assert "'bad' -> 1 (26 rows) [declared], 'good' -> 0 (26 rows) [declared]" in text
    # the judges answering good/bad follow the labels (unless unticked)
    assert "- j1 (binary): 'bad' -> 1, 'good' -> 0" in judge_outputs(at)
    panel, options = used_panel(at, "swapped")
    assert options["label_map"] == {"bad": 1.0, "good": 0.0}
    assert panel.labels[:4].tolist() == [0.0, 1.0, 0.0, 1.0] and panel.n_labelled == 52
    assert panel.judges[0].scalar_map["bad"] == 1.0
    by_label(at.checkbox, "read judge outputs with the same words").uncheck().run()
    assert "- j1 (binary): 'good' -> 1, 'bad' -> 0" in judge_outputs(at)


def test_the_label_range_control_rescales_rubric_labels():
    at = upload("rubric.csv", csv(labels=("1", "2", "3", "4", "5"), judge_out=lambda i, k: "AB"[i % 2]))
    assert "range inferred from the data [1, 5]" in mapping(at)
    by_label(at.text_input, "label range").set_value("0,10").run()
    assert not at.exception and not at.error
    assert "declared range [0, 10]" in mapping(at)
    panel, options = used_panel(at, "rubric10")
    assert options["label_range"] == [0.0, 10.0]
    assert np.nanmax(panel.labels) == pytest.approx(0.5) and np.nanmin(panel.labels) == pytest.approx(0.1)


def test_a_lone_outlier_label_names_the_label_range_control_and_it_fixes_it():
    labels = ["0", "1"] * 30
    labels[8] = "10"
    data = ("item_id,label,j1\n" + "".join(f"i{i},{y},{'AB'[i % 2]}\n" for i, y in enumerate(labels))).encode()
    at = upload("ten.csv", data)
    assert len(at.error) == 1
    msg = shown(at.error[0].value)
    assert msg.startswith("ten.csv line 10") and "the 'label range' control" in msg and "--" not in msg
    by_label(at.text_input, "label range").set_value("0,10").run()
    assert not at.error and not at.exception
    assert "declared range [0, 10]" in mapping(at)


def test_unknown_label_words_are_declared_on_the_page():
    at = upload("spam.csv", csv(labels=("spam", "ham")))
    assert len(at.error) == 1 and "Other label words" in at.error[0].value
    assert shown(at.error[0].value).startswith("spam.csv") and "--" not in shown(at.error[0].value)
    by_label(at.text_input, "texts that mean 1").set_value("spam").run()
    by_label(at.text_input, "texts that mean 0").set_value("Ham").run()
    assert not at.error and not at.exception, [e.value for e in at.error]
    assert "'spam' -> 1 (26 rows) [declared]" in mapping(at) and "'ham' -> 0 (26 rows) [declared]" in mapping(at)


# -- errors name the file and the page's controls --------------------------------------------------

@pytest.mark.parametrize("data", [b"", b"item_id,label,j1\n"])
def test_an_empty_upload_is_named_by_its_file_name(data):
    at = upload("my panel.csv", data)
    assert len(at.error) == 1
    msg = shown(at.error[0].value)
    assert msg.startswith("my panel.csv") and not re.search(r"[0-9a-f]{32}", msg), msg


def test_a_detected_delimiter_is_used_and_said_and_a_stated_one_is_kept():
    """issue 26: a ';' file is read with ';' and the page says so; the delimiter control
    set to ',' (stated, not detected) is kept, and the refusal names the control."""
    data = csv().replace(b",", b";")
    at = upload("semi.csv", data)
    assert not at.error and not at.exception
    assert shown(at.success[0].value).startswith("semi.csv: 60 rows")
    assert [shown(i.value) for i in at.info][0] == (
        "read as ';'-delimited: its first lines split into 4 columns by ';' and into one by ',' (set the "
        "'delimiter' control to choose another)")
    by_label(at.selectbox, "delimiter").set_value(",").run()
    assert len(at.error) == 1
    msg = shown(at.error[0].value)
    assert msg.startswith("semi.csv") and "set the 'delimiter' control to ';'" in msg and "--" not in msg


def test_decimal_commas_are_read_said_and_the_decimal_control_states_the_mark():
    lines = ["item_id;group_id;label;score;verdict"]
    lines += [f"i{k};g{k // 2};{k % 2};{k % 10},{k % 7}5;{'AB'[k % 2]}" for k in range(60)]
    at = upload("euro.csv", ("\n".join(lines) + "\n").encode())
    assert not at.error and not at.exception, [e.value for e in at.error]
    notes = [shown(i.value) for i in at.info]
    assert notes[1] == ("decimal commas read as numbers in column 'score' ('0,05' -> 0.05) (detected: set the "
                        "'decimal mark' control to . if the comma means something else)")
    schemas = dict(zip(at.dataframe[-1].value["judge"], at.dataframe[-1].value["schema"]))
    assert schemas == {"score": "continuous", "verdict": "pairwise"}
    by_label(at.selectbox, "decimal mark").set_value(".").run()
    assert not at.error and not at.exception
    warning = [shown(w.value) for w in at.warning]
    assert warning == ["column 'score' holds numbers written with a comma ('0,05'), read as text (the decimal mark "
                       "is '.'): set the 'decimal mark' control to ',' if the comma is the decimal mark"]
    assert dict(zip(at.dataframe[-1].value["judge"], at.dataframe[-1].value["schema"]))["score"] == "categorical"


def test_a_constant_judge_and_a_second_label_column_are_named_on_the_page():
    at = upload("flat.csv", csv(judges=("j1", "always"), judge_out=lambda i, k: ["good", "bad"][i % 2] if k == 0
                                else "good"))
    assert [shown(w.value) for w in at.warning] == [
        "judge 'always' ('good') gives the same output on every row with an output: it carries no information "
        "(check the column, or leave it out with the 'Judge columns' control)"]
    at = upload("leak.csv", csv(judges=("j1", "LABEL"), judge_out=lambda i, k: "good"))
    assert len(at.error) == 1
    msg = shown(at.error[0].value)
    assert msg.startswith("leak.csv: judge 'LABEL' is named like the label column 'label'"), msg
    assert "name the judges with the 'Judge columns' control" in msg and "--" not in msg


def test_replacing_a_stored_panel_is_a_page_control(seeded_store):
    from fcps_core.store import Store
    at = upload("twice.csv", csv())
    by_label(at.text_input, "Name").set_value("twice")
    by_label(at.button, "Save to the store").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    first = Store(seeded_store).panel_info("twice")["created_at"]
    by_label(at.button, "Save to the store").click().run()
    assert len(at.error) == 1
    msg = shown(at.error[0].value)
    assert msg.startswith("twice.csv") and "already exists" in msg
    assert "tick 'Replace the stored panel of this name'" in msg and "--replace" not in msg
    by_label(at.checkbox, "Replace the stored panel of this name").check().run()
    by_label(at.button, "Save to the store").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert Store(seeded_store).panel_info("twice")["created_at"] > first


# -- mixed-type outputs: no Arrow fix-up (its traceback goes to the server log) -----------------------

def test_mixed_type_outputs_display_without_an_arrow_fixup(monkeypatch):
    import streamlit.dataframe_util as du
    fixed = []
    real = du.fix_arrow_incompatible_column_types
    monkeypatch.setattr(du, "fix_arrow_incompatible_column_types",
                        lambda df, *a, **k: fixed.append(list(df.columns)) or real(df, *a, **k))

    def out(i, k):
        return [str(1 + i % 2), "A"][i % 3 == 0] if k == 0 else f"{(i * 37 % 100) / 100:.2f}"
    at = upload("mixed-types.csv", csv(judges=("mixed", "score"), judge_out=out))
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert help_problems(at) == []
    schemas = dict(zip(at.dataframe[-1].value["judge"], at.dataframe[-1].value["schema"]))
    assert schemas == {"mixed": "categorical", "score": "continuous"}
    assert fixed == []


# -- library hooks ---------------------------------------------------------------------------------

def test_label_map_and_its_report():
    from fcps_core.ingest import build_panel
    from fcps_core.data.labels import mapping_sentence
    from fcps_core.errors import PanelError
    cols = {"item_id": [str(i) for i in range(6)], "label": ["Good", "bad", "", "n/a", "good", "meh"],
            "j1": ["good", "bad"] * 3}
    with pytest.raises(PanelError, match="cannot be mapped"):
        build_panel(cols)
    panel = build_panel(cols, label_map={"meh": None, "GOOD": 0, "bad": 1}, output_map={"good": 0, "bad": 1})
    assert np.isnan(panel.labels[[2, 3, 5]]).all() and panel.labels[[0, 1, 4]].tolist() == [0.0, 1.0, 0.0]
    assert panel.judges[0].scalar_map == {"bad": 1.0, "good": 0.0}
    assert "label words declared" in panel.label_note
    text = mapping_sentence(panel.label_mapping)
    assert "'meh' -> unlabelled (1 row)" in text and "empty -> unlabelled (1 row)" in text
    with pytest.raises(PanelError, match="not a number in"):
        build_panel(cols, label_map={"meh": 2})


def test_page_wording_swaps_flags_for_controls():
    from fcps_core.ingest import page_wording
    controls = {"label_range": "the 'label range' control", "replace": "tick 'Replace'",
                "delimiter": "the 'delimiter' control"}
    assert page_wording("x (fix that row, or pass --label-range LO,HI to declare the scale)", controls) == \
        "x (fix that row, or set the 'label range' control to declare the scale)"
    assert page_wording("choose another name, or replace it (import --replace)", controls) == \
        "choose another name, or replace it (tick 'Replace')"
    assert page_wording("looks tab-delimited: pass --delimiter $'\\t'", controls) == \
        "looks tab-delimited: set the 'delimiter' control to tab"
    assert "--max-rows" not in page_wording("raise the limit with --max-rows", controls)
    assert page_wording("written by select --save-model", controls) == "written by select --save-model"


def test_a_one_score_rubric_judge_is_not_said_to_divide_by_zero(tmp_path):
    """Walk 2 (rubric_40x300.d2's rub24, 5 on every row): the Upload page said "rub24 (rubric):
    scores 5 -> (x - 5) / 0, observed range [5, 5]", a division by zero; the encoding gives such a
    judge 1/2 on every row (fcps_core.data.encoding). Said so."""
    from fcps_core.ingest.load import load_panel
    from fcps_core.ingest.mapping import output_mapping
    path = tmp_path / "rubric.csv"
    rows = ["item_id,label,r1,r2"] + [f"i{i},{i % 5 + 1},{i % 5 + 1},5" for i in range(40)]
    path.write_text("\n".join(rows) + "\n")
    panel = load_panel(str(path), schema="rubric")
    said = {j.name: output_mapping(j) for j in panel.judges}
    assert "/ 0" not in said["r2"]
    assert said["r2"].startswith("scores 5 -> 1/2 (one score observed: no range to scale by)")
    assert said["r1"].startswith("scores 1, 2, 3, 4, 5 -> (x - 1) / 4, observed range [1, 5]")
