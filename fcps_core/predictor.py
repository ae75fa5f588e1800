"""The deployable predictor: the selected (path, K, family) with its encoders, as JSON.

A predictor file holds only data (judge names, encoder vocabularies/bin edges/scalar maps,
the family's fitted parameters), never code: users can exchange these files safely.
Refit policy: ``frozen`` deploys the candidate fitted on the calibration block; ``refit``
refits encoders and the family (same hyperparameters) on S + M + V.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from .version import __version__
from .encoding import JudgeEncoder, apply_encoders, encode_panel, prefix_patterns
from .errors import PredictorError
from .deploy.support import calibration_support, check_support, row_support
from .deploy.validate import (MAX_DEPTH, MAX_PREDICTOR_BYTES, check_structure, nesting_ok,  # noqa: F401
                              read_predictor_file, short)
from .families import PrefixFeatures, fitted_family, get_family
from .panel import Panel

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "fcps-predictor"
#: version 2 adds tie_average predictors (``members``); version 1 files read unchanged
FORMAT_VERSION = 2
READABLE_VERSIONS = (1, 2)
TIE_AVERAGE = "tie_average"


@dataclass
class FCPSPredictor:
    judges: list[str]
    encoders: list[JudgeEncoder]
    family: str
    model: object
    metadata: dict = field(default_factory=dict)

    members: list["FCPSPredictor"] | None = None   # tie_average: the averaged predictors
    #: calibration support (deploy.support.calibration_support); None in files made
    #: before fcps recorded it: scoring works, audits say what they cannot tell
    support: dict | None = None

    @classmethod
    def from_selection(cls, result) -> "FCPSPredictor":
        """The deployed predictor: the selected candidate, or under ``tie_average`` the
        average of its members (each with its own judges, encoders and fitted model)."""
        base = {"refit": result.selector.refit, "panel": result.panel.name,
                "protocol": result.protocol, "choice": result.selector.choice,
                "split": result.split_dict(), "seed": result.blocks.seed}
        if not result.members:
            predictor = cls._from_candidate(result, result.selected, base)
        else:
            members = [cls._from_candidate(result, c, base) for c in result.deployed_members]
            wanted = {j for m in members for j in m.judges}
            judges = [j for j in result.panel.judge_names if j in wanted]
            meta = {**base, **(result.selected_val or {}), **(result.selected_test or {}),
                    "n_members": len(members)}
            predictor = cls(judges=judges, encoders=[], family=TIE_AVERAGE, model=None,
                            metadata=meta, members=members)
        # The rows the deployed models learned from (never T): M or every deployable
        # label under crossfit; S+M+V when the split protocol refits.
        rows = result.fit_rows
        if result.selector.refit != "frozen" and result.protocol != "crossfit":
            b = result.blocks
            rows = np.sort(np.concatenate([b.S, b.M, b.V]))
        predictor.support = calibration_support(result.panel, rows, predictor.support_encoders())
        return predictor

    @classmethod
    def _from_candidate(cls, result, sel, base: dict) -> "FCPSPredictor":
        sel_idx = list(sel.judge_idx)
        meta = {**base, "path_rule": sel.path_rule, "K": sel.K, "params": sel.params,
                "val_mse": sel.val_mse, "test_mse": sel.test_mse}
        # Under crossfit the models were already refitted on every deployable label.
        if result.selector.refit == "frozen" or result.protocol == "crossfit":
            encoders = [result.encoded.encoders[j] for j in sel_idx]
            return cls(judges=sel.judges, encoders=encoders, family=sel.family,
                       model=result.models[sel.index], metadata=meta)
        b = result.blocks
        rows = np.sort(np.concatenate([b.S, b.M, b.V]))
        sub = result.panel.subset_judges(sel.judges)
        encoded = encode_panel(sub, rows, n_bins=result.selector.n_bins)
        feats = PrefixFeatures(patterns=prefix_patterns(encoded.codes, encoded.alphabet_sizes),
                               scores=encoded.scores)
        family = get_family(sel.family)
        rest = np.setdiff1d(np.arange(result.panel.n_rows), np.concatenate([rows, b.T]))
        # fit_path: the fit the selection makes for this prefix, now on S+M+V
        model = family.fit_path(feats.take(rows), result.panel.labels[rows],
                                feats.take(rest) if family.uses_unlabelled else None, [sel.K],
                                **result.selector.family_fixed(sel.family), **sel.params)[0]
        meta["refit_rows"] = int(len(rows))
        return cls(judges=sel.judges, encoders=encoded.encoders, family=sel.family, model=model,
                   metadata=meta)

    def support_encoders(self) -> list[JudgeEncoder]:
        """One encoder per judge of the predictor (a tie_average's judges take the first
        member's encoder that has them): the encoding its support is counted in."""
        if not self.members:
            return list(self.encoders)
        found = {}
        for m in self.members:
            for e in m.encoders:
                found.setdefault(e.name, e)
        return [found[j] for j in self.judges]

    @property
    def table_like(self) -> bool:
        """Whether the deployed prediction reads the joint table (any member does)."""
        return any(fitted_family(m.family).table_like for m in (self.members or [self]))

    def row_support(self, panel: Panel, *, encoded=None):
        """Per-row support of ``panel`` (deploy.support.RowSupport), or None when the file
        has no support section. ``encoded``: the panel already encoded with
        :meth:`support_encoders` (saves encoding it twice)."""
        if self.support is None:
            return None
        self.check_judges(panel)
        return row_support(self.support, self.support_encoders(), panel, table_like=self.table_like,
                           encoded=encoded)

    def as_panel(self, data: Panel | pd.DataFrame | np.ndarray) -> Panel:
        """``data`` -- a Panel, a pandas DataFrame (one column per judge, optional
        ``item_id``/``group_id``) or a 2-D numpy array (columns in :attr:`judges` order),
        NaN a missing output -- as the panel ``score`` reads: each judge with the schema
        the predictor saw (:func:`fcps_core.deploy.frame.traffic_panel`)."""
        if isinstance(data, Panel):
            return data
        from .deploy.frame import traffic_panel
        known: dict[str, set] = {}
        for m in (self.members or [self]):
            for e in m.encoders:
                known.setdefault(e.name, set()).update(e.vocab, e.scalar_map)
        return traffic_panel(data, self.judges, self.judge_schemas(), known)

    def score(self, panel: Panel | pd.DataFrame | np.ndarray):
        """(predictions, per-row support or None), encoding the panel once where the
        predictor and its support share encoders (every single-family predictor).
        ``panel``: a Panel, DataFrame or array (:meth:`as_panel`)."""
        panel = self.as_panel(panel)
        if self.members:
            return self.predict(panel), self.row_support(panel)
        self.check_judges(panel)          # before encoding: one clear error
        encoded = apply_encoders(panel, self.encoders)
        feats = self.features(panel, encoded=encoded, patterns=getattr(self.model, "needs_patterns", True))
        return self.model.predict(feats), self.row_support(panel, encoded=encoded)

    def check_judges(self, panel: Panel) -> None:
        """One clear error naming every judge column the panel lacks."""
        missing = [j for j in self.judges if j not in panel.judge_names]
        if missing:
            raise PredictorError("the panel lacks judge column(s) the predictor needs: "
                                 + ", ".join(short(m) for m in missing[:5])
                                 + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))

    def judge_schemas(self) -> dict[str, str]:
        """Each judge's schema as the predictor saw it at fitting time."""
        return {e.name: e.schema for m in (self.members or [self]) for e in m.encoders}

    # -- predict -------------------------------------------------------------------------
    def features(self, panel: Panel, *, encoded=None, patterns: bool = True) -> PrefixFeatures:
        """The family's view of ``panel`` (``encoded``: the panel already encoded with
        this predictor's encoders). ``patterns=False`` leaves the joint-pattern ids out
        (``None`` per prefix), for a family that never reads them (``needs_patterns``)."""
        self.check_judges(panel)
        encoded = apply_encoders(panel, self.encoders) if encoded is None else encoded
        ids = prefix_patterns(encoded.codes, encoded.alphabet_sizes) if patterns \
            else [None] * encoded.codes.shape[1]
        return PrefixFeatures(patterns=ids, scores=encoded.scores)

    def predict(self, panel: Panel | pd.DataFrame | np.ndarray) -> np.ndarray:
        """P(label = 1) in [0, 1] for every row of ``panel``: a Panel, a pandas DataFrame
        (wide: one column per judge, named as the judge, plus optional ``item_id`` and
        ``group_id``) or a 2-D numpy array (columns in :attr:`judges` order); NaN is a
        missing output. A DataFrame or array is read as ``score`` reads a traffic file
        (:meth:`as_panel`), so ``predict(pd.read_csv(path))`` equals ``score path``."""
        panel = self.as_panel(panel)
        if self.members:
            self.check_judges(panel)      # one clear error naming every missing judge
            return np.mean([m.predict(panel) for m in self.members], axis=0)
        return self.model.predict(self.features(panel, patterns=getattr(self.model, "needs_patterns", True)))

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        head = {"format": FORMAT, "format_version": FORMAT_VERSION, "fcps_version": __version__,
                "judges": self.judges, "family": self.family}
        extra = {} if self.support is None else {"support": self.support}
        if self.members:
            return {**head, "members": [m.to_dict() for m in self.members],
                    "metadata": self.metadata, **extra}
        return {**head, "encoders": [e.to_dict() for e in self.encoders],
                "model": self.model.get_state(), "metadata": self.metadata, **extra}

    def save(self, path: str, *, force: bool = False) -> None:
        """Write the predictor as JSON (atomically; an existing file only with ``force``)."""
        from .outputs import atomic_output
        with atomic_output(path, force=force) as fh:
            json.dump(self.to_dict(), fh, indent=1, allow_nan=False, default=_json_default)

    @classmethod
    def from_dict(cls, d: dict) -> "FCPSPredictor":
        """A predictor from its JSON document, validated completely before any scoring
        (:class:`PredictorError`, one line, on anything malformed)."""
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise PredictorError(f"not an fcps predictor file (missing format {FORMAT!r}); give a file "
                                 "written by select --save-model")
        check_format_version(d)
        check_predictor_values(d)
        judges, metadata = d.get("judges"), d.get("metadata", {})
        if not isinstance(judges, list) or not all(isinstance(j, str) and j for j in judges) \
                or len(set(judges)) != len(judges):
            raise PredictorError(_malformed("its judges must be a list of distinct names"))
        if not isinstance(metadata, dict):
            raise PredictorError(_malformed("its metadata must be a JSON object"))
        if d.get("family") == TIE_AVERAGE:
            members = d.get("members")
            if not isinstance(members, list) or not members or \
                    not all(isinstance(m, dict) and m.get("family") != TIE_AVERAGE for m in members):
                raise PredictorError(_malformed("a tie_average needs a list of single-family members"))
            parsed = [cls.from_dict(m) for m in members]
            judges = d.get("judges")
            if not isinstance(judges, list) or set(judges) != {j for m in parsed for j in m.judges}:
                raise PredictorError(_malformed("the judges of a tie_average must be the union of its "
                                                "members' judges"))
            out = cls(judges=list(judges), encoders=[], family=TIE_AVERAGE, model=None,
                      metadata=d.get("metadata", {}), members=parsed)
        else:
            try:
                # the family's model class (families.fitted): no scikit-learn to score
                model = fitted_family(d["family"]).from_state(d["model"])
                encoders = [JudgeEncoder.from_dict(e) for e in d["encoders"]]
                out = cls(judges=list(d["judges"]), encoders=encoders, family=d["family"],
                          model=model, metadata=d.get("metadata", {}))
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
                raise PredictorError(_malformed(_describe(exc))) from None
        try:
            check_structure(out)          # the SQL export's rules (deploy.validate), on every load
        except PredictorError:
            raise
        except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
            raise PredictorError(_malformed(_describe(exc))) from None
        if d.get("support") is not None:
            try:
                check_support(d["support"], out.support_encoders())
            except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
                raise PredictorError(_malformed(f"its support section: {_describe(exc)}")) from None
            out.support = d["support"]
        return out

    @classmethod
    def load(cls, path: str) -> "FCPSPredictor":
        """Read and validate a predictor file; every error names ``path`` (the file is
        untrusted: read within the bounds of :mod:`fcps_core.deploy.validate`)."""
        return cls.from_json(read_predictor_file(path), str(path))

    @classmethod
    def from_json(cls, doc, source: str) -> "FCPSPredictor":
        """:meth:`from_dict` of a parsed document, its errors naming ``source``."""
        try:
            return cls.from_dict(doc)
        except PredictorError as exc:
            raise PredictorError(_naming(str(exc), source)) from None
        except RecursionError:
            raise PredictorError(_naming(_malformed("it nests too deeply"), source)) from None

    @classmethod
    def from_stored(cls, fetch, source: str) -> "FCPSPredictor":
        """A stored run's predictor: ``fetch()`` returns its document (a store is a file a
        user can edit too: its predictor gets the same validation, errors naming ``source``)."""
        try:
            doc = fetch()
        except RecursionError:
            raise PredictorError(f"{source}: its stored predictor nests too deeply to be read; run the "
                                 "selection again") from None
        return cls.from_json(doc, source)


def _naming(message: str, path: str) -> str:
    """A :meth:`FCPSPredictor.from_dict` error with the file it came from."""
    for head, named in (("predictor file ", f"predictor file {path!r} "),
                        ("not an fcps predictor file", f"{path!r} is not an fcps predictor file"),
                        ("the predictor file ", f"the predictor file {path!r} ")):
        if message.startswith(head):
            return named + message[len(head):]
    return f"predictor {path!r}: {message}"


def _malformed(detail: str) -> str:
    return f"predictor file is malformed: {detail}; write it again with select --save-model"


def _describe(exc: BaseException) -> str:
    """An exception as plain words, never a Python repr."""
    if isinstance(exc, KeyError):
        return f"missing entry {exc.args[0]!r}" if exc.args else "a missing entry"
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def check_format_version(d: dict) -> None:
    """The file's ``format_version`` is a whole number this fcps reads."""
    readable = ", ".join(map(str, READABLE_VERSIONS))
    version = d.get("format_version")
    if version is None:
        raise PredictorError(f"predictor file has no format_version (this fcps reads versions {readable}); "
                             "write it again with select --save-model")
    if not isinstance(version, int) or isinstance(version, bool):
        kind = {str: "text", float: "a decimal number", bool: "true/false", list: "a list",
                dict: "an object"}.get(type(version), type(version).__name__)
        raise PredictorError(f"predictor file has format_version {version!r}, which is {kind}, not a whole "
                             f"number (this fcps reads versions {readable}); write it again with "
                             "select --save-model")
    if version not in READABLE_VERSIONS:
        why = "written by a newer fcps: upgrade fcps to read it" if version > FORMAT_VERSION \
            else "not a version fcps ever wrote: write it again with select --save-model"
        raise PredictorError(f"predictor file has format version {version}, which this fcps does not read "
                             f"(it reads versions {readable}; {why})")


#: a predictor file holds at most this many numbers (a K=8 table of a 10-output alphabet
#: with counts and sums stays far below it)
MAX_PREDICTOR_NUMBERS = 5_000_000


def check_predictor_values(d: dict) -> None:
    """Refuse a predictor file before scoring: non-finite numbers, negative counts, oversized
    contents, or encoders that do not match the judges."""
    total = 0
    stack = [("", d, 1)]
    while stack:
        where, v, depth = stack.pop()
        if isinstance(v, (dict, list)) and depth > MAX_DEPTH:
            # a document from anywhere (file, upload, store) stays within the JSON nesting
            # every later json.dumps / recursive reader can take
            raise PredictorError(_malformed(f"it nests deeper than the {MAX_DEPTH} levels a predictor can have"))
        if isinstance(v, dict):
            for k, x in v.items():
                if k == "metadata":
                    if not nesting_ok(x, MAX_DEPTH - depth):
                        raise PredictorError(_malformed(f"its metadata nests deeper than the {MAX_DEPTH} levels a "
                                                        "predictor can have"))
                    continue          # provenance only; never used to score
                if k == "counts" and isinstance(x, list) and any(
                        isinstance(c, (int, float)) and not isinstance(c, bool) and c < 0 for c in x):
                    raise PredictorError(_malformed(f"negative counts in {where or 'the model'}"))
                stack.append((f"{where}.{k}" if where else k, x, depth + 1))
        elif isinstance(v, list):
            total += len(v)
            if total > MAX_PREDICTOR_NUMBERS:
                raise PredictorError(f"predictor file is too large (over {MAX_PREDICTOR_NUMBERS:,} values; "
                                     "a predictor holds far fewer): give a file written by select --save-model")
            stack.extend((where, x, depth + 1) for x in v)
        elif isinstance(v, float) and not math.isfinite(v):
            raise PredictorError(_malformed(f"{where} holds a non-finite number ({v})"))
    if d.get("family") != TIE_AVERAGE:
        encoders, judges = d.get("encoders"), d.get("judges")
        if not isinstance(encoders, list) or not isinstance(judges, list) or not encoders \
                or len(encoders) != len(judges):
            raise PredictorError(_malformed("it needs one encoder per judge"))
        names = [e.get("name") if isinstance(e, dict) else None for e in encoders]
        if names != judges:
            raise PredictorError(_malformed("the encoders do not name the judges in order"))


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")
