"""Predictor files are untrusted input: reading them within bounds, and the one structural
validation that scoring (``FCPSPredictor.from_dict``) and the SQL export
(:func:`fcps_core.deploy.sql.predictor_sql`) both apply.

Reading (:func:`parse_predictor_json`, :func:`read_predictor_file`):

* a byte cap, checked before anything is parsed (:data:`MAX_PREDICTOR_BYTES`: sized from
  the largest predictors measured, with a wide margin -- see its comment);
* integers of at most :data:`MAX_INT_DIGITS` digits (Python refuses to convert more than
  4,300 with a ValueError; no number in a predictor needs more than 19), no ``NaN`` or
  ``Infinity`` literal;
* JSON nested at most :data:`MAX_DEPTH` levels (select's files nest 7 at most): deeper
  than Python's recursion limit is refused while parsing, deeper than :data:`MAX_DEPTH` by
  ``FCPSPredictor.from_dict`` for a document from any source (file, upload, store);
* every failure is one :class:`~fcps_core.errors.PredictorError` line naming the source.

Structure (:func:`check_structure`), the rules the SQL compiler needs to compute exactly what
``predict`` computes -- and without which ``predict`` silently computes something else:

* table, backoff and residual pattern ids sorted and distinct (``lookup`` is a binary
  search: patterns listed in another order would send every row to the fallback), with one
  sum and one count per pattern, and table levels inside the judges;
* continuous judges: bin edges strictly increasing, one cell value per bin, a scale;
* isotonic maps: as many values as thresholds (at least one), thresholds strictly
  increasing and far enough apart to interpolate;
* coefficient vectors of the length the family reads (K, or K + K(K-1)/2 pairwise);
* members: a non-empty list of (weight, model) pairs, weights positive and summing to 1,
  agreeing on each shared judge's schema.
"""

from __future__ import annotations

import json
import math
import os
import stat

import numpy as np

from ..wording import count_of, noun_for
from ..errors import PredictorError

#: The byte cap of a predictor file, checked before parsing, so a huge file is refused
#: unread. 64 MiB is the :data:`MAX_PREDICTOR_NUMBERS` cap (5 million numbers, which every
#: loader refuses above) at the about 11.5 bytes per number select --save-model writes
#: (indent 1): 5M x 11.5 = 55 MB, and about 60 times the largest predictor a selection has
#: written (:data:`BIGGEST_MEASURED`). The predictor sizes behind it and the time and memory
#: a refusal costs are in docs/performance.md ("Predictor file sizes").
MAX_PREDICTOR_BYTES = 64 * 2**20
#: bytes of the largest selected predictor measured (see MAX_PREDICTOR_BYTES)
BIGGEST_MEASURED = 1_053_315
#: JSON nesting a predictor file may have (select writes 7 at most, measured: an average's
#: residual member's base model's isotonic thresholds)
MAX_DEPTH = 32
#: digits of an integer literal (counts and versions; pattern ids are strings)
MAX_INT_DIGITS = 19

_HINT = "give a file written by select --save-model"


def _int(text: str) -> int:
    digits = len(text.lstrip("-"))
    if digits > MAX_INT_DIGITS:
        raise PredictorError(f"it holds an integer of {digits:,} digits (a predictor's numbers have at most "
                             f"{MAX_INT_DIGITS})")
    return int(text)


def _unique_keys(pairs: list) -> dict:
    """A JSON object whose keys are distinct: with a repeated key Python keeps the last value,
    so a second ``"ybar"`` would silently change every prediction."""
    doc = dict(pairs)
    if len(doc) != len(pairs):
        seen: set = set()
        dup = next(k for k, _ in pairs if k in seen or seen.add(k))
        raise PredictorError(f"the key {short(dup)} appears twice in one object")
    return doc


def _constant(name: str):
    raise PredictorError(f"it holds the non-finite number {name} (a predictor's numbers are finite)")


def nesting_ok(doc, limit: int = MAX_DEPTH) -> bool:
    """Whether ``doc`` nests at most ``limit`` levels (walked without recursion)."""
    stack = [(doc, 1)]
    while stack:
        v, depth = stack.pop()
        if isinstance(v, (dict, list)):
            if depth > limit:
                return False
            stack.extend((x, depth + 1) for x in (v.values() if isinstance(v, dict) else v))
    return True


def parse_predictor_json(data: bytes | str, source: str) -> dict:
    """The JSON document of a predictor file's content ``data`` (bytes or text), within the
    bounds of the module doc; :class:`PredictorError` naming ``source`` otherwise."""
    size = len(data.encode("utf-8")) if isinstance(data, str) else len(data)
    if size > MAX_PREDICTOR_BYTES:
        raise PredictorError(f"predictor {source}: {size / 2**20:,.0f} MiB is above the "
                             f"{MAX_PREDICTOR_BYTES // 2**20} MiB a predictor file can hold "
                             f"(the largest selected predictor measured is {BIGGEST_MEASURED / 1e6:.1f} MB); {_HINT}")
    where = f"cannot read predictor {source}"
    try:
        text = data.decode("utf-8") if isinstance(data, (bytes, bytearray)) else data
        doc = json.loads(text, parse_int=_int, parse_constant=_constant, object_pairs_hook=_unique_keys)
    except PredictorError as exc:
        raise PredictorError(f"{where}: {exc}; {_HINT}") from None
    except json.JSONDecodeError as exc:
        raise PredictorError(f"{where}: it is not JSON (line {exc.lineno} column {exc.colno}: {exc.msg}); "
                             f"{_HINT}") from None
    except UnicodeDecodeError:
        raise PredictorError(f"{where}: it is not UTF-8 text; {_HINT}") from None
    except RecursionError:
        raise PredictorError(f"{where}: its JSON nests deeper than the {MAX_DEPTH} levels a predictor "
                             f"file can have; {_HINT}") from None
    except MemoryError:
        raise PredictorError(f"{where}: it does not fit in memory") from None
    except (ValueError, TypeError, OverflowError) as exc:       # any other conversion failure
        raise PredictorError(f"{where}: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}; "
                             f"{_HINT}") from None
    return doc          # its nesting is bounded by FCPSPredictor.from_dict (every source)


def read_predictor_file(path: str) -> dict:
    """The JSON document of the predictor file ``path``: a regular file within
    :data:`MAX_PREDICTOR_BYTES` (checked before reading), parsed by
    :func:`parse_predictor_json`."""
    source = repr(str(path))
    try:
        info = os.stat(path)
        if not stat.S_ISREG(info.st_mode):
            raise PredictorError(f"predictor {source} is not a regular file (a pipe, device, socket or "
                                 "directory): save it to a file first")
        if info.st_size > MAX_PREDICTOR_BYTES:
            raise PredictorError(f"predictor {source}: {info.st_size / 2**20:,.0f} MiB is above the "
                                 f"{MAX_PREDICTOR_BYTES // 2**20} MiB a predictor file can hold (the largest "
                                 f"selected predictor measured is {BIGGEST_MEASURED / 1e6:.1f} MB); {_HINT}")
        with open(path, "rb") as fh:
            data = fh.read(MAX_PREDICTOR_BYTES + 1)       # a file that grew meanwhile stays bounded
    except OSError as exc:
        raise PredictorError(f"cannot read predictor {source}: {exc.strerror or exc}") from None
    return parse_predictor_json(data, source)


# -- structure --------------------------------------------------------------------------------

def short(value, limit: int = 80) -> str:
    """``repr(value)`` cut to ``limit`` characters: a hostile name of a megabyte keeps an
    error message one readable line."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 5] + "...'"


def _malformed(detail: str) -> PredictorError:
    return PredictorError(f"predictor file is malformed: {detail}; write it again with select --save-model")


def _sorted_distinct(ids: np.ndarray, where: str) -> None:
    if len(ids) > 1 and not bool(np.all(ids[1:] > ids[:-1])):
        raise _malformed(f"{where}: the pattern ids are not sorted and distinct (a table listed in "
                         "another order would score every row with its fallback)")


def _cells(ids, sums, counts, where: str, encoders=None) -> None:
    """One table's cells: as many sums and counts as pattern ids, the ids sorted and distinct
    and, given the ``encoders`` of the judges the table reads, each an id those judges' outputs
    can give: a mixed-radix number in [0, product of their alphabet sizes). An id outside
    (a tampered file) would match no row, and the rows of the cell it replaced would take the
    fallback while the support still counted them as seen."""
    if not (len(ids) == len(sums) == len(counts)):
        raise _malformed(f"{where}: {len(ids)} patterns with {len(sums)} sums and {len(counts)} counts")
    ids = np.asarray(ids)
    _sorted_distinct(ids, where)
    if encoders is not None and len(ids):
        cells = math.prod(max(int(e.alphabet_size), 1) for e in encoders)
        if int(ids[0]) < 0 or int(ids[-1]) >= cells:
            bad = int(ids[0]) if int(ids[0]) < 0 else int(ids[-1])
            raise _malformed(f"{where}: pattern id {bad} is not a pattern of its {count_of(len(encoders), 'judge')} "
                             f"(ids run from 0 to {cells - 1:,})")


def _isotonic(iso, where: str) -> None:
    if iso is None:
        return
    x, y = np.asarray(iso.x_, dtype=float), np.asarray(iso.y_, dtype=float)
    if x.ndim != 1 or y.ndim != 1 or len(x) == 0 or len(x) != len(y):
        raise _malformed(f"{where}: an isotonic map needs as many values as thresholds (at least one)")
    if len(x) > 1:
        dx = np.diff(x)
        if not bool(np.all(dx > 0)):
            raise _malformed(f"{where}: the isotonic thresholds are not strictly increasing")
        with np.errstate(all="ignore"):
            slope = np.diff(y) / dx
        if not bool(np.isfinite(slope).all()):
            raise _malformed(f"{where}: isotonic thresholds too close to interpolate")


def _length(values, n: int, where: str) -> None:
    got = int(np.asarray(values, dtype=float).size)
    if got != n:
        raise _malformed(f"{where}: {got} coefficients for {n} features")


def is_number(v) -> bool:
    """A finite JSON number (not a bool, not text)."""
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_)) \
        and math.isfinite(float(v))


def _numbers(values) -> bool:
    return isinstance(values, (list, tuple)) and all(is_number(v) for v in values)


def _encoder(enc, where: str) -> None:
    from ..data.panel import SCHEMAS
    if enc.schema not in SCHEMAS:
        raise _malformed(f"{where}: judge {short(enc.name)} has an unknown schema {short(enc.schema)}")
    if not isinstance(enc.name, str) or not enc.name or not all(isinstance(t, str) for t in enc.vocab):
        raise _malformed(f"{where}: a judge name or cell value is not text")
    if not all(isinstance(k, str) and is_number(v) for k, v in enc.scalar_map.items()) \
            or not is_number(enc.default_score):
        raise _malformed(f"{where}: the scores of judge {short(enc.name)} are not numbers")
    if enc.bin_edges is not None and not _numbers(enc.bin_edges):
        raise _malformed(f"{where}: the bin edges of judge {short(enc.name)} are not a list of finite numbers")
    if enc.scale is not None and not (_numbers(enc.scale) and len(enc.scale) == 2):
        raise _malformed(f"{where}: the scale of judge {short(enc.name)} is not two finite numbers")
    if enc.schema != "continuous":
        return
    if enc.bin_edges is None:
        raise _malformed(f"{where}: continuous judge {short(enc.name)} has no bin edges")
    edges = np.asarray(enc.bin_edges, dtype=float)
    if not bool(np.all(np.diff(edges) > 0)):
        raise _malformed(f"{where}: the bin edges of judge {short(enc.name)} are not increasing")
    if len(enc.vocab) <= len(edges):
        raise _malformed(f"{where}: judge {short(enc.name)} has {len(edges)} bin edges but only {len(enc.vocab)} "
                         "cell values")
    if enc.scale is None:
        raise _malformed(f"{where}: continuous judge {short(enc.name)} has no scale")


def _member(m, where: str) -> None:
    """One member: a single family's fitted model over its judges' encoders."""
    K = len(m.encoders)
    if K == 0 or len(m.judges) != K:
        raise _malformed(f"{where}: it needs one encoder per judge")
    for enc in m.encoders:
        _encoder(enc, where)
    model, name = m.model, m.family
    if name == "table":
        if any(not isinstance(level, (int, np.integer)) or not 0 <= level < K for level in model.tables_):
            raise _malformed(f"{where}: a table level exceeds the number of judges ({K})")
        for level, (uniq, sums, counts) in model.tables_.items():
            _cells(uniq, sums, counts, f"{where} table level {level}", m.encoders[:level + 1])
    elif name == "backoff":
        if len(model.levels_) > K:
            raise _malformed(f"{where}: more backoff levels ({len(model.levels_)}) than judges ({K})")
        for k, (uniq, sums, counts) in enumerate(model.levels_):
            _cells(uniq, sums, counts, f"{where} backoff level {k}", m.encoders[:k + 1])
    elif name == "residual":
        _cells(model.uniq_, model.sums_, model.counts_, f"{where} residual table", m.encoders)
        _scalar(model.base_, model.base, K, f"{where} residual base")
    else:
        _scalar(model, name, K, where)


def _scalar(model, name: str, K: int, where: str) -> None:
    from ..families import fitted_family
    if name == "mean_iso":
        _isotonic(model.iso_, where)
    elif name == "one_coin_iso":
        _length(model.weights_, K, where)
        _isotonic(model.iso_, where)
    elif name == "ds_jury":
        _length(model.w1_, K, where)
        _length(model.w0_, K, where)
        _isotonic(model.iso_, where)
    elif name in ("ridge_iso", "ridge_pairwise_iso", "logistic", "logistic_pairwise"):
        n = K + K * (K - 1) // 2 if fitted_family(name).pairwise else K
        _length(model.coef_, n, where)
        if name.startswith("ridge"):
            _isotonic(model.iso_, where)


def check_structure(predictor) -> None:
    """Raise :class:`PredictorError` (one line) when ``predictor`` breaks a rule of the module
    doc: the one validation of predictors, applied on load and before the SQL export."""
    members = predictor.members
    if not isinstance(members, list) or not members:
        raise _malformed("it needs a non-empty list of members")
    total = 0.0
    schemas: dict[str, str] = {}
    for i, entry in enumerate(members):
        where = f"member {i + 1}" if len(members) > 1 else "model"
        if not isinstance(entry, tuple) or len(entry) != 2:
            raise _malformed(f"{where}: a member is a (weight, model) pair")
        w, m = entry
        if not isinstance(w, (int, float)) or isinstance(w, bool) or not math.isfinite(w) or w <= 0:
            raise _malformed(f"{where}: its weight must be a positive number")
        total += w
        _member(m, where)
        for enc in m.encoders:
            seen = schemas.setdefault(enc.name, enc.schema)
            if (seen == "continuous") != (enc.schema == "continuous"):
                raise _malformed(f"judge {short(enc.name)} is {seen} in one member and {enc.schema} in another")
    if abs(total - 1.0) > 1e-9:
        raise _malformed(f"its member weights sum to {total:.12g}, not 1")
