"""The buffered terminal guard (fcps_core.cli.render.TerminalGuard(buffered=True)): the same
sanitised text as the unbuffered guard, in the same order, whatever else touches the stream."""

import io
import json
import sys

from fcps_core.cli import render
from fcps_core.cli.render import TerminalGuard, guarded_output, write_data


class _Counting(io.StringIO):
    """A StringIO that counts the writes it receives."""

    def __init__(self):
        super().__init__()
        self.writes = 0

    def write(self, text):
        self.writes += 1
        return super().write(text)


def test_buffered_guard_holds_writes_until_flush_and_sanitises_them():
    raw = _Counting()
    guard = TerminalGuard(raw, buffered=True)
    guard.write("a\x1b[2Jb")
    guard.write("\x07c\n")
    assert raw.getvalue() == "" and raw.writes == 0
    guard.flush()
    assert raw.getvalue() == "a?[2Jb?c\n"          # written by hand: ESC and BEL replaced
    assert raw.writes == 1


def test_buffered_json_equals_unbuffered_json_in_one_write():
    doc = {"name": "x\x1b]0;PWNED\x07", "values": [0.1, 2.5e-17, -3.0], "nested": {"a": [1, {"b": None}]}}
    plain, held = _Counting(), _Counting()
    json.dump(doc, TerminalGuard(plain), indent=1)
    guard = TerminalGuard(held, buffered=True)
    json.dump(doc, guard, indent=1)
    guard.flush()
    assert held.getvalue() == plain.getvalue()
    assert plain.writes > 10 and held.writes == 1
    assert json.loads(held.getvalue()) == doc      # json escapes the control characters itself


def test_carriage_return_write_passes_pending_text_on_first():
    raw = io.StringIO()
    guard = TerminalGuard(raw, buffered=True)
    guard.write("first ")
    guard.write("\r[ 50%] progress")               # the live line's return: kept, after "first "
    guard.write(" x\ry")                           # a return inside a write: replaced
    guard.flush()
    assert raw.getvalue() == "first \r[ 50%] progress x?y"


def test_a_return_split_from_its_newline_is_kept_as_a_line_end():
    # held together, "\r" + "\n" is a CSV line end (the sanitiser keeps \r\n)
    raw = io.StringIO()
    guard = TerminalGuard(raw, buffered=True)
    guard.write("a,b\r")
    guard.write("\n")
    guard.flush()
    assert raw.getvalue() == "a,b\r\n"


def test_buffer_is_passed_on_at_the_size_limit(monkeypatch):
    monkeypatch.setattr(TerminalGuard, "BUFFER_CHARS", 8)
    raw = _Counting()
    guard = TerminalGuard(raw, buffered=True)
    guard.write("1234")
    assert raw.writes == 0
    guard.write("5678")                            # 8 characters held: passed on
    assert raw.getvalue() == "12345678" and raw.writes == 1
    guard.write("9")
    assert raw.getvalue() == "12345678"


def test_direct_use_of_the_wrapped_stream_comes_after_the_held_text():
    raw = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    guard = TerminalGuard(raw, buffered=True)
    guard.write("text first\n")
    guard.buffer.write(b"bytes second\n")          # any attribute of the stream passes the text on
    raw.flush()
    assert raw.buffer.getvalue() == b"text first\nbytes second\n"


def test_guarded_output_buffers_a_pipe_and_passes_everything_on_at_the_end(monkeypatch):
    out, err = _Counting(), _Counting()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    with guarded_output():
        assert isinstance(sys.stdout, TerminalGuard) and sys.stdout.buffered
        assert isinstance(sys.stderr, TerminalGuard) and not sys.stderr.buffered
        sys.stdout.write("out\x1b")
        sys.stdout.write(" more\n")
        sys.stderr.write("err\n")
        assert out.getvalue() == "" and err.getvalue() == "err\n"
    assert sys.stdout is out and sys.stderr is err
    assert out.getvalue() == "out? more\n" and out.writes == 1


def test_guarded_output_passes_on_also_when_the_command_fails(monkeypatch):
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    try:
        with guarded_output():
            sys.stdout.write("partial\n")
            raise SystemExit(2)
    except SystemExit:
        pass
    assert out.getvalue() == "partial\n"


def test_a_terminal_is_not_buffered(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True
    out = Tty()
    monkeypatch.setattr(sys, "stdout", out)
    with guarded_output():
        sys.stdout.write("live\n")
        assert out.getvalue() == "live\n"


def test_write_data_after_held_text_keeps_the_order(monkeypatch):
    raw = io.TextIOWrapper(io.BytesIO(), encoding="utf-8", write_through=True)
    monkeypatch.setattr(sys, "stdout", raw)
    with guarded_output():
        sys.stdout.write("header\n")
        write_data(b"a,b\n1,2\n")
    assert raw.buffer.getvalue() == b"header\na,b\n1,2\n"


def test_aliases_apply_to_held_text():
    raw = io.StringIO()
    render.register_alias("/tmp/secret-copy.csv", "<stdin>")
    try:
        guard = TerminalGuard(raw, buffered=True)
        guard.write("read /tmp/secret-")                # a path split across two writes
        guard.write("copy.csv\n")
        guard.flush()
    finally:
        render.clear_aliases()
    assert raw.getvalue() == "read <stdin>\n"


def test_held_text_keeps_the_aliases_of_the_command_that_wrote_it(monkeypatch):
    # the CLI forgets its aliases before the guard is removed: held text must not leak the path
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    with guarded_output():
        render.register_alias("/tmp/copy-of-stdin.csv", "<stdin>")
        sys.stdout.write("read /tmp/copy-of-stdin.csv\n")
        render.clear_aliases()
        sys.stdout.write("then /tmp/copy-of-stdin.csv\n")     # no alias any more
    assert out.getvalue() == "read <stdin>\nthen /tmp/copy-of-stdin.csv\n"
