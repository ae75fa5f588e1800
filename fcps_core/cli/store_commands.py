"""Store commands: import, panels, show, delete, export, runs, annotate, seed.

    python -m fcps_core import FILE --name NAME [mapping flags] [--preview]
    python -m fcps_core panels | show NAME | delete NAME|run:ID | runs [--panel NAME]
    python -m fcps_core export NAME|run:ID --format csv|parquet|json [--out PATH]
    python -m fcps_core export run:ID --format html [--out PATH] [--no-figures]   # the run's report
    python -m fcps_core export MODEL.json|run:ID --format sql [--dialect duckdb|postgres|sqlite]
    python -m fcps_core annotate run:ID "TEXT" | annotate run:ID --clear
    python -m fcps_core seed

Every command takes ``--store PATH`` (default ``$FCPS_STORE`` or ``data/fcps.duckdb``; the
default store is created and seeded with the demo panels on first use). Errors follow the
CLI contract: one ``fcps: error:`` line, exit status 2.
"""

from __future__ import annotations

import json
import os
import re
import sys

from ..errors import FCPSError
from ..defaults import deployed_family_name, limit_words
from ..service.files import json_ready
from ..service.stores import Store, StoreError, resolve_store_path
from .args import MAX_MB, add_panel_arguments, parse_names, parse_range
from .formats import export_format, jsonl_from_parquet
from .render import clean, fmt, log, render_table, safe, write_data, write_json
from .store_hooks import STORE_HELP


# -- opening the store -------------------------------------------------------------------

def open_store(args, *, must_exist: bool = False) -> Store:
    """The store named by ``--store`` / ``$FCPS_STORE`` / the default; the default one is
    seeded with the demo content on first use."""
    from ..service.stores import open_store as opened
    return opened(getattr(args, "store", None), must_exist=must_exist,
                  progress=lambda m: log(args, f"first start: {m}"))


def _store_errors(handler):
    """Run a command so that a database failure is one located line, never a traceback."""
    def run(args, ctx=None):
        import duckdb
        try:
            return handler(args)
        except duckdb.Error as exc:
            first = str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__
            if "cannot encode str as UTF-8" in first:      # a name from a non-UTF-8 command line
                raise StoreError("a name on the command line is not valid UTF-8 text (it holds bytes no "
                                 "character has); type it again in UTF-8 (the store was not changed)") from None
            raise StoreError(f"the store {resolve_store_path(getattr(args, 'store', None))} "
                             f"failed: {first}") from None
    return run


# -- argument parsers --------------------------------------------------------------------

def add_store_commands(sub) -> None:
    imp = sub.add_parser("import", help="import a panel file into the store")
    add_panel_arguments(imp)
    imp.add_argument("--name", required=True, help="panel name in the store")
    imp.add_argument("--format", dest="fmt", choices=["csv", "tsv", "parquet", "jsonl"],
                     help="file format (default: from the extension; for '-', from the content)")
    imp.add_argument("--provenance", help="where the data comes from: text, or a .json file")
    imp.add_argument("--licence", help="the data's licence")
    imp.add_argument("--replace", action="store_true",
                     help="replace a stored panel of the same name (its runs are deleted)")
    imp.add_argument("--preview", nargs="?", type=int, const=5, metavar="ROWS",
                     help="show what would be imported (roles, schemas, first rows); store nothing")
    lim = imp.add_argument_group("limits")
    lim.add_argument("--max-mb", type=float, default=200, help="largest file, or standard input (MB)")
    lim.add_argument("--max-rows", type=int, default=2_000_000, help="most rows")
    lim.add_argument("--max-judges", type=int, default=1_000, help="most judge columns")
    lim.add_argument("--max-distinct", type=int, default=1_000,
                     help="most distinct outputs of one non-numeric judge")
    imp.add_argument("--json", action="store_true", help="print the imported panel (or the preview) as JSON "
                                                          "on stdout; errors as JSON")
    imp.add_argument("--quiet", action="store_true", help="no notes or warnings on stderr")
    imp.add_argument("--store", help=STORE_HELP)
    imp.set_defaults(handler=_store_errors(cmd_import))

    # the listing commands: (name, help, positional name argument help, --json help, handler)
    for cmd, help_text, name_help, json_help, handler in (
            ("panels", "list stored panels", None, "print the panels as JSON on stdout", cmd_panels),
            ("show", "show a stored panel, or a stored run (run:ID)",
             "panel name, or run:ID (a bare number means a run when no panel has that name)",
             "print the panel (with its runs) or the run as JSON on stdout", cmd_show),
            ("delete", "delete a stored panel (with its runs) or a run (run:ID)", "panel name, or run:ID",
             "print what was deleted as JSON on stdout", cmd_delete)):
        p = sub.add_parser(cmd, help=help_text)
        if name_help is not None:
            p.add_argument("name", help=name_help)
        p.add_argument("--json", action="store_true", help=json_help + "; errors as JSON")
        p.add_argument("--store", help=STORE_HELP)
        p.set_defaults(handler=_store_errors(handler))

    ex = sub.add_parser("export", help="export a stored panel or run, or a predictor as one SQL query")
    ex.add_argument("name", help="panel name, or run:ID (a bare number means a run when no panel has that "
                                 "name), or a predictor file (an existing .json file; --format sql)")
    ex.add_argument("--format", dest="fmt", choices=["csv", "parquet", "json", "jsonl", "sql", "html"],
                    help="csv, parquet, json or jsonl for panels and runs (default: from the --out extension, "
                         "else csv); sql compiles the "
                         "predictor of a predictor file or of a run:ID to one SELECT (default for a predictor file); "
                         "html writes a run's report: one self-contained page, verdict first")
    ex.add_argument("--no-figures", action="store_true",
                    help="--format html: leave the figures (and the 4.6 MB of plotly.js) out")
    ex.add_argument("--table", help="--format sql: the table the query scores (default traffic; "
                                    "letters, digits, underscores, optionally schema.table)")
    ex.add_argument("--item-column", help="--format sql: the table's item id column (default item_id)")
    ex.add_argument("--dialect", choices=["duckdb", "postgres", "sqlite"],
                    help="--format sql: the SQL engine the query is written for (default duckdb; "
                         "differences: fcps_core/deploy/sql.py)")
    ex.add_argument("--out", help="output file (default: stdout); its extension (.csv, .parquet, .json, "
                                  ".jsonl, .sql, .html) sets the format when --format is not given")
    ex.add_argument("--force", action="store_true", help="replace an existing --out file")
    ex.add_argument("--json", action="store_true", help="with --out: print what was written as JSON on stdout; "
                                                         "errors as JSON")
    ex.add_argument("--store", help=STORE_HELP)
    ex.set_defaults(handler=_store_errors(cmd_export))

    ru = sub.add_parser("runs", help="list stored runs")
    ru.add_argument("--panel", help="only runs on this panel")
    ru.add_argument("--kind", choices=["select", "sweep", "audit"], help="only runs of this kind")
    ru.add_argument("--json", action="store_true", help="print the runs as JSON on stdout; errors as JSON")
    ru.add_argument("--store", help=STORE_HELP)
    ru.set_defaults(handler=_store_errors(cmd_runs))

    an = sub.add_parser("annotate", help="attach a note to a stored run (shown in runs, the results browser "
                                         "and the run's report)")
    an.add_argument("run", help="run:ID (or the run's number)")
    an.add_argument("text", nargs="?", help="the note (replaces an earlier one)")
    an.add_argument("--clear", action="store_true", help="remove the run's note")
    an.add_argument("--json", action="store_true", help="print the run and its note as JSON on stdout; "
                                                        "errors as JSON")
    an.add_argument("--store", help=STORE_HELP)
    an.set_defaults(handler=_store_errors(cmd_annotate))

    se = sub.add_parser("seed", help="add the demo panels, selections and sweeps to a store")
    se.add_argument("--store", help=STORE_HELP)
    se.add_argument("--quiet", action="store_true", help="no progress on stderr")
    se.add_argument("--json", action="store_true", help="print what was added as JSON on stdout; errors as JSON")
    se.set_defaults(handler=_store_errors(cmd_seed))


# -- import --------------------------------------------------------------------------------

def _limits(args):
    from ..service.upload import MB, ImportLimits
    if not 0 < args.max_mb <= MAX_MB:          # check_numbers says it first on the command line
        raise FCPSError(f"--max-mb must be a positive number of megabytes up to {MAX_MB:,.0f} (got {args.max_mb:g})")
    return ImportLimits(max_bytes=int(args.max_mb * MB), max_rows=args.max_rows,
                        max_judges=args.max_judges, max_distinct_outputs=args.max_distinct)


#: the largest --provenance .json file read (it is stored with the panel and shown)
MAX_PROVENANCE_BYTES = 1024 * 1024


def _provenance(text: str | None):
    if text is None:
        return None
    if text.lower().endswith(".json") and os.path.isfile(text):
        try:
            with open(text, "rb") as fh:
                data = fh.read(MAX_PROVENANCE_BYTES + 1)
        except OSError as exc:
            raise FCPSError(f"provenance file {text!r} cannot be read ({exc.strerror or exc})") from None
        if len(data) > MAX_PROVENANCE_BYTES:
            raise FCPSError(f"provenance file {text!r} is over the {MAX_PROVENANCE_BYTES // 1024 // 1024} MiB "
                            "limit; give a short description of where the data comes from")
        try:
            doc = json.loads(data.decode("utf-8"))
            json.dumps(doc)             # stored as JSON and read back: it must nest shallowly
            return doc
        except RecursionError:
            raise FCPSError(f"provenance file {text!r} nests too deeply to be read; give a flat JSON "
                            "object") from None
        except (OSError, ValueError) as exc:
            raise FCPSError(f"provenance file {text!r} is not valid JSON ({exc})") from None
    return text


def _mapping(args) -> dict:
    return {"layout": args.layout, "judges": parse_names(args.judges), "item_column": args.item_column,
            "group_column": args.group_column, "label_column": args.label_column,
            "block_column": args.block_column, "judge_column": args.judge_column,
            "output_column": args.output_column, "labels_path": args.labels_path,
            "schema": args.schema, "label_range": parse_range(args.label_range, "--label-range"),
            "judge_range": parse_range(args.judge_range, "--judge-range"), "decimal": args.decimal}


def cmd_import(args) -> int:
    from ..service.stores import validate_name
    from ..service.upload import import_panel_file, preview_file
    limits = _limits(args)
    mapping = _mapping(args)
    if args.preview is not None:
        info = preview_file(args.panel, rows=max(args.preview, 0), fmt=args.fmt, delimiter=args.delimiter,
                       limits=limits, **{k: mapping[k] for k in (
                           "layout", "item_column", "group_column", "label_column", "block_column",
                           "judge_column", "output_column", "decimal")})
        _print_preview(info, args.json)
        _say_notes(args, info)
        return 0
    validate_name(args.name)
    provenance = _provenance(args.provenance)
    store = open_store(args)
    info = import_panel_file(store, args.panel, name=args.name, provenance=provenance,
                       licence=args.licence, replace=args.replace,
                       collapse_ties=args.collapse_ties, limits=limits, fmt=args.fmt,
                       delimiter=args.delimiter, **mapping)
    _say_notes(args, info)
    if args.json:
        _dump({"panel": _brief(info), "store": str(store.path), "notes": info.get("notes", []),
               "warnings": info.get("warnings", [])})
    else:
        sys.stdout.write(safe(f"imported {info['name']!r}: {info['n_rows']:,} rows "
                               f"({info['n_labelled']:,} labelled), {info['n_judges']} judges, "
                               f"schema {info['schema']}") + f"\nstore: {store.path}\n")
    return 0


def _say_notes(args, info: dict) -> None:
    """How the file was read (a detected delimiter, decimal commas) and what no selection
    can use (a constant label or judge), one stderr line each (silent with --quiet)."""
    for note in info.get("notes", []):
        log(args, f"fcps: note: {note}")
    for warning in info.get("warnings", []):
        log(args, f"fcps: warning: {warning}")


def _print_preview(info: dict, as_json: bool) -> None:
    if as_json:
        _dump(info)
        return
    info = clean(info)      # file and column names on one line each
    sys.stdout.write(safe(f"{info['file']}: {info['format']}, {info['layout']} layout, "
                           f"{len(info['columns'])} columns (schemas from the first "
                           f"{info['sample_rows']:,} rows)") + "\n")
    rows = [[c, info["roles"][c], info["judge_schemas"].get(c, "")] for c in info["columns"]]
    sys.stdout.write(safe(render_table(rows, ["column", "role", "schema"])))
    if info["rows"]:
        sys.stdout.write("first rows:\n")
        sys.stdout.write(safe(render_table([[v[:24] for v in r] for r in info["rows"]],
                                            [c[:24] for c in info["columns"]])))
    sys.stdout.write("nothing stored (preview)\n")


# -- listing and showing -------------------------------------------------------------------

def _brief(info: dict) -> dict:
    keep = ("name", "schema", "n_rows", "n_labelled", "n_judges", "has_blocks", "label_note",
            "source", "source_sha256", "layout", "licence", "created_at", "version", "runs")
    return {k: info.get(k) for k in keep if k in info}


def _dump(obj) -> None:
    write_json(json_ready(obj), default=str)


def cmd_panels(args) -> int:
    store = open_store(args)
    panels = store.panels()
    if args.json:
        _dump({"store": str(store.path), "panels": panels})
        return 0
    if not panels:
        sys.stdout.write(f"no panels in {store.path} (import one: python -m fcps_core import FILE --name NAME)\n")
        return 0
    rows = [[p["name"], p["n_rows"], p["n_labelled"], p["n_judges"], p["schema"], p["runs"],
             f"{p['created_at']:%Y-%m-%d %H:%M}"] for p in panels]
    sys.stdout.write(safe(render_table(rows, ["name", "rows", "labelled", "judges", "schema",
                                               "runs", "created (UTC)"])))
    return 0


def cmd_show(args) -> int:
    """A stored panel (its judges and runs), or with ``run:ID`` a stored run (the same
    references ``export`` and ``delete`` take)."""
    store = open_store(args)
    run_id = _run_ref(store, args.name)
    if run_id is not None:
        return _show_run(args, store.run(run_id))
    info = store.panel_info(args.name)
    runs = store.runs(panel=args.name)
    if args.json:
        _dump({**info, "runs": runs})
        return 0
    # every stored string (source file name, licence, provenance, judge names) on one line:
    # a newline in a file name cannot forge a line such as "fcps: error: ..."
    info, runs = clean(info), clean(runs)
    out = [f"panel {info['name']!r}: {info['n_rows']:,} rows, {info['n_labelled']:,} labelled, "
           f"{info['n_judges']} judges, schema {info['schema']}",
           f"created {info['created_at']:%Y-%m-%d %H:%M} UTC; source {info['source'] or '-'}"
           + (f" (sha256 {info['source_sha256'][:12]})" if info.get("source_sha256") else "")
           + f"; version {info.get('version') or '-'}",
           f"licence: {info['licence'] or '-'}"]
    prov = info.get("provenance")
    if prov:
        text = json.dumps(prov, sort_keys=True) if not isinstance(prov, str) else prov
        out.append("provenance: " + (text if len(text) <= 300 else text[:300] + " ..."))
    if info.get("label_note"):
        out.append(f"labels: {info['label_note']}")
    out.append("")
    out.append(render_table([[j["name"], j["schema"], j["n_distinct"], j["n_missing"]]
                             for j in info["judges"]], ["judge", "schema", "distinct", "missing"]))
    if runs:
        out.append(render_table([[r["run_id"], r["kind"], r["status"], *_deployed(r)] for r in runs],
                                ["run", "kind", "status", *DEPLOYED_HEADINGS]))
    sys.stdout.write(safe("\n".join(out)) + "\n")
    return 0


def _show_run(args, run: dict) -> int:
    """``show run:ID``: the run's header and its headline result (JSON: the stored run, as
    ``export run:ID --format json`` writes it)."""
    if args.json:
        _dump(run)
        return 0
    run = clean(run)
    result = run.get("result") or {}
    seconds = run.get("seconds")
    out = [f"run {run['run_id']}: {run['kind']} on panel {run['panel_name']!r}, {run['status']}"
           + (f", {seconds:.1f} s" if isinstance(seconds, (int, float)) else "")
           + (f", finished {str(run['finished_at'])[:16]} UTC" if run.get("finished_at") else "")]
    for key in ("label", "note", "error"):
        if run.get(key):
            out.append(f"{key}: {run[key]}")
    if run["kind"] == "select" and result.get("selected"):
        from ..service.reports import answer, display_family
        sel = result["selected"]
        said = answer(result)           # the answer first, as select printed it ('' without a frontier)
        if said:
            out.append(f"ANSWER  {said}")
        out.append(f"deployed: {display_family(sel)}, K={sel.get('K')} judges, held-out {fmt(sel.get('val_mse'))}, "
                   f"test {fmt(sel.get('test_mse'))}")
        if sel.get("judges"):
            out.append("judges: " + ", ".join(sel["judges"]))
        out.append(f"{len(result.get('candidates', []))} candidates; the full result: python -m fcps_core "
                   f"show run:{run['run_id']} --json")
    elif run["kind"] == "sweep" and result.get("cells"):
        out.append(render_table([[c.get("n_M"), c.get("table_test_mse"), c.get("scalar_test_mse"), c.get("delta")]
                                 for c in result["cells"]], ["n_M", "table", "scalar", "delta"]).rstrip("\n"))
    elif run["kind"] == "audit" and result:
        out.append(f"status: {result.get('status')}")
        out += [f"  - {r}" for r in result.get("reasons", [])]
    sys.stdout.write(safe("\n".join(out)) + "\n")
    return 0


def cmd_runs(args) -> int:
    store = open_store(args)
    runs = store.runs(panel=args.panel, kind=args.kind)
    if args.json:
        _dump({"store": str(store.path), "runs": runs})
        return 0
    if not runs:
        sys.stdout.write("no runs stored (select/sweep with --save stores one)\n")
        return 0
    rows = [[r["run_id"], r["panel"], r["kind"], r["status"], *_deployed(r), limit_words(r.get("max_judges"), r.get("budget")),
             r["seconds"], f"{r['finished_at']:%Y-%m-%d %H:%M}", r["label"] or "", _short(r.get("note"))] for r in runs]
    sys.stdout.write(safe(render_table(rows, ["run", "panel", "kind", "status", *DEPLOYED_HEADINGS, "limit",
                                               "seconds", "finished (UTC)", "label", "note"])))
    return 0


def _short(note: str | None, width: int = 40) -> str:
    """A note on one table line: newlines folded, long text cut with an ellipsis."""
    text = " ".join((note or "").split())
    return text if len(text) <= width else text[:width - 3] + "..."


def cmd_annotate(args) -> int:
    m = re.fullmatch(r"(?:run:)?(\d+)", args.run.strip(), flags=re.IGNORECASE)
    if not m:
        raise StoreError(f"{args.run!r} is not a run reference; write run:ID (see python -m fcps_core runs)")
    if args.clear == (args.text is not None):
        raise FCPSError("give the note text, or --clear to remove the note (not both)")
    store = open_store(args, must_exist=True)
    run_id = int(m.group(1))
    note = store.set_run_note(run_id, None if args.clear else args.text)
    if args.json:
        _dump({"run_id": run_id, "note": note or None})
        return 0
    sys.stdout.write(f"noted run {run_id}\n" if note else f"removed the note of run {run_id}\n")
    return 0


def _run_ref(store: Store, ref: str) -> int | None:
    """``run:ID`` (or a bare number that is not a panel name) -> run id. Panel names may not
    start with ``run:``, so a stored panel is never mistaken for a run (names like ``#1`` are
    panels)."""
    m = re.fullmatch(r"(?:run:)?(\d+)", ref.strip(), flags=re.IGNORECASE)
    if ref.lower().startswith("run:") and not m:
        raise StoreError(f"{ref!r} is not a run reference; write run:ID (see python -m fcps_core runs)")
    if m and (ref.lower().startswith("run:") or not store.has_panel(ref)):
        return int(m.group(1))
    return None


def cmd_delete(args) -> int:
    store = open_store(args)
    run_id = _run_ref(store, args.name)
    if run_id is not None:
        store.delete_run(run_id)
        if args.json:
            _dump({"deleted": "run", "run_id": run_id})
            return 0
        sys.stdout.write(f"deleted run {run_id}\n")
        return 0
    counts = store.delete_panel(args.name)
    if args.json:
        _dump({"deleted": "panel", "name": args.name, **counts})
        return 0
    sys.stdout.write(safe(f"deleted panel {args.name!r}: {counts['items']:,} rows, "
                           f"{counts['judges']} judges, {counts['runs']} runs") + "\n")
    return 0


def _is_predictor_file(name: str) -> bool:
    return name.lower().endswith(".json") and os.path.isfile(name)


def cmd_export(args) -> int:
    """A stored panel or run as csv/parquet/json/jsonl, a predictor as SQL, a run's report as
    HTML; the format from ``--format``, else from the ``--out`` extension (cli.formats)."""
    args.fmt = export_format(args.fmt, args.out)
    if args.no_figures and args.fmt != "html":
        raise FCPSError("--no-figures applies only to --format html")
    if args.fmt != "sql":
        for flag, value in (("--table", args.table), ("--item-column", args.item_column),
                            ("--dialect", args.dialect)):
            if value is not None and (args.fmt is not None or not _is_predictor_file(args.name)):
                raise FCPSError(f"{flag} applies only to --format sql")
    if args.out:
        from ..service.files import check_output_path
        check_output_path(args.out, force=args.force)
    if args.fmt in (None, "sql") and _is_predictor_file(args.name):
        # A predictor file needs no store: never open (or seed) one for it.
        from ..service.deploy import load_predictor
        return _export_sql(args, load_predictor(args.name))
    store = open_store(args)
    run_id = _run_ref(store, args.name)
    if args.fmt == "html":
        return _export_report(args, store, run_id)
    if args.fmt == "sql":
        if run_id is None:
            raise FCPSError(f"--format sql exports a predictor, and {args.name!r} is a panel name: give a "
                            "predictor file (.json) or a selection run (run:ID)")
        from ..service.deploy import predictor_from_dict
        return _export_sql(args, predictor_from_dict(store.run_predictor(run_id)))
    if run_id is None and _is_predictor_file(args.name) and not store.has_panel(args.name):
        raise FCPSError(f"{args.name!r} is a predictor file: it exports only as SQL (--format sql)")
    fmt = args.fmt or "csv"
    # JSON Lines: the table the store writes as Parquet, one object a row
    store_fmt, out = ("parquet", None) if fmt == "jsonl" else (fmt, args.out)
    if run_id is not None:
        data = store.export_run(run_id, store_fmt, out, force=args.force)
    else:
        data = store.export_panel(args.name, store_fmt, out, force=args.force)
    if fmt == "jsonl":
        data = jsonl_from_parquet(data)
        if args.out:
            from ..service.files import write_output
            write_output(args.out, data, force=args.force)
            data = None
    if data is not None:
        write_data(data)
    else:
        _wrote(args, fmt)
    return 0


def _wrote(args, fmt: str) -> None:
    """Say that ``--out`` was written: on stderr, and under ``--json`` as JSON on stdout."""
    sys.stderr.write(f"wrote {args.out}\n")
    if getattr(args, "json", False):
        _dump({"out": args.out, "format": fmt, "bytes": os.path.getsize(args.out)})


def _export_report(args, store: Store, run_id: int | None) -> int:
    """The run's HTML report (fcps_core.reports.run_report), to --out or stdout."""
    if run_id is None:
        raise FCPSError(f"--format html writes a run's report, and {args.name!r} is a panel name: give run:ID "
                        "(see python -m fcps_core runs)")
    from ..service.reports import run_report_html
    return _emit(args, run_report_html(store, run_id, figures=not args.no_figures))


def _export_sql(args, predictor) -> int:
    """The predictor as one SQL SELECT over ``--table`` (deploy/sql.py), to --out or stdout."""
    from ..service.deploy import predictor_sql
    return _emit(args, predictor_sql(predictor, args.table or "traffic", item_column=args.item_column or "item_id",
                                     dialect=args.dialect or "duckdb"))


def _emit(args, text: str) -> int:
    """An export's text to ``--out`` (atomic, ``--force`` to replace) or stdout."""
    if args.out:
        from ..service.files import write_output
        write_output(args.out, text, force=args.force)
        _wrote(args, args.fmt or "sql")
    else:
        write_data(text)
    return 0


def cmd_seed(args) -> int:
    from ..service.stores import seed, store_at
    store = store_at(args.store)
    added = seed(store, progress=lambda m: log(args, m))
    if args.json:
        _dump({"store": str(store.path), "panels": added["panels"], "runs": added["runs"]})
        return 0
    sys.stdout.write(f"seeded {store.path}: {len(added['panels'])} panels and "
                     f"{len(added['runs'])} runs added\n")
    return 0


def _deployed(r: dict) -> list:
    """(family, K, val_mse, deployed_risk, test_mse) of what a run deployed (``Store.runs``: an
    average's own judges and risks, the numbers of its answer), the family as people read it
    ("average of N models"); a value a run stored by an older fcps did not record says "not
    recorded"."""
    missing = r.get("not_recorded") or []
    family = None if r.get("family") is None else deployed_family_name(r["family"], r.get("deployed_members"))
    return [family] + ["not recorded" if k in missing else r.get(k) for k in DEPLOYED_HEADINGS[1:]]


#: the headings of :func:`_deployed`'s cells in the run tables of ``runs`` and ``show``
DEPLOYED_HEADINGS = ["family", "K", "val_mse", "deployed_risk", "test_mse"]
