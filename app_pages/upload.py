import hashlib
import json
from pathlib import Path

import pandas as pd
import streamlit as st

from fcps_core.errors import FCPSError
from fcps_core.service.parsers import parse_range as read_range
from fcps_core.service.upload import (UPLOAD_SUFFIXES, detect_layout, judge_mappings, map_labels, mapping_sentence,
                                      page_wording, preview_upload, shown_name)
from fcps_app.common import get_store, import_upload, load_bytes, md, page_link
from fcps_app.glossary import table

REPLACE = "Replace the stored panel of this name"
# The page control that sets each import option (errors written for the command line name
# flags; fcps_core.ingest.page_wording swaps each flag for its control here).
CONTROLS = {"label_range": "the 'label range' control", "judge_range": "the 'judge rubric range' control",
            "label_column": "the 'label column' control", "item_column": "the 'item id column' control",
            "group_column": "the 'group column' control", "block_column": "the 'block column' control",
            "judge_column": "the 'judge name column' control", "output_column": "the 'output column' control",
            "judges": "the 'Judge columns' control", "schema": "the 'Judge schema' control",
            "delimiter": "the 'delimiter' control", "fmt": "the 'format' control",
            "decimal": "the 'decimal mark' control",
            "layout": "the 'Layout' control", "replace": f"tick '{REPLACE}'"}
WORDS_HELP = "Comma-separated label texts (case does not matter), e.g. spam, junk"

st.title("Upload a panel")
st.markdown("Wide files: one row per item, one column per judge. Long files: one row per (item, judge) "
            "with an `output` column. Labels may be numbers in [0,1], A/B preferences, verdict words "
            "(good/bad, correct/incorrect, ...) or integer rubric scores; judge outputs may also be ordered "
            "pairwise verdicts (A>>B, A>B, A=B, B>A, B>>A). Rows without a label are unlabelled "
            "traffic. Before anything is stored the page says how every label and judge output was read, "
            "and lets you change it.")
#: the file types the reader accepts (fcps_core.ingest.files.UPLOAD_SUFFIXES: .tab, .txt, .pq, .ndjson ...)
UPLOAD_TYPES = sorted({suffix.rsplit(".", 1)[-1] for suffix in UPLOAD_SUFFIXES})
up = st.file_uploader("Panel file (CSV, TSV/.tab, Parquet or JSON Lines; optionally .gz)", type=UPLOAD_TYPES)
if up is None:
    st.stop()
data = up.getvalue()
shown = shown_name(Path(up.name).name)      # how every error names the file (never its stored copy)
file_key = hashlib.sha256(data).hexdigest()[:12]


def fail(exc: FCPSError, *, stop: bool = True) -> None:
    """The error in the page's words, naming the uploaded file (escaped: it quotes the
    file's name, columns and cells)."""
    msg = page_wording(str(exc), CONTROLS).replace("\n", " ")
    if "cannot be mapped to [0,1]" in msg:
        msg += "; or declare the word under 'Other label words'"
    if not msg.startswith(shown):
        msg = f"{shown}: {msg}"
    st.error(md(msg))
    if stop:
        st.stop()


def say(notes, warnings) -> None:
    """How the file was read (a detected delimiter, decimal commas) and what no selection
    can use (a constant label or judge), in the page's words and escaped."""
    for note in notes:
        st.info(md(page_wording(note, CONTROLS)))
    for warning in warnings:
        st.warning(md(page_wording(warning, CONTROLS)))


def parse_range(text: str, flag: str):
    """'1,5' -> (1.0, 5.0) (';' separates too); empty (or not a range: said in the words of
    the control setting ``flag``, and ignored) -> None."""
    text = text.strip()
    if not text:
        return None
    try:
        return read_range(text.replace(";", ","), flag)
    except FCPSError as exc:
        fail(FCPSError(f"{exc}; it is ignored until then"), stop=False)
        return None


def words(text: str) -> list[str]:
    return [w.strip() for w in text.split(",") if w.strip()]


@st.cache_data(show_spinner="Reading upload...", max_entries=8)
def file_preview(name: str, data: bytes, fmt, delimiter, decimal=None) -> dict:
    return preview_upload(get_store(), name, data, fmt=fmt, delimiter=delimiter, decimal=decimal)


FORMATS = {"detect from the name": None, "CSV": "csv", "TSV": "tsv", "Parquet": "parquet", "JSON Lines": "jsonl"}
DELIMITERS = {"detect": None, ",": ",", ";": ";", "tab": "\t", "|": "|"}
DECIMALS = {"detect": None, ".": ".", ",": ","}
r1, r2, r3 = st.columns(3)
fmt = FORMATS[r1.selectbox("format", list(FORMATS), help="How the file is read; by default from its name.")]
delimiter = DELIMITERS[r2.selectbox("delimiter", list(DELIMITERS), disabled=fmt in ("parquet", "jsonl"),
                                    help="Field separator of a CSV/TSV file. 'detect': the default (, or tab), "
                                         "or another one when it alone splits the header (the page says so).")]
decimal = DECIMALS[r3.selectbox("decimal mark", list(DECIMALS),
                                help="Decimal mark of judge outputs and labels: '.' (0.85) or ',' (0,85). "
                                     "'detect': decimal commas are read as numbers in a file not delimited by "
                                     "commas (the page says so); a comma between groups of three digits "
                                     "separates thousands.")]
if fmt in ("parquet", "jsonl"):
    delimiter = None
try:
    columns = file_preview(up.name, data, fmt, delimiter, decimal)["columns"]
except FCPSError as exc:
    fail(exc)


def guess(options, *names):
    for n in names:
        if n in options:
            return options.index(n)
    return 0


none = "(none)"
opts = [none] + columns
detected = detect_layout(columns)
layout = st.radio("Layout", ["auto", "wide", "long"], horizontal=True, help=f"auto picked: {detected}")
c1, c2, c3, c4 = st.columns(4)
item_col = c1.selectbox("item id column", opts, index=guess(opts, "item_id", "id", "item"))
group_col = c2.selectbox("group column", opts, index=guess(opts, "group_id", "group", none))
label_col = c3.selectbox("label column", opts, index=guess(opts, "label", "y", "human", none))
block_col = c4.selectbox("block column (S/M/V/T)", opts, index=guess(opts, "block", none))
options = {"layout": layout, "item_column": item_col if item_col != none else "item_id",
           "group_column": group_col if group_col != none else "group_id",
           "label_column": label_col if label_col != none else "label",
           "block_column": block_col if block_col != none else None}
if fmt:
    options["fmt"] = fmt
if delimiter:
    options["delimiter"] = delimiter
if decimal:
    options["decimal"] = decimal
if (detected if layout == "auto" else layout) == "long":
    l1, l2 = st.columns(2)
    options["judge_column"] = l1.selectbox("judge name column", columns, index=guess(columns, "judge"))
    options["output_column"] = l2.selectbox("output column", columns, index=guess(columns, "output"))
s1, s2 = st.columns([1, 3])
schema = s1.selectbox("Judge schema", ["detect", "pairwise", "binary", "rubric", "continuous", "categorical"],
                      help="How judge outputs are read; 'detect' classifies each judge from its outputs.")
reserved = {item_col, group_col, label_col, block_col, none, options.get("judge_column"),
            options.get("output_column")}
judges = s2.multiselect("Judge columns (empty = every other column)", [c for c in columns if c not in reserved])
options.update({"schema": None if schema == "detect" else schema, "judges": judges or None})

# -- how labels and judge outputs are read (the controls are drawn below the mapping they
# change; their values from the previous run feed this run's read) --------------------------------
key = f"{file_key}-{options['label_column']}"
state = st.session_state
label_range = parse_range(state.get(f"label_range-{key}", ""), "--label-range")
judge_range = parse_range(state.get(f"judge_range-{key}", ""), "--judge-range")
label_map: dict = {}
positives = state.get(f"positive-{key}")
binary_words = state.get(f"binary-words-{key}", [])
if positives is not None and binary_words:
    label_map.update({w.lower(): (1.0 if w in positives else 0.0) for w in binary_words})
for field, value in (("ones", 1.0), ("zeros", 0.0), ("unlabelled", None)):
    label_map.update({w.lower(): value for w in words(state.get(f"{field}-{key}", ""))})
builtin = {}
for w in binary_words:
    try:
        builtin[w.lower()] = float(map_labels([w])[0][0])
    except FCPSError:
        pass
label_map = {w: v for w, v in label_map.items() if builtin.get(w, "new") != v}   # only what differs
same_for_judges = state.get(f"judges-too-{key}", True)
if label_range:
    options["label_range"] = list(label_range)
if judge_range:
    options["judge_range"] = list(judge_range)
if label_map:
    options["label_map"] = label_map
    if same_for_judges:
        options["output_map"] = {w: v for w, v in label_map.items() if v is not None}

try:
    panel = load_bytes(up.name, data, json.dumps(options, sort_keys=True))
except FCPSError as exc:
    fail(exc, stop=False)
    panel = None
if panel is not None:
    st.success(md(f"{shown}: {panel.n_rows:,} rows, {panel.n_labelled:,} labelled, {len(panel.judges)} judges, "
                  f"schema {panel.schema}"))
    say(getattr(panel, "import_notes", []), getattr(panel, "import_warnings", []))

st.subheader("How labels and judge outputs were read")
report = getattr(panel, "label_mapping", None) if panel is not None else None
if report is not None:
    st.info(md(mapping_sentence(report)))
    if panel.label_note:
        st.caption(f"Stored with the panel: {md(panel.label_note)}.")
lc = st.columns(3)
text_words = sorted({w["label"].lower(): w["label"] for w in (report or {}).get("words", [])
                     if w["value"] in (0.0, 1.0)}.values(), key=str.lower)
if report is not None:
    state[f"binary-words-{key}"] = text_words
if text_words:
    default = [w for w in text_words if builtin.get(w.lower(), next(
        (x["value"] for x in report["words"] if x["label"] == w), 0.0)) == 1.0]
    lc[0].multiselect("label texts that mean 1", text_words, default=default, key=f"positive-{key}",
                      help="Every other of these texts means 0. Swap them when your file's 1 is the 'bad' "
                           "class (e.g. the outcome you want to catch).")
# controls shown only where they apply: a label range for integer (rubric) labels, the
# shared words for labels given as words; continuous labels in [0,1] need neither
numbers = (report or {}).get("numbers") or {}
integer_labels = bool(numbers) and all(float(v).is_integer() for v in numbers.get("values") or [])
if report is None or (report or {}).get("kind") in ("rubric", "mixed") or integer_labels \
        or state.get(f"label_range-{key}"):
    lc[1].text_input("label range", key=f"label_range-{key}", placeholder="e.g. 1,5 (empty: inferred)",
                     help="LOW,HIGH of a rubric scale: numeric labels are mapped to (y - LOW) / (HIGH - LOW). Empty: "
                          "numbers in [0,1] are kept, integer scores are normalised by their observed range.")
if report is None or text_words or (report or {}).get("kind") in ("words", "mixed"):
    lc[2].checkbox("read judge outputs with the same words", value=True, key=f"judges-too-{key}",
                   help="A judge answering 'good'/'bad' (or A/B) follows the label texts' 0/1 above.")
with st.expander("Other label words", expanded=panel is None):
    w1, w2, w3 = st.columns(3)
    w1.text_input("texts that mean 1", key=f"ones-{key}", help=WORDS_HELP)
    w2.text_input("texts that mean 0", key=f"zeros-{key}", help=WORDS_HELP)
    w3.text_input("texts that mean unlabelled", key=f"unlabelled-{key}", help=WORDS_HELP)
if panel is not None:
    st.markdown("**Judge outputs**\n" + "\n".join(
        f"- {', '.join(md(n) for n in m['judges'])} ({m['schema']}): {md(m['mapping'])}" for m in judge_mappings(panel)))
if panel is None or any(j.schema == "rubric" for j in panel.judges) or state.get(f"judge_range-{key}"):
    st.text_input("judge rubric range", key=f"judge_range-{key}", placeholder="e.g. 1,10 (empty: observed)",
                  help="LOW,HIGH of the judges' rubric scale (otherwise each judge's observed range).")
if panel is None:
    st.stop()

st.subheader("Preview")
head = 20
shown_judges = panel.judges[:12]
preview = pd.DataFrame({"item_id": panel.item_ids[:head], "group_id": panel.group_ids[:head],
                        "label as read": [("" if pd.isna(v) else f"{v:g}") for v in panel.labels[:head]],
                        **{j.name: j.raw_outputs()[:head] for j in shown_judges}})
help_for = {"item_id": "Item id, from the item id column.",
            "group_id": "Item group, from the group column (the item itself without one); rows of one group are "
                        "never split between fitting and scoring.",
            "label as read": "The label after the mapping above (empty: unlabelled).",
            **{j.name: f"Outputs of judge {md(j.name)} as read ({j.schema}; {md('<missing>')} = no output)."
               for j in shown_judges}}
# every cell as text: a column mixing numbers and words would make Arrow fail (and log a traceback)
table(preview.astype(str), helps=help_for)
if len(panel.judges) > len(shown_judges):
    st.caption(f"The first {len(shown_judges)} of {len(panel.judges)} judges are shown.")
table(pd.DataFrame([{"judge": j.name, "schema": j.schema,
                     "distinct outputs": str(len(j.vocab)) if j.vocab else "binned"} for j in panel.judges]),
      helps={"judge": "A judge column of the file.",
             "schema": "How the judge's outputs are read: pairwise, binary, rubric, continuous or categorical.",
             "distinct outputs": "Distinct outputs (table cell values); continuous judges are binned."})

st.subheader("Keep it")
stem = Path(up.name).name.removesuffix(".gz")
name = st.text_input("Name", stem.rsplit(".", 1)[0])
licence = st.text_input("Licence / provenance note (stored with the panel)", "")
try:
    taken = get_store().has_panel(name)
except FCPSError:
    taken = False
replace = st.checkbox(REPLACE, value=False, help="The stored panel of this name, and its runs, are replaced by "
                      "this file (the command line's import --replace).")
if taken and not replace:
    st.caption(f"A panel named '{md(name)}' is already stored: choose another name, or tick '{REPLACE}'.")
st.caption("**Save to the store** keeps the panel (and every run on it) for every session and the command line; "
           "**Use this panel** offers it in this browser session only, and runs on it are not stored.")
row = st.container(horizontal=True)     # the two ways to keep the panel, side by side
save = row.button("Save to the store", type="primary", help="Store the panel (and the runs on it) for every session.")
use = row.button("Use this panel", help="Use it in this session only, without storing it.")
if save:
    try:
        import_upload(up.name, data, options, panel_name=name, licence=licence, replace=replace)
    except FCPSError as exc:
        fail(exc, stop=False)
    else:
        st.session_state["current_panel"] = f"stored: {name}"
        st.success(f"'{md(name)}' is stored; Select, Regime map and Audit now offer it, and runs on it are kept.")
        page_link("app_pages/select.py", "Select judges and an aggregator for it (Select page)")
if use:
    st.session_state.setdefault("uploads", {})[name] = (up.name, data, json.dumps(options, sort_keys=True))
    st.session_state["current_panel"] = f"uploaded: {name}"
    st.success(f"'{md(name)}' is now available on the Select, Regime map and Audit pages (this session only).")
    page_link("app_pages/select.py", "Select judges and an aggregator for it (Select page)")
