"""How ``select``/``sweep``/``score`` meet the store: a stored panel name works wherever a
panel file does, and ``--save`` stores the result (a panel file is stored first)."""

from __future__ import annotations

import argparse
import os

from ..errors import FCPSError, PanelError
from ..service.stores import StoreError, resolve_store_path, store_at
from .args import add_panel_arguments, parse_names
from .context import RunContext
from .render import log

STORE_HELP = "store file (default: $FCPS_STORE, else data/fcps.duckdb)"


def add_save_arguments(p: argparse.ArgumentParser) -> None:
    """``select``/``sweep``: read a stored panel by name, and ``--save`` the result."""
    g = p.add_argument_group("store")
    g.add_argument("--store", help=STORE_HELP)
    g.add_argument("--save", action="store_true",
                   help="store the result as a run (a panel file is stored first, under --panel-name)")
    g.add_argument("--panel-name", help="name for a panel file stored by --save (default: file name)")


# -- hooks for select / sweep ----------------------------------------------------------------

_FILE_ONLY = ("layout", "item_column", "group_column", "label_column", "block_column",
              "judge_column", "output_column", "labels_path", "schema", "label_range", "judge_range",
              "delimiter", "decimal")


def load_stored_panel(args, ctx: RunContext):
    """The stored panel ``args.panel`` names, or None when it is a file (a file wins) or
    no store exists yet. Column-mapping flags belong to files and are refused here."""
    ref = args.panel
    if os.path.exists(ref):
        return None
    path = resolve_store_path(getattr(args, "store", None))
    if not path.exists():
        if getattr(args, "store", None):
            raise StoreError(f"file {ref!r} does not exist and there is no store at {path}")
        return None
    store = store_at(path)
    if not store.has_panel(ref):
        raise PanelError(f"file {ref!r} does not exist and the store has no panel of that name",
                         hint="list stored panels with: python -m fcps_core panels")
    defaults = _file_flag_defaults()
    changed = [k for k in _FILE_ONLY if getattr(args, k, None) != defaults[k]]
    if changed:
        flag = "--" + changed[0].replace("_", "-").replace("labels-path", "labels")
        raise FCPSError(f"{flag} maps the columns of a file; the stored panel {ref!r} was mapped "
                        "when it was imported (re-import the file to change it)")
    from ..service.stores import stored_panel
    panel, ctx.panel_version = stored_panel(store, ref, judges=parse_names(args.judges))
    ctx.store_panel = ref
    return panel


def _file_flag_defaults() -> dict:
    p = argparse.ArgumentParser(add_help=False)
    add_panel_arguments(p)
    return {k: p.get_default(k) for k in _FILE_ONLY}


def remember_file_panel(args, ctx: RunContext, panel) -> None:
    """``--save`` with a panel file: store the file's panel first (a run needs a stored
    panel). An identical file stored before under that name is reused."""
    if not getattr(args, "save", False):
        return
    from ..service.upload import check_importable, file_sha256
    name = args.panel_name or os.path.basename(args.panel).split(".")[0]
    if not args.panel_name:
        from ..service.stores import validate_name
        try:
            validate_name(name)
        except StoreError as exc:           # a file name no stored name may be
            raise StoreError(f"{exc}; the name comes from the file name: pass --panel-name NAME") from None
    store = store_at(args.store)
    digest = file_sha256(args.panel)
    if store.has_panel(name):
        info = store.panel_info(name)
        stored_judges = [j["name"] for j in info.get("judges", [])]
        if info.get("source_sha256") != digest or stored_judges != panel.judge_names \
                or int(info.get("n_labelled", -1)) != panel.n_labelled:
            # Same name, different content (another file, or other --judges/mapping flags):
            # reusing it would store a run the stored panel cannot reproduce.
            raise StoreError(f"the store already holds a different panel named {name!r} "
                             f"(other file or other column mapping); pass --panel-name NEW_NAME")
    else:
        check_importable(panel, label_column=args.label_column, group_column=args.group_column)
        info = store.add_panel(panel, name=name, source=os.path.basename(args.panel), source_sha256=digest,
                               layout=args.layout, import_options={"stored_by": args.command})
        log(args, f"stored panel {name!r} in {store.path}")
    ctx.store_panel = name
    ctx.panel_version = info["version"]     # a replace before --save stores the run refuses it


def cli_params(args) -> dict:
    """The command's settings as stored with its run (``params.cli``)."""
    skip = {"handler", "command", "quiet", "json", "save", "store", "panel_name", "top",
            "save_model"}
    return {k: v for k, v in sorted(vars(args).items()) if k not in skip and v is not None}


def save_result(args, ctx: RunContext, kind: str, result, *, predictor=None) -> int | None:
    """``--save``: store a finished select/sweep result as a run; returns the run id. When
    the panel was replaced (or deleted) since it was read, nothing is stored and the
    :class:`~fcps_core.store.runs.PanelChangedError` says so."""
    name = ctx.store_panel
    if not getattr(args, "save", False) or name is None:
        return None
    store = store_at(args.store)
    if kind == "select":
        from ..service.select import store_selection
        run_id = store_selection(store, result, panel_name=name, predictor=predictor, params={"cli": cli_params(args)},
                                 started_at=ctx.started, panel_version=ctx.panel_version)
    else:
        from ..service.sweep import store_sweep
        params = {"budgets": result.budgets, **result.settings, "cli": cli_params(args)}
        run_id = store_sweep(store, result, panel_name=name, params=params, started_at=ctx.started,
                             seconds=ctx.seconds(), panel_version=ctx.panel_version)
    log(args, f"saved as run {run_id} in {store.path}")
    return run_id


def record_failure(args, ctx: RunContext, exc: Exception) -> None:
    """``--save``: a select/sweep that failed after its panel was resolved is stored as a
    ``failed`` run with the error, so the attempt is visible next to the finished ones."""
    name = ctx.store_panel
    if not getattr(args, "save", False) or name is None or isinstance(exc, StoreError):
        return
    try:
        store_at(args.store).save_failed_run(
            panel=name, kind=args.command, params={"cli": cli_params(args)}, error=str(exc),
            seed=getattr(args, "seed", None), started_at=ctx.started, panel_version=ctx.panel_version)
    except FCPSError:
        pass    # the original error is the one the user must see; recording is best effort
