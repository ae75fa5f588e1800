"""Fault drills: a process killed at any point, a full disk, writers side by side.

* SIGKILL: a real ``python -m fcps_core`` process doing ``import``, ``import --replace``,
  ``select --save`` or ``export`` is killed at a seeded random point: after the k-th store
  statement of its transaction (or, for an export, in the middle of writing the file), and
  at a random moment from outside. The store then opens in another process with no partial
  rows (:meth:`Store.integrity_problems`), and holds exactly what it held before (same
  :meth:`Store.content_digest`) or the whole operation; an output file is the old one or
  the complete new one. ``FCPS_DRILL_SEED`` picks other points.
* Disk full, injected so it always runs (an ``OSError`` ENOSPC, DuckDB's write error, a
  failed commit, DuckDB's "transaction is aborted" hiding one), and on a real 16 MB
  filesystem when the machine lets an unprivileged mount namespace have one: one message
  "no space left on device ..." and the store (and any output file) as it was.
* The dashboard's writers (uploads, imports, saved runs) and command-line writers in another
  process at the same time lose nothing, share no run id, and leave only the uploads that
  were stored.
"""

from __future__ import annotations

import contextlib
import io
import errno
import json
import os
import random
import shutil
import subprocess
import textwrap
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import pytest

from fcps_core.cli import main
from fcps_core.errors import PanelError
from fcps_core.ingest import import_file, load_panel, save_upload
from fcps_core.ingest.uploads import UPLOAD_NAME
from fcps_core.store import LATEST_VERSION, Store
from fcps_core.store.core import staged
from fcps_core.store.location import StoreFullError

from store_helpers import PYTHON, ROOT, assert_same_panel, csv_text, good_rows, write

SEED = int(os.environ.get("FCPS_DRILL_SEED", "20240607"))
ENOSPC_TEXT = 'IO Error: Could not write file "store.duckdb.wal": No space left on device'
SELECT_ARGS = ("--families", "table", "--paths", "info_first", "--split", "1:2:1:1", "--quiet")


@pytest.fixture(scope="module")
def base(tmp_path_factory):
    """A store holding panel 'base' (imported from a file) and a selection run on it, the
    files the drills import, and what an export of 'base' must write."""
    d = tmp_path_factory.mktemp("faults")
    files = {"base": write(d / "base.csv", csv_text(good_rows(300, seed=1))),
             "new": write(d / "new.csv", csv_text(good_rows(2000, seed=2))),
             "other": write(d / "other.csv", csv_text(good_rows(500, seed=3)))}
    path = d / "base.duckdb"
    with contextlib.redirect_stdout(io.StringIO()):
        assert main(["import", str(files["base"]), "--name", "base", "--store", str(path)]) == 0
        assert main(["select", "base", *SELECT_ARGS, "--save", "--store", str(path)]) == 0
    store = Store(path)
    return {"dir": d, "path": path, "files": files, "digest": store.content_digest(),
            "run": store.runs()[0]["run_id"], "export": store.export_panel("base", "csv")}


def copy_store(base, to: Path) -> Path:
    to.mkdir(parents=True, exist_ok=True)
    for f in base["dir"].iterdir():
        if f.name.startswith("base.duckdb") and not f.name.endswith(".wait"):
            shutil.copy(f, to / f.name)
    return to / "base.duckdb"


def cli(capsys, *argv) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def assert_one_line(code: int, out: str, err: str) -> str:
    assert code == 2 and out == "", (code, out, err)
    assert err.count("\n") == 1 and err.startswith("fcps: error: "), err
    for word in ("Traceback", "TransactionException", "Current transaction is aborted", "internal error"):
        assert word not in err, err
    return err


# -- SIGKILL drills --------------------------------------------------------------------------

# The child: counts the store statements inside transactions (or, for a file, the steps of
# writing it) and SIGKILLs itself at number $FCPS_DRILL_KILL_AT; then runs the command line.
CHILD = textwrap.dedent("""
    import os, signal, sys
    from contextlib import contextmanager
    KILL_AT = int(os.environ.get("FCPS_DRILL_KILL_AT") or 0)
    calls = [0]

    def tick(where):
        calls[0] += 1
        if calls[0] == KILL_AT:
            print("KILLED", calls[0], where, flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    if os.environ.get("FCPS_DRILL_MODE") == "store":
        from fcps_core.store.core import StoreCore

        class Killing:
            def __init__(self, cur):
                self._cur = cur

            def __getattr__(self, name):
                attr = getattr(self._cur, name)
                if name not in ("execute", "executemany", "register", "unregister"):
                    return attr
                def call(*args, **kwargs):
                    tick(name)
                    return attr(*args, **kwargs)
                return call

        original = StoreCore.transaction

        @contextmanager
        def transaction(self):
            with original(self) as cur:
                yield cur if isinstance(cur, Killing) else Killing(cur)

        StoreCore.transaction = transaction
    else:
        real_fdopen, real_fsync, real_replace = os.fdopen, os.fsync, os.replace

        class HalfThenKill:
            def __init__(self, fh):
                self.fh = fh
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return self.fh.__exit__(*exc)
            def write(self, data):
                half = len(data) // 2
                self.fh.write(data[:half])
                self.fh.flush()
                tick("write")                   # half the file is on disk
                return half + self.fh.write(data[half:])
            def __getattr__(self, name):
                return getattr(self.fh, name)

        os.fdopen = lambda fd, *a, **k: HalfThenKill(real_fdopen(fd, *a, **k))
        os.fsync = lambda fd: (tick("fsync"), real_fsync(fd))[1]
        os.replace = lambda src, dst: (tick("replace"), real_replace(src, dst))[1]

    from fcps_core.cli import main
    print("READY", flush=True)
    code = main(sys.argv[1:])
    print("DONE", calls[0], code, flush=True)
""")

#: operation -> (command line after the store path is known, statements or file steps it takes)
OPS = {
    "import": (lambda f, out: ["import", str(f["new"]), "--name", "new"], 16),
    "replace": (lambda f, out: ["import", str(f["other"]), "--name", "base", "--replace"], 30),
    "select": (lambda f, out: ["select", "base", *SELECT_ARGS, "--save"], 10),
    "export": (lambda f, out: ["export", "base", "--format", "csv", "--out", str(out), "--force"], 3),
}


@dataclass
class Drill:
    op: str
    how: str                    # "step": killed at its own k-th step; "timed": from outside
    kill_at: int = 0
    delay: float = 0.0
    path: Path | None = None
    out_file: Path | None = None
    result: dict = field(default_factory=dict)

    def describe(self) -> str:
        point = f"step {self.kill_at}" if self.how == "step" else f"{self.delay:.2f} s after start"
        return f"{self.op} killed at {point} (FCPS_DRILL_SEED={SEED})"


def run_drill(drill: Drill, files: dict) -> None:
    argv = OPS[drill.op][0](files, drill.out_file) + ["--store", str(drill.path)]
    env = {**os.environ, "FCPS_DRILL_MODE": "file" if drill.op == "export" else "store",
           "FCPS_DRILL_KILL_AT": str(drill.kill_at if drill.how == "step" else 0)}
    proc = subprocess.Popen([PYTHON, "-c", CHILD, *argv], cwd=ROOT, env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        ready = proc.stdout.readline()
        if drill.how == "timed" and ready.startswith("READY"):
            time.sleep(drill.delay)
            proc.kill()                 # SIGKILL, wherever it is (a no-op when already done)
        out, err = proc.communicate(timeout=180)
    except BaseException:
        proc.kill()
        raise
    drill.result = {"out": ready + out, "err": err, "code": proc.returncode}


@pytest.fixture(scope="module")
def drills(base, tmp_path_factory):
    """Every drill, run side by side (each on its own copy of the base store)."""
    rng = random.Random(SEED)
    todo = []
    for op, (_, steps) in OPS.items():
        todo.append(Drill(op, "step", kill_at=rng.randint(1, steps)))
        todo.append(Drill(op, "timed", delay=rng.uniform(0.0, 1.5)))
    for k, drill in enumerate(todo):
        d = tmp_path_factory.mktemp(f"drill-{drill.op}-{drill.how}")
        drill.path = copy_store(base, d)
        drill.out_file = d / "export.csv"
        drill.out_file.write_bytes(b"the previous export\n")
    threads = [threading.Thread(target=run_drill, args=(drill, base["files"])) for drill in todo]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {(d.op, d.how): d for d in todo}


def outcome(drill: Drill) -> str:
    """"killed" (inside the transaction or file write), "done", or "unknown" (timed kill)."""
    out, code = drill.result["out"], drill.result["code"]
    assert "Traceback" not in drill.result["err"], (drill.describe(), drill.result["err"])
    if "KILLED" in out:
        assert code == -9, (drill.describe(), drill.result)
        return "killed"
    if "DONE" in out:
        assert out.split("DONE")[1].split()[1] == "0", (drill.describe(), drill.result)
        return "done"
    assert drill.how == "timed" and code == -9, (drill.describe(), drill.result)
    return "unknown"


def check_store(drill: Drill, base, after) -> str:
    """The store opens with no partial rows and holds the state before or the whole
    operation (``after`` checks that and undoes it where it can); returns which."""
    state = outcome(drill)
    store = Store(drill.path)
    assert store.integrity_problems() == [], drill.describe()
    before = store.content_digest() == base["digest"]
    if state == "killed" and drill.op != "export":
        assert before, f"{drill.describe()}: a write killed inside its transaction left a trace"
    if not before:
        assert state != "killed", drill.describe()
        after(store)
    store.set_meta("still", "writable")          # and it takes writes again
    return "before" if before else "after"


@pytest.mark.parametrize("how", ["step", "timed"])
def test_a_killed_import_leaves_the_store_before_or_after(drills, base, how):
    drill = drills[("import", how)]

    def after(store):
        assert_same_panel(load_panel(str(base["files"]["new"])), store.load_panel("new"))
        store.delete_panel("new")
        assert store.content_digest() == base["digest"], drill.describe()

    check_store(drill, base, after)


@pytest.mark.parametrize("how", ["step", "timed"])
def test_a_killed_replace_leaves_the_old_panel_or_the_new_one(drills, base, how):
    drill = drills[("replace", how)]

    def after(store):
        assert [p["name"] for p in store.panels()] == ["base"]
        assert_same_panel(load_panel(str(base["files"]["other"])), store.load_panel("base"))
        assert store.runs() == []                    # the old panel's runs went with it

    state = check_store(drill, base, after)
    if state == "before":
        assert_same_panel(load_panel(str(base["files"]["base"])), Store(drill.path).load_panel("base"))


@pytest.mark.parametrize("how", ["step", "timed"])
def test_a_killed_select_save_stores_the_whole_run_or_nothing(drills, base, how):
    drill = drills[("select", how)]

    def after(store):
        runs = store.runs()
        assert len(runs) == 2 and runs[1]["run_id"] == base["run"]
        run = store.run(runs[0]["run_id"])
        assert run["status"] == "done" and run["result"]["candidates"]
        assert store.run_predictor(run["run_id"])["family"]
        store.delete_run(run["run_id"])
        assert store.content_digest() == base["digest"], drill.describe()

    check_store(drill, base, after)


@pytest.mark.parametrize("how", ["step", "timed"])
def test_a_killed_export_leaves_the_old_file_or_the_whole_new_one(drills, base, how):
    drill = drills[("export", how)]
    state = outcome(drill)
    assert Store(drill.path).content_digest() == base["digest"]   # an export writes no store row
    content = drill.out_file.read_bytes()
    assert content in (b"the previous export\n", base["export"]), drill.describe()
    if state == "killed":
        assert content == b"the previous export\n", drill.describe()
    if state == "done":
        assert content == base["export"]
        assert not list(drill.out_file.parent.glob(".export.csv.*.part"))


def test_the_part_file_of_a_killed_export_is_removed_by_the_next_export(drills, base, capsys):
    drill = drills[("export", "step")]
    assert outcome(drill) == "killed"
    assert list(drill.out_file.parent.glob(".export.csv.*.part"))   # what the kill left
    code, _, err = cli(capsys, "export", "base", "--format", "csv", "--out", str(drill.out_file),
                       "--force", "--store", str(drill.path))
    assert code == 0, err
    assert drill.out_file.read_bytes() == base["export"]
    assert not list(drill.out_file.parent.glob(".export.csv.*.part"))


# -- disk full, injected ----------------------------------------------------------------------

def _duckdb_write_error(*args):
    raise duckdb.IOException(ENOSPC_TEXT)


def _os_enospc(*args):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def _failed_commit(cur):
    raise duckdb.TransactionException(f"TransactionContext Error: Failed to commit: {ENOSPC_TEXT}")


def _aborted_transaction(cur, pid, table):
    # DuckDB's own path: the write fails, the transaction is aborted, and every later
    # statement (here the staging table's unregister) says "Current transaction is aborted".
    with staged(cur, "fcps_stage_items", table):
        cur.execute(f"SELECT error('{ENOSPC_TEXT}')")


INJECTIONS = {
    "duckdb write error": ("_insert_outputs", _duckdb_write_error),
    "OSError ENOSPC": ("_insert_outputs", _os_enospc),
    "failed commit": ("_commit", _failed_commit),
    "aborted transaction": ("_insert_items", _aborted_transaction),
}


@pytest.mark.parametrize("how", list(INJECTIONS))
def test_a_full_disk_during_an_import_is_one_message_and_changes_nothing(base, tmp_path, monkeypatch, how):
    path = copy_store(base, tmp_path)
    store = Store(path)
    name, fault = INJECTIONS[how]
    monkeypatch.setattr(Store, name, staticmethod(fault))
    with pytest.raises(StoreFullError) as err:
        import_file(store, str(base["files"]["new"]), name="new")
    assert str(err.value) == (f"no space left on device while writing the store at {path}; nothing "
                              "was changed (free some space and try again)")
    monkeypatch.undo()
    assert store.content_digest() == base["digest"] and store.integrity_problems() == []
    import_file(store, str(base["files"]["new"]), name="new")      # space again: it works
    assert store.has_panel("new")


def test_an_error_that_aborts_a_transaction_is_reported_as_itself(base, tmp_path, monkeypatch):
    path = copy_store(base, tmp_path)

    def failing(cur, pid, table):
        with staged(cur, "fcps_stage_items", table):
            cur.execute("SELECT error('the real reason')")

    monkeypatch.setattr(Store, "_insert_items", staticmethod(failing))
    with pytest.raises(duckdb.Error, match="the real reason"):
        import_file(Store(path), str(base["files"]["new"]), name="new")
    assert Store(path).content_digest() == base["digest"]


@pytest.mark.parametrize("command", ["import", "select", "sweep"])
def test_a_full_disk_under_the_command_line_is_one_line_and_no_failed_run(base, tmp_path, monkeypatch,
                                                                          capsys, command):
    path = copy_store(base, tmp_path)
    argv = {"import": ["import", str(base["files"]["new"]), "--name", "new"],
            "select": ["select", "base", *SELECT_ARGS, "--save"],
            "sweep": ["sweep", "base", "--budgets", "30", "--splits", "1", "--n-select", "40",
                      "--n-val", "40", "--n-test", "60", "--menu", "table", "--paths", "info_first",
                      "--quiet", "--save"]}[command]
    monkeypatch.setattr(Store, "_commit", staticmethod(_failed_commit))
    err = assert_one_line(*cli(capsys, *argv, "--store", str(path)))
    assert err == (f"fcps: error: no space left on device while writing the store at {path}; nothing "
                   "was changed (free some space and try again)\n")
    monkeypatch.undo()
    store = Store(path)
    assert store.content_digest() == base["digest"]             # no failed run was recorded either
    assert [r["run_id"] for r in store.runs()] == [base["run"]]


def test_a_full_disk_during_an_export_keeps_the_old_file(base, tmp_path, monkeypatch, capsys):
    path = copy_store(base, tmp_path)
    out = tmp_path / "export.csv"
    out.write_bytes(b"the previous export\n")
    monkeypatch.setattr(os, "fsync", _os_enospc)
    code, stdout, err = cli(capsys, "export", "base", "--format", "csv", "--out", str(out), "--force",
                            "--store", str(path))
    assert code == 2 and stdout == "" and "no space left on device" in err.lower(), err
    assert out.read_bytes() == b"the previous export\n"
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith("base.duckdb")) == ["export.csv"]


def test_a_full_disk_when_creating_or_upgrading_a_store_is_one_message(base, tmp_path, monkeypatch):
    real_connect = duckdb.connect

    def connect(path, *args, **kwargs):
        if not kwargs.get("read_only"):
            raise duckdb.IOException(ENOSPC_TEXT)
        return real_connect(path, *args, **kwargs)

    monkeypatch.setattr(duckdb, "connect", connect)
    new = tmp_path / "new.duckdb"
    with pytest.raises(StoreFullError, match=f"^no space left on device while opening the store at {new}; "):
        Store(new).panels()
    monkeypatch.undo()
    import fcps_core.store.locking as locking

    def migrate(con, **kwargs):
        raise duckdb.TransactionException(f"TransactionContext Error: Failed to commit: {ENOSPC_TEXT}")

    old = tmp_path / "old.duckdb"
    con = duckdb.connect(str(old))
    locking.migrate(con, target=4)
    con.close()
    monkeypatch.setattr(locking, "migrate", migrate)
    with pytest.raises(StoreFullError, match="^no space left on device while upgrading the store at .*its "
                                             "data is as it was"):
        Store(old).panels()
    monkeypatch.undo()
    assert Store(old).schema_version() == LATEST_VERSION


def test_a_full_disk_while_saving_an_upload_saves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(os, "replace", _os_enospc)
    with pytest.raises(PanelError, match="no space left on device while saving the upload"):
        save_upload(b"a,b\n1,2\n", "x.csv", tmp_path)
    assert list((tmp_path / "uploads").iterdir()) == []


# -- disk full, for real -----------------------------------------------------------------------

FULL_DISK_CHILD = textwrap.dedent("""
    import contextlib, io, json, os, sys
    from fcps_core.cli import main
    from fcps_core.store import Store
    mnt, small, big = sys.argv[1:4]
    path = os.path.join(mnt, "store.duckdb")

    def cli(*argv):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main([*argv, "--store", path])
        return [code, out.getvalue(), err.getvalue()]

    res = {"setup": cli("import", small, "--name", "small")}
    digest = Store(path).content_digest()
    export = os.path.join(mnt, "export.json")
    with open(export, "w") as fh:
        fh.write("the previous export\\n")
    filler = os.path.join(mnt, "filler")
    with open(filler, "wb", buffering=0) as fh:      # fill the device to the last byte
        for chunk in (1 << 16, 1 << 10, 1):
            try:
                while True:
                    fh.write(b"x" * chunk)
            except OSError:
                pass
    res["import"] = cli("import", big, "--name", "big")
    res["select"] = cli("select", "small", "--families", "table", "--paths", "info_first",
                        "--split", "1:2:1:1", "--quiet", "--save")
    res["export"] = cli("export", "small", "--format", "json", "--out", export, "--force")
    store = Store(path)
    res["same"] = store.content_digest() == digest
    res["problems"] = store.integrity_problems()
    res["export_kept"] = open(export).read() == "the previous export\\n"
    res["left"] = sorted(f for f in os.listdir(mnt) if f.endswith(".part"))
    os.unlink(filler)
    res["after"] = cli("import", big, "--name", "big")
    print("RESULT " + json.dumps(res))
""")


def test_a_real_full_filesystem(base, tmp_path):
    if shutil.which("unshare") is None:
        pytest.skip("no unshare(1): cannot make a small filesystem here")
    mnt = tmp_path / "small"
    mnt.mkdir()
    big = write(tmp_path / "big.csv", csv_text(good_rows(20_000, seed=5)))
    script = 'mount -t tmpfs -o size=16m tmpfs "$1" || { echo NO_MOUNT; exit 0; }; shift; exec "$@"'
    try:
        proc = subprocess.run(["unshare", "-Urm", "sh", "-c", script,
                               "sh", str(mnt), PYTHON, "-c", FULL_DISK_CHILD, str(mnt),
                               str(base["files"]["base"]), str(big)],
                              cwd=ROOT, capture_output=True, text=True, timeout=180)
    except OSError as exc:
        pytest.skip(f"cannot run unshare: {exc}")
    if "NO_MOUNT" in proc.stdout or (proc.returncode != 0 and "RESULT" not in proc.stdout
                                      and "unshare" in proc.stderr):
        pytest.skip(f"no unprivileged mount namespace with a tmpfs here: {proc.stderr.strip()[:200]}")
    assert "RESULT " in proc.stdout, proc.stderr[-3000:]
    res = json.loads(proc.stdout.split("RESULT ", 1)[1])
    assert res["setup"][0] == 0, res["setup"]
    store_path = f"{mnt}/store.duckdb"
    for step in ("import", "select"):
        assert_one_line(*res[step])
        assert res[step][2] == (f"fcps: error: no space left on device while writing the store at "
                                f"{store_path}; nothing was changed (free some space and try again)\n")
    assert_one_line(*res["export"])
    assert "no space left on device" in res["export"][2].lower()
    assert res["same"] and res["problems"] == [] and res["export_kept"] and res["left"] == []
    assert res["after"][0] == 0, res["after"]


# -- the dashboard and the command line writing at once ------------------------------------------

DASHBOARD_CHILD = textwrap.dedent("""
    import json, sys
    from fcps_core.ingest import uploads
    uploads.UPLOAD_GRACE_SECONDS = -1.0     # every new upload removes every unreferenced one
    uploads.UPLOAD_MAX_AGE_HOURS = -1.0
    import fcps_app.common as common
    from fcps_core import FCPSError
    panel = common.get_store().load_panel("base")
    result = common.run_selection(panel, "1:2:1:1", None, 0, None, families=["table"], paths=["info_first"])
    print("READY", flush=True)
    runs, panels, rejected = [], [], 0
    for i in range(3):
        try:                                  # a rejected upload (no label column)
            common.import_upload(f"bad{i}.csv", f"item_id,j1\\nx{i},A\\n".encode(), {},
                                 panel_name=f"bad{i}", licence="")
        except FCPSError:
            rejected += 1
        good = open(sys.argv[1 + i % 2], "rb").read().replace(b"\\nit", f"\\nd{i}-".encode())
        panels.append(common.import_upload(f"good{i}.csv", good, {}, panel_name=f"dash{i}",
                                           licence="")["name"])
        runs.append(common.save_run("select", "stored: base", result))
    print("RESULT " + json.dumps({"runs": runs, "panels": panels, "rejected": rejected}), flush=True)
""")


def test_the_dashboard_and_the_command_line_write_side_by_side(base, tmp_path, capsys):
    path = copy_store(base, tmp_path)
    Store(path).set_meta("seed_version", "drill")          # the dashboard does not seed it
    child = subprocess.Popen([PYTHON, "-c", DASHBOARD_CHILD, str(base["files"]["base"]),
                              str(base["files"]["other"])], cwd=ROOT, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env={**os.environ, "FCPS_STORE": str(path)})
    try:
        assert child.stdout.readline().startswith("READY"), child.stderr.read()
        cli_runs = []
        for i in range(3):                   # meanwhile, this process writes through the CLI
            assert cli(capsys, "import", str(base["files"]["new"]), "--name", f"cli{i}",
                       "--store", str(path))[0] == 0
            code, out, err = cli(capsys, "select", "base", *SELECT_ARGS, "--save", "--json",
                                 "--store", str(path))
            assert code == 0, err
        out, err = child.communicate(timeout=180)
    finally:
        child.kill()
    assert child.returncode == 0 and "RESULT " in out, err[-3000:]
    res = json.loads(out.split("RESULT ", 1)[1])
    store = Store(path)
    assert store.integrity_problems() == []
    assert res["rejected"] == 3
    assert sorted(p["name"] for p in store.panels()) == sorted(
        ["base"] + [f"cli{i}" for i in range(3)] + [f"dash{i}" for i in range(3)])
    runs = store.runs()
    ids = [r["run_id"] for r in runs]
    assert len(runs) == 1 + 3 + 3 and len(set(ids)) == len(ids)
    assert set(res["runs"]) <= set(ids)
    # only uploads that a stored panel came from are left (the rejected ones were cleaned)
    left = {UPLOAD_NAME.fullmatch(p.name).group(1) for p in (tmp_path / "uploads").iterdir()}
    assert left == {store.panel_info(f"dash{i}")["source_sha256"][:32] for i in range(3)}
