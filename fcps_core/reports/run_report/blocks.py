"""Building blocks of the run report: escaping, number formats, tables with their terms
below, headline cards, figures embedded as escaped JSON (plotly.js once), the page CSS."""

from __future__ import annotations

import datetime as _dt
import html
import importlib
import json
import math

from ..glossary import term


# -- formatting --------------------------------------------------------------------------

def esc(value) -> str:
    """HTML-escaped text (quotes too: safe in attributes)."""
    return html.escape("" if value is None else str(value), quote=True)


def fmt(value, digits: int = 4) -> str:
    """A number or value as the report prints it (not escaped)."""
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, float):
        if math.isnan(value):
            return "–"
        if math.isinf(value):
            return "∞" if value > 0 else "−∞"
        if value == int(value) and abs(value) < 1e12 and digits == 0:
            return f"{int(value):,}"
        if value != 0 and round(value, digits) == 0:
            # not 0, yet it would print as 0.0000 or -0.0000: two significant digits (an
            # interval end near 0 then says which side of 0 it lies on), or e-notation
            places = 1 - math.floor(math.log10(abs(value)))
            return f"{value:.{places}f}" if places <= digits + 2 else f"{value:.2e}"
        return f"{value:.{digits}f}"
    if isinstance(value, (list, tuple)):
        return ", ".join(fmt(v, digits) for v in value)
    if isinstance(value, dict):
        return json.dumps(value, default=str, sort_keys=True)
    if isinstance(value, _dt.datetime):
        return f"{value:%Y-%m-%d %H:%M:%S} UTC"
    return str(value)


def pct(value) -> str:
    return "–" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.1%}"


def interval(ci, digits: int = 4) -> str:
    if not ci or ci[0] is None or ci[1] is None:
        return "–"
    return f"{fmt(ci[0], digits)} to {fmt(ci[1], digits)}"


def words(key: str) -> tuple[str, str] | None:
    """(display name, one sentence) for a glossary key or a report column, or None."""
    t = term(key)
    return (t.name, t.help) if t is not None else None


def missing_terms(keys) -> list[str]:
    """Keys the glossary does not define (the report words them itself, or not at all)."""
    return [k for k in dict.fromkeys(keys) if term(k) is None]


# -- building blocks ---------------------------------------------------------------------

class Column:
    """A table column: the row field, the glossary key its words come from, its header, and
    how its values print."""

    def __init__(self, field: str, key: str | None = None, header: str | None = None, *,
                 show=None, digits: int = 4, numeric: bool | None = None):
        self.field, self.key = field, key or field
        found = term(self.key)
        self.header = header or (found.name if found is not None else field)
        self.show, self.digits, self.numeric = show, digits, numeric

    def cell(self, row: dict) -> str:
        v = row.get(self.field)
        return self.show(v) if self.show is not None else fmt(v, self.digits)


def table(rows: list[dict], columns: list[Column], *, highlight=None, cls: str = "",
          term_keys=None) -> str:
    """An HTML table (escaped), with its terms (``term_keys``, default the columns' keys)
    printed below it."""
    head = "".join(f'<th title="{esc((words(c.key) or ("", ""))[1])}">{esc(c.header)}</th>' for c in columns)
    body = []
    for r in rows:
        mark = ' class="hl"' if highlight is not None and highlight(r) else ""
        cells = []
        for c in columns:
            v = r.get(c.field)
            num = c.numeric if c.numeric is not None else isinstance(v, (int, float)) and not isinstance(v, bool)
            cells.append(f'<td{" class=num" if num else ""}>{esc(c.cell(r))}</td>')
        body.append(f"<tr{mark}>{''.join(cells)}</tr>")
    return (f'<table class="{cls}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'
            + terms([(c.key, c.header) for c in columns] if term_keys is None else term_keys))


def facts(pairs: list[tuple[str | None, str, str]]) -> str:
    """A two-column table of (glossary key or None, label, value text) with the terms below."""
    rows = "".join(f'<tr><th title="{esc((words(k) or ("", ""))[1]) if k else ""}">{esc(label)}</th>'
                   f'<td>{esc(value)}</td></tr>' for k, label, value in pairs)
    return f'<table class="facts"><tbody>{rows}</tbody></table>' + terms([(k, label) for k, label, _ in pairs if k])


def terms(items) -> str:
    """What the terms mean: a definition list, in first-use order, of every item (a key, or
    a (key, label) pair: the label is how the page shows it) the glossary or the report
    words."""
    out, seen = [], set()
    for item in items:
        key, label = item if isinstance(item, tuple) else (item, None)
        w = words(key)
        if w is None or (key, label) in seen:
            continue
        seen.add((key, label))
        out.append(f"<dt>{esc(label or w[0])}</dt><dd>{esc(w[1])}</dd>")
    return f'<dl class="terms">{"".join(out)}</dl>' if out else ""


def cards(items: list[tuple[str, str, str]]) -> str:
    """Headline figures: (glossary key, label, value), each with its sentence as a tooltip
    and printed below."""
    out = "".join(f'<div class="card" title="{esc((words(k) or ("", ""))[1])}"><div class="label">{esc(label)}'
                  f'</div><div class="value">{esc(v)}</div></div>' for k, label, v in items)
    return f'<div class="cards">{out}</div>' + terms([(k, label) for k, label, _ in items])


def para(text: str, cls: str = "") -> str:
    return f'<p{f" class={cls}" if cls else ""}>{esc(text)}</p>'


class Figures:
    """Plotly figures embedded as escaped JSON; plotly.js goes in the page once, before the
    first figure (or never, with ``enabled=False``)."""

    def __init__(self, enabled: bool = True):
        self.enabled, self.count = enabled, 0

    def __call__(self, build, *args, **kwargs) -> str:
        """``build`` is a figure function, or its name ``"subject.function"`` in
        :mod:`fcps_core.figures` so that plotly (the optional ``[app]`` extra) is imported only
        when figures are drawn."""
        if not self.enabled:
            return ""
        if isinstance(build, str):
            subject, name = build.rsplit(".", 1)
            build = getattr(importlib.import_module(f"fcps_core.figures.{subject}"), name)
        try:
            fig = build(*args, **kwargs)
        except (KeyError, TypeError, ValueError, IndexError) as exc:       # an old run's partial data
            return para(f"(figure not available for this run: {type(exc).__name__})", "muted")
        fig.update_layout(template="plotly_white", height=fig.layout.height or 380)
        spec = fig.to_json()
        safe = spec.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
        div = f"fig-{self.count}"
        lib = ""
        if self.count == 0:
            import plotly.offline
            lib = f'<script type="text/javascript">{plotly.offline.get_plotlyjs()}</script>'
        self.count += 1
        return (f'{lib}<div id="{div}" class="figure"></div><script type="text/javascript">(function(){{'
                f'var f={safe};Plotly.newPlot("{div}",f.data,f.layout,{{responsive:true,displaylogo:false}});'
                f'}})();</script>')


CSS = """
body{font-family:-apple-system,BlinkMacSystemFont,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;color:#1f2328;
 max-width:1100px;margin:2em auto;padding:0 1.2em;line-height:1.45;font-size:15px}
h1{font-size:1.6em;margin-bottom:.2em}h2{border-bottom:2px solid #d0d7de;padding-bottom:.2em;margin-top:2em}
h3{font-size:1.05em;margin-top:1.4em}
.meta,.muted{color:#59636e}.note{background:#fff8c5;border-left:4px solid #d4a72c;padding:.5em .8em}
nav ol{columns:4;font-size:.9em}
table{border-collapse:collapse;margin:.6em 0;font-size:.88em;width:auto;max-width:100%;display:block;overflow-x:auto}
th,td{border:1px solid #d0d7de;padding:.25em .55em;text-align:left;vertical-align:top}
thead th{background:#f6f8fa;position:sticky;top:0}td.num{text-align:right;font-variant-numeric:tabular-nums}
tr.hl td{background:#ddf4ff;font-weight:600}
table.facts th{background:#f6f8fa;font-weight:600;white-space:nowrap}
dl.terms{font-size:.82em;color:#59636e;margin:.2em 0 1.2em;display:grid;grid-template-columns:max-content 1fr;
 gap:.1em .8em}dl.terms dt{font-weight:600}dl.terms dd{margin:0}
.cards{display:flex;flex-wrap:wrap;gap:.6em;margin:.8em 0}
.card{border:1px solid #d0d7de;border-radius:6px;padding:.4em .8em;min-width:8em}
.card .label{font-size:.8em;color:#59636e}.card .value{font-size:1.25em;font-weight:600}
p.verdict{font-size:1.08em;background:#f6f8fa;border-left:4px solid #0969da;padding:.6em .9em}
p.status-ok{border-left-color:#1a7f37}p.status-warn{border-left-color:#d4a72c}p.status-refuse{border-left-color:#cf222e}
pre{background:#f6f8fa;padding:.6em;overflow-x:auto;font-size:.85em;white-space:pre-wrap}
.figure{width:100%;min-height:380px}
footer{margin-top:3em;font-size:.8em;color:#59636e;border-top:1px solid #d0d7de;padding-top:.6em}
@media print{.figure{page-break-inside:avoid}nav{display:none}}
"""
