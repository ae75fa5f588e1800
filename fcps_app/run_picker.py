"""Panel picker + run picker for the analysis pages, with the run id in the URL (``?run=N``).

Every analysis page (Regime map, Cell-pressure audit, Scalar vs table gaps) shows one run:
a stored run of the picked panel, or this session's unsaved result (a panel uploaded but
not stored). The shown stored run's id is written to ``st.query_params["run"]`` so a reload
or a shared link opens the same run; a link opens its run's panel the first time the page
sees it. Picking a stored run never overwrites this session's ``selection`` / ``sweep``.
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from fcps_core.errors import FCPSError
from fcps_app.common import STORED, get_store, md, panel_picker, stored_name
from fcps_app.runs import KIND_WORDS, finished_runs, run_caption, selection_state, stored_run, sweep_state

STATE_KEY = {"select": "selection", "sweep": "sweep"}
SESSION = "session:"        # option prefix: this session's unsaved result of a kind
MAX_LISTED = 50
OPENS = {"select": "the Regime map, Cell-pressure audit or Results browser page",
         "sweep": "the Regime map, Scalar vs table gaps or Results browser page",
         "audit": "the Deploy & monitor or Results browser page"}


@dataclass
class Picked:
    label: str                  # the panel picker's label ("stored: NAME" / "uploaded: NAME")
    panel: object               # the loaded Panel
    kind: str | None            # "select" / "sweep"; None when the panel has nothing to show
    run_id: int | None          # None for this session's unsaved result
    state: dict | None          # selection state or sweep state (``fcps_app.runs`` shapes)


def kinds_text(kinds: tuple[str, ...]) -> str:
    return " or ".join(KIND_WORDS[k] for k in kinds)


def read_link(kinds: tuple[str, ...], hint: str = "Pick a run below.") -> dict | None:
    """The stored run behind ``?run=`` when it is a finished run of one of ``kinds``;
    otherwise one error line ending with ``hint`` (and None). No ``?run=``: None, silently."""
    raw = st.query_params.get("run")
    if raw is None or not str(raw).strip():
        return None
    raw = str(raw).strip()
    if not (raw.isascii() and raw.isdigit() and len(raw) <= 15):
        st.error(f"The link's run id '{md(raw[:40])}' is not a run number. {hint}")
        return None
    try:
        run = stored_run(int(raw))
    except FCPSError:
        st.error(f"Run {int(raw)} is not in the store (deleted, or a link from another store). "
                 f"{hint}")
        return None
    if run["kind"] not in kinds:
        st.error(f"Run {int(raw)} is a {KIND_WORDS.get(run['kind'], run['kind'])} run; this page opens "
                 f"{kinds_text(kinds)} runs (open it on {OPENS.get(run['kind'], 'the Results browser')}). {hint}")
        return None
    if run["status"] != "done" or not run.get("result"):
        st.error(f"Run {int(raw)} did not finish ({run['status']}). {hint}")
        return None
    return run


def _session_option(kind: str, label: str) -> str | None:
    state = st.session_state.get(STATE_KEY[kind])
    if state and state.get("label") == label and state.get("run_id") is None:
        return SESSION + kind
    return None


def _format(option) -> str:
    if isinstance(option, str) and option.startswith(SESSION):
        return f"this session's {KIND_WORDS[option[len(SESSION):]]} (not stored)"
    try:
        return run_caption(int(option))
    except FCPSError:
        return f"run {option}"


def state_of(kind: str, run_id: int | None, label: str) -> dict:
    """The page state of a run: this session's own (its live result) when it is the same
    run, else the stored one."""
    own = st.session_state.get(STATE_KEY[kind])
    if own and own.get("label") == label and own.get("run_id") == run_id:
        return own
    if run_id is None:
        raise FCPSError(f"this session has no unsaved {KIND_WORDS[kind]} on this panel")
    return selection_state(run_id) if kind == "select" else sweep_state(run_id)


def companion(kind: str, label: str) -> tuple[dict | None, int | None, str]:
    """Another kind's run to show beside the picked one (the Regime map puts a selection and
    a sweep on one map): this session's on the panel, else the one last viewed, else the
    newest stored. Returns (state, run_id, why)."""
    own = st.session_state.get(STATE_KEY[kind])
    if own and own.get("label") == label:
        return own, own.get("run_id"), "this session's"
    name = stored_name(label)
    if name is None:
        return None, None, ""
    ids = [r["run_id"] for r in finished_runs(name, (kind,))]
    viewed = st.session_state.get("viewed_runs", {}).get((label, kind))
    run_id, why = (viewed, "the last viewed") if viewed in ids else ((ids[0], "the newest") if ids else (None, ""))
    if run_id is None:
        return None, None, ""
    try:
        return state_of(kind, run_id, label), run_id, why
    except FCPSError:
        return None, None, ""


def pick_run(page: str, kinds: tuple[str, ...], empty: str = "") -> Picked:
    """Panel picker, then a run picker over this panel's stored runs of ``kinds`` (newest
    first) plus this session's unsaved result; syncs ``?run=``. ``empty``: what to say when
    the panel has no such run."""
    linked = read_link(kinds)
    applied = st.session_state.setdefault("linked_runs", {})
    link_id = linked["run_id"] if linked else None
    if linked and applied.get(page) != link_id:
        # a new link: open its panel (once, so the panel picker stays the user's afterwards)
        st.session_state["current_panel"] = f"{STORED}{linked['panel_name']}"
    elif "current_panel" not in st.session_state:
        # no panel picked yet: start on the panel of the newest run this page can show
        newest = next((r for r in get_store().runs() if r["status"] == "done" and r["kind"] in kinds), None)
        if newest is not None:
            st.session_state["current_panel"] = f"{STORED}{newest['panel']}"
    label, panel = panel_picker()
    name = stored_name(label)
    runs = finished_runs(name, kinds) if name else []
    ids = [r["run_id"] for r in runs]
    options: list = [o for o in (_session_option(k, label) for k in kinds) if o]
    options += ids[:MAX_LISTED]
    viewed = st.session_state.setdefault("viewed_runs", {})
    extra = [link_id, viewed.get((label, page))] + [viewed.get((label, k)) for k in kinds] \
        + [(st.session_state.get(STATE_KEY[k]) or {}).get("run_id") for k in kinds]
    for i in extra:     # a linked or remembered run beyond the listed newest stays pickable
        if isinstance(i, int) and i in ids and i not in options:
            options.append(i)
    if not options:
        if "run" in st.query_params and linked is None:
            del st.query_params["run"]      # a bad link: said once above, not on every rerun
        st.info(f"No {kinds_text(kinds)} run on this panel yet. {empty}".strip())
        return Picked(label, panel, None, None, None)
    # this session's own work on the panel, and whether it is new since this page last looked
    own, fresh = [], []
    seen = st.session_state.setdefault("seen_session_runs", {})
    for k in kinds:
        state = st.session_state.get(STATE_KEY[k])
        token = None if not state else (state.get("label"), state.get("run_id"), id(state))
        if state and state.get("label") == label:
            mine = state.get("run_id") if state.get("run_id") is not None else SESSION + k
            own.append(mine)
            if seen.get((page, k)) != token:
                fresh.append(mine)
        seen[(page, k)] = token
    # the link, then work just done (a new selection or sweep), then what was viewed last
    wanted = [link_id] + fresh + [viewed.get((label, page))] + [viewed.get((label, k)) for k in kinds] + own
    default = next((o for o in wanted if o is not None and o in options), None)
    index = options.index(default) if default in options else 0
    choice = st.selectbox("Run", options, index=index, format_func=_format,
                          help=f"This panel's stored {kinds_text(kinds)} runs, newest first, and this session's "
                               "unsaved result. The run id goes into the page address (?run=N): reload or "
                               "share the address to reopen the same run.")
    if isinstance(choice, str):
        kind, run_id = choice[len(SESSION):], None
        if "run" in st.query_params:
            del st.query_params["run"]
    else:
        run_id = int(choice)
        kind = next((r["kind"] for r in runs if r["run_id"] == run_id), None) or stored_run(run_id)["kind"]
        st.query_params["run"] = str(run_id)
        viewed[(label, kind)] = run_id
    applied[page] = run_id
    viewed[(label, page)] = choice
    try:
        state = state_of(kind, run_id, label)
    except FCPSError as exc:
        st.error(md(exc))
        return Picked(label, panel, None, None, None)
    return Picked(label, panel, kind, run_id, state)
