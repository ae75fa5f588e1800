"""Processes sharing the store: a killed import or run leaves no trace, a CLI import gets
its turn while another process holds the store and writes runs from two threads, readers
share the file, and a store held too long gives a plain message (never DuckDB's lock
error)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import textwrap
import threading
import time


from fcps_core.store import Store
from fcps_core.paper.synthetic import make_regime

from store_helpers import (PYTHON, ROOT, assert_one_line_error, assert_same_panel, csv_text,
                           good_rows, run_cli, write, write_big_csv)

#: fragments of DuckDB's own lock error (the store file's name is allowed: it ends in .duckdb)
LOCK_WORDS = ("lock", "Conflicting", "IO Error", "Traceback", "_duckdb")




def spawn(script: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([PYTHON, "-c", textwrap.dedent(script)], cwd=ROOT, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, **(env or {})})


def read_line(proc: subprocess.Popen, timeout: float = 120) -> str:
    """The child's next stdout line; the child is killed if it says nothing in time."""
    timer = threading.Timer(timeout, proc.kill)
    timer.start()
    try:
        return proc.stdout.readline()
    finally:
        timer.cancel()


def assert_intact(store: Store, panel, run_id: int, digest: str) -> None:
    assert store.content_digest() == digest
    assert [p["name"] for p in store.panels()] == ["base"]
    assert_same_panel(panel, store.load_panel("base"))
    assert store.run(run_id)["status"] == "done"
    # and a brand-new process opens it and sees the same
    code, out, err = run_cli("panels", "--json", "--store", str(store.path))
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["panels"]] == ["base"]


def test_an_import_killed_midway_leaves_no_trace(populated_run, tmp_path):
    store, panel, run_id = populated_run
    digest = store.content_digest()
    big = tmp_path / "big.csv"
    write_big_csv(big, rows=300_000, judges=6)      # big enough for DuckDB to write row groups
    child = spawn(f"""
        import time
        from fcps_core.ingest import load_panel
        from fcps_core.store import Store
        original = Store._insert_outputs
        def paused(cur, pid, judge_pos, table, numeric):
            original(cur, pid, judge_pos, table, numeric)
            if judge_pos == 2:      # half the judges are in the open transaction
                n = cur.execute("SELECT count(*) FROM outputs WHERE panel_id = ?", [pid]).fetchone()[0]
                print("MIDWAY", n, flush=True)
                time.sleep(120)
        Store._insert_outputs = staticmethod(paused)
        Store({str(store.path)!r}).add_panel(load_panel({str(big)!r}), name="interrupted")
    """)
    line = read_line(child)
    assert line.split()[:1] == ["MIDWAY"], child.stderr.read()
    assert int(line.split()[1]) == 3 * 300_000          # it really was mid-write
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert child.returncode == -signal.SIGKILL
    assert_intact(store, panel, run_id, digest)
    # the store still takes writes after the crash
    store.add_panel(make_regime("additive", rows=100, judges=3, seed=0), name="after")
    assert store.has_panel("after")


def test_a_run_killed_midway_leaves_no_trace(populated_run):
    store, panel, run_id = populated_run
    digest = store.content_digest()
    child = spawn(f"""
        import time
        from functools import partial
        import fcps_core
        from fcps_core import make_blocks
        from fcps_core.selection import PAPER_PROTOCOL
        select = partial(fcps_core.select, **PAPER_PROTOCOL)
        from fcps_core.store import Store
        store = Store({str(store.path)!r})
        panel = store.load_panel("base")
        result = select(panel, make_blocks(panel, split="1:2:1:1", seed=3), families=["table", "backoff"])
        original = Store._insert_cells
        def paused(cur, run_id, table):
            original(cur, run_id, table)
            n = cur.execute("SELECT count(*) FROM run_candidates WHERE run_id = ?", [run_id]).fetchone()[0]
            print("MIDWAY", n, flush=True)
            time.sleep(120)
        Store._insert_cells = staticmethod(paused)
        store.save_selection(result, panel="base")
    """)
    line = read_line(child)
    assert line.split()[:1] == ["MIDWAY"], child.stderr.read()
    assert int(line.split()[1]) > 0
    os.kill(child.pid, signal.SIGKILL)
    child.wait(timeout=30)
    assert_intact(store, panel, run_id, digest)
    assert [r["run_id"] for r in store.runs()] == [run_id]


def test_cli_import_while_another_process_holds_the_store_and_two_threads_write_runs(populated_run, tmp_path):
    store, panel, run_id = populated_run
    n_runs = 12
    holder = spawn(f"""
        import json, threading, time
        from functools import partial
        import fcps_core
        from fcps_core import make_blocks
        from fcps_core.selection import PAPER_PROTOCOL
        select = partial(fcps_core.select, **PAPER_PROTOCOL)
        from fcps_core.store import Store
        store = Store({str(store.path)!r})
        panel = store.load_panel("base")
        result = select(panel, make_blocks(panel, split="1:2:1", seed=1), families=["table"],
                        paths=["info_first"])
        done, errors = [], []
        def writer(k):
            try:
                for i in range({n_runs}):
                    done.append(store.save_selection(result, panel="base", label=f"w{{k}}-{{i}}"))
                    time.sleep(0.02)
            except Exception as exc:
                errors.append(repr(exc))
        threads = [threading.Thread(target=writer, args=(k,)) for k in (1, 2)]
        with store.transaction() as cur:        # hold the store, as a long write would
            cur.execute("INSERT INTO meta VALUES ('holder', 'was here')")
            print("HOLDING", flush=True)
            for t in threads:
                t.start()                       # the writers queue behind this transaction
            time.sleep(2.0)
        for t in threads:
            t.join()
        print(json.dumps({{"done": len(done), "errors": errors}}), flush=True)
    """)
    assert read_line(holder).strip() == "HOLDING", holder.stderr.read()
    csv_path = write(tmp_path / "new.csv", csv_text(good_rows(120)))
    code, out, err = run_cli("import", str(csv_path), "--name", "imported meanwhile",
                             "--store", str(store.path))
    report = json.loads(read_line(holder))
    holder.wait(timeout=60)
    assert code == 0, err
    assert not any(word in err for word in LOCK_WORDS), err
    assert "imported 'imported meanwhile': 120 rows" in out
    assert report == {"done": 2 * n_runs, "errors": []}
    runs = store.runs()
    assert len(runs) == 1 + 2 * n_runs
    assert {r["label"] for r in runs} == {None} | {f"w{k}-{i}" for k in (1, 2) for i in range(n_runs)}
    assert store.get_meta("holder") == "was here"
    assert sorted(p["name"] for p in store.panels()) == ["base", "imported meanwhile"]
    assert_same_panel(panel, store.load_panel("base"))
    # the import got its turn while the writers were still going (no starvation)
    created = store.panel_info("imported meanwhile")["created_at"]
    assert max(r["finished_at"] for r in runs if r["label"]) > created


def test_readers_in_two_processes_share_the_store(populated_run):
    store, _, _ = populated_run
    reader = spawn(f"""
        import time
        from fcps_core.store import Store
        store = Store({str(store.path)!r})
        with store.reading() as cur:
            cur.execute("SELECT count(*) FROM panels").fetchone()
            print("READING", flush=True)
            time.sleep(4)
        print(time.time(), flush=True)
    """)
    assert read_line(reader).strip() == "READING", reader.stderr.read()
    code, out, err = run_cli("panels", "--json", "--store", str(store.path))
    cli_done = time.time()
    reader_done = float(read_line(reader))
    reader.wait(timeout=30)
    assert code == 0, err
    assert [p["name"] for p in json.loads(out)["panels"]] == ["base"]
    assert cli_done < reader_done            # it did not wait for the other reader to finish


def test_a_store_held_past_the_timeout_gives_a_plain_message(populated_run, tmp_path):
    store, panel, run_id = populated_run
    digest = store.content_digest()
    holder = spawn(f"""
        import os, time
        from fcps_core.store import Store
        with Store({str(store.path)!r}).transaction() as cur:
            cur.execute("INSERT INTO meta VALUES ('never', 'committed')")
            print("HOLDING", os.getpid(), flush=True)
            time.sleep(120)
    """)
    line = read_line(holder)
    assert line.startswith("HOLDING"), holder.stderr.read()
    csv_path = write(tmp_path / "new.csv", csv_text(good_rows(60)))
    message = assert_one_line_error(run_cli("import", str(csv_path), "--name", "late",
                                            "--store", str(store.path),
                                            env={"FCPS_STORE_TIMEOUT": "1"}))
    assert "is busy" in message and f"(pid {line.split()[1]})" in message
    assert "FCPS_STORE_TIMEOUT" in message
    assert not any(word in message for word in ("Conflicting", "IO Error", "_duckdb", "set lock"))
    os.kill(holder.pid, signal.SIGKILL)          # and a killed holder's write leaves nothing
    holder.wait(timeout=30)
    assert_intact(store, panel, run_id, digest)
