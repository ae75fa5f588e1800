"""The deployable predictor: a weighted list of fitted members, with their encoders, as JSON.

Every deployed predictor is a list of members ``(weight, Member)``: a member is one
selected (path, K, family) candidate with its judges, encoders and fitted model, and the
prediction is the weighted sum of the members' predictions. A single selected candidate is
a list of one member of weight 1 (its prediction is exactly that model's); the average of
n tied candidates (choice rule in :mod:`fcps_core.selection.choice`) is a list of members of
weight 1/n, a model that several tied candidates compute once with their summed weight
(``SelectionResult.deployed_weights``). Scoring, the SQL export (:mod:`fcps_core.deploy.sql`),
the structural checks (:mod:`fcps_core.deploy.validate`) and the explanations read that one
shape.

A predictor file holds only data (judge names, encoder vocabularies/bin edges/scalar maps,
the family's fitted parameters), never code: users can exchange these files safely.
Format version 3 stores ``members: [{"weight", "judges", "family", "encoders", "model",
"metadata"}]``; versions 1 and 2 (one family at the top level, or an average's
``members`` without weights) are read into the same shape (:func:`_members_v2`).
Refit policy: ``frozen`` deploys the candidate fitted on the calibration block; ``refit``
refits encoders and the family (same hyperparameters) on S + M + V.
"""


from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from ..wording import count_of, noun_for
from ..version import __version__
from ..data.encoding import JudgeEncoder, apply_encoders, encode_panel, prefix_patterns
from ..defaults import TIE_AVERAGE as _AVERAGE_LABEL
from ..errors import PredictorError
from ..defaults import deployed_family_name
from .support import calibration_support, check_support, row_support
from .validate import (MAX_DEPTH, MAX_PREDICTOR_BYTES, check_structure, nesting_ok,  # noqa: F401
                              read_predictor_file, short)
from ..families import PrefixFeatures, fitted_family, get_family
from ..data.panel import Panel

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "fcps-predictor"
#: version 3 stores every predictor as weighted ``members``; version 2 (a single family at
#: the top level, or an unweighted average's ``members``) and version 1 are read unchanged
FORMAT_VERSION = 3
READABLE_VERSIONS = (1, 2, 3)
#: the weights of a file's members sum to 1 within this much (they are proportions)
WEIGHT_TOLERANCE = 1e-9


def average_label(n_members: int) -> str:
    """The family label of a deployed average of ``n_members`` models, as the JSON outputs
    (``select --json``'s ``selected.family``, the audit's ``predictor.family``) and stored
    runs' ``deployed_family`` and version 1-2 files give it: the name of the choice rule that
    makes averages (:data:`fcps_core.defaults.TIE_AVERAGE`)."""
    return _AVERAGE_LABEL


@dataclass
class Member:
    """One fitted model of a predictor: the judges it reads (in path order), one encoder per
    judge, the family and its fitted model, and its provenance (``metadata``)."""

    judges: list[str]
    encoders: list[JudgeEncoder]
    family: str
    model: object
    metadata: dict = field(default_factory=dict)

    def features(self, panel: Panel, *, encoded=None, patterns: bool = True) -> PrefixFeatures:
        """The family's view of ``panel`` (``encoded``: the panel already encoded with this
        member's encoders). ``patterns=False`` leaves the joint-pattern ids out (``None``
        per prefix), for a family that never reads them (``needs_patterns``)."""
        encoded = apply_encoders(panel, self.encoders) if encoded is None else encoded
        ids = prefix_patterns(encoded.codes, encoded.alphabet_sizes) if patterns \
            else [None] * encoded.codes.shape[1]
        return PrefixFeatures(patterns=ids, scores=encoded.scores)

    def predict(self, panel: Panel, *, encoded=None) -> np.ndarray:
        """The member's P(label = 1) for every row of ``panel`` (a :class:`Panel`)."""
        return self.model.predict(self.features(panel, encoded=encoded,
                                                patterns=getattr(self.model, "needs_patterns", True)))

    def to_dict(self, weight: float) -> dict:
        return {"weight": weight, "judges": self.judges, "family": self.family,
                "encoders": [e.to_dict() for e in self.encoders], "model": self.model.get_state(),
                "metadata": self.metadata}


@dataclass
class FCPSPredictor:
    """A deployed predictor: ``members`` is a list of ``(weight, Member)``, weights positive
    and summing to 1; the prediction is ``sum(weight * member.predict)`` (one member of
    weight 1: exactly that member's prediction). ``judges``: the union of the members'
    judges in panel order; ``support``: the calibration support
    (deploy.support.calibration_support), None in files made before fcps recorded it
    (scoring works, audits say what they cannot tell)."""

    judges: list[str]
    members: list[tuple[float, Member]]
    metadata: dict = field(default_factory=dict)
    support: dict | None = None

    @classmethod
    def single(cls, judges, encoders, family: str, model, metadata: dict | None = None,
               support: dict | None = None) -> "FCPSPredictor":
        """A predictor of one member (weight 1)."""
        return cls(judges=list(judges), members=[(1.0, Member(list(judges), list(encoders), family, model))],
                   metadata=dict(metadata or {}), support=support)

    @classmethod
    def average(cls, members: list[Member], judges: list[str] | None = None, metadata: dict | None = None,
                support: dict | None = None) -> "FCPSPredictor":
        """The equal-weight average of ``members`` (weights 1/n; one member: weight 1).
        ``judges``: the union of theirs, in the order given (default: first seen)."""
        n = len(members)
        judges = list(dict.fromkeys(j for m in members for j in m.judges)) if judges is None else list(judges)
        return cls(judges=judges, members=[(1.0 if n == 1 else 1.0 / n, m) for m in members],
                   metadata=dict(metadata or {}), support=support)

    @classmethod
    def from_selection(cls, result) -> "FCPSPredictor":
        """The deployed predictor: the selected candidate (one member), or the average of the
        chosen tied candidates (each member with its own judges, encoders and fitted model)."""
        base = {"refit": result.selector.refit, "panel": result.panel.name,
                "protocol": result.protocol, "choice": result.selector.choice,
                "split": result.split_dict(), "seed": result.blocks.seed}
        # the average's distinct models, each with the share of the tied candidates
        # computing it (SelectionResult.deployed_weights)
        weighted = result.deployed_weights()
        members = [cls._from_candidate(result, result.candidates[i]) for i, _ in weighted]
        wanted = {j for m in members for j in m.judges}
        if len(members) == 1:
            meta = {**base, **members[0].metadata}
            judges = list(members[0].judges)
        else:
            meta = {**base, **(result.selected_val or {}), **(result.selected_test or {}),
                    "n_members": len(members)}
            judges = [j for j in result.panel.judge_names if j in wanted]
        predictor = cls(judges=judges, members=[(w, m) for (_, w), m in zip(weighted, members)], metadata=meta)
        # The rows the deployed models learned from (never T): M or every deployable
        # label under crossfit; S+M+V when the split protocol refits.
        rows = result.fit_rows
        if result.selector.refit != "frozen" and result.protocol != "crossfit":
            b = result.blocks
            rows = np.sort(np.concatenate([b.S, b.M, b.V]))
        predictor.support = calibration_support(result.panel, rows, predictor.support_encoders())
        return predictor

    @classmethod
    def _from_candidate(cls, result, sel) -> Member:
        sel_idx = list(sel.judge_idx)
        meta = {"path_rule": sel.path_rule, "K": sel.K, "params": sel.params,
                "val_mse": sel.val_mse, "test_mse": sel.test_mse}
        # Under crossfit the models were already refitted on every deployable label.
        if result.selector.refit == "frozen" or result.protocol == "crossfit":
            encoders = [result.encoded.encoders[j] for j in sel_idx]
            return Member(judges=list(sel.judges), encoders=encoders, family=sel.family,
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
        return Member(judges=list(sel.judges), encoders=encoded.encoders, family=sel.family, model=model,
                      metadata=meta)

    # -- the members -----------------------------------------------------------------------
    @property
    def models(self) -> list[Member]:
        """The members, without their weights."""
        return [m for _, m in self.members]

    @property
    def families(self) -> list[str]:
        """Each member's family, in member order."""
        return [m.family for _, m in self.members]

    @property
    def family(self) -> str:
        """The deployed family label: the member's family for one member, else
        :func:`average_label` (as ``select --json`` and the audit report it)."""
        return self.members[0][1].family if len(self.members) == 1 else average_label(len(self.members))

    @property
    def display_name(self) -> str:
        """For people: the family for one member, "average of N models" for more."""
        return deployed_family_name(self.families[0], len(self.members))

    def support_encoders(self) -> list[JudgeEncoder]:
        """One encoder per judge of the predictor (a judge takes the first member's encoder
        that has it): the encoding its support is counted in."""
        found = {}
        for m in self.models:
            for e in m.encoders:
                found.setdefault(e.name, e)
        return [found[j] for j in self.judges]

    @property
    def table_like(self) -> bool:
        """Whether the deployed prediction reads the joint table (any member does)."""
        return any(fitted_family(f).table_like for f in self.families)

    def row_support(self, panel: Panel, *, encoded=None):
        """Per-row support of ``panel`` (deploy.support.RowSupport), or None when the file
        has no support section. ``encoded``: the panel already encoded with
        :meth:`support_encoders` (saves encoding it twice)."""
        if self.support is None:
            return None
        if encoded is None:
            panel, _ = self.read_outputs(panel)
        else:
            self.check_judges(panel)
        return self._row_support(panel, encoded)

    def _row_support(self, panel: Panel, encoded=None):
        """:meth:`row_support` of a panel already read (:meth:`read_outputs`)."""
        if self.support is None:
            return None
        return row_support(self.support, self.support_encoders(), panel, table_like=self.table_like,
                           encoded=encoded)

    def as_panel(self, data: Panel | pd.DataFrame | np.ndarray) -> Panel:
        """``data`` -- a Panel, a pandas DataFrame (one column per judge, optional
        ``item_id``/``group_id``) or a 2-D numpy array (columns in :attr:`judges` order),
        NaN a missing output -- as the panel ``score`` reads: each judge with the schema
        the predictor saw (:func:`fcps_core.deploy.frame.traffic_panel`)."""
        if isinstance(data, Panel):
            return data
        from .frame import traffic_panel
        return traffic_panel(data, self.judges, self.judge_schemas(), self.known_outputs())

    def known_outputs(self) -> dict[str, set]:
        """Each judge's outputs some member's encoder knows (vocabulary and scalar map; the
        bin labels of a continuous judge)."""
        known: dict[str, set] = {}
        for m in self.models:
            for e in m.encoders:
                known.setdefault(e.name, set()).update(e.vocab, e.scalar_map)
        return known

    def read_outputs(self, panel: Panel | pd.DataFrame | np.ndarray):
        """(panel, readings): ``panel`` (:meth:`as_panel`) with each text output the
        predictor does not know but that matches one of its judge's calibration outputs up
        to ASCII case and surrounding spaces read as that output, and per judge what was
        so read and what stays never seen (:func:`fcps_core.deploy.outputs.read_known_outputs`).
        :meth:`score` and :meth:`predict` read every panel so; call this for the report."""
        from .outputs import read_known_outputs
        panel = self.as_panel(panel)
        self.check_judges(panel)
        return read_known_outputs(panel, self.known_outputs(), self.judge_schemas())

    def score(self, panel: Panel | pd.DataFrame | np.ndarray):
        """(predictions, per-row support or None), encoding the panel once where the
        predictor and its support share encoders (a predictor of one member).
        ``panel``: a Panel, DataFrame or array (:meth:`as_panel`); its outputs are read
        as :meth:`read_outputs` reads them."""
        panel, _ = self.read_outputs(panel)      # checks the judges first: one clear error
        if len(self.members) == 1 and self.members[0][0] == 1.0:
            member = self.members[0][1]
            encoded = apply_encoders(panel, member.encoders)
            return member.predict(panel, encoded=encoded), self._row_support(panel, encoded)
        return self._weighted(panel), self._row_support(panel)

    def check_judges(self, panel: Panel) -> None:
        """One clear error naming every judge column the panel lacks."""
        missing = [j for j in self.judges if j not in panel.judge_names]
        if missing:
            raise PredictorError(f"the panel lacks judge {noun_for(len(missing), 'column')} the predictor needs: "
                                 + ", ".join(short(m) for m in missing[:5])
                                 + (f" and {len(missing) - 5} more" if len(missing) > 5 else ""))

    def judge_schemas(self) -> dict[str, str]:
        """Each judge's schema as the predictor saw it at fitting time."""
        return {e.name: e.schema for m in self.models for e in m.encoders}

    # -- predict -------------------------------------------------------------------------
    def _weighted(self, panel: Panel) -> np.ndarray:
        """sum(weight * member prediction), added in member order; one member of weight 1
        is returned as its own prediction (no arithmetic: bit-identical)."""
        if len(self.members) == 1 and self.members[0][0] == 1.0:
            return self.members[0][1].predict(panel)
        total = None
        for w, m in self.members:
            part = w * m.predict(panel)
            total = part if total is None else total + part
        return total

    def predict(self, panel: Panel | pd.DataFrame | np.ndarray) -> np.ndarray:
        """P(label = 1) in [0, 1] for every row of ``panel``: a Panel, a pandas DataFrame
        (wide: one column per judge, named as the judge, plus optional ``item_id`` and
        ``group_id``) or a 2-D numpy array (columns in :attr:`judges` order); NaN is a
        missing output. A DataFrame or array is read as ``score`` reads a traffic file
        (:meth:`as_panel`), so ``predict(pd.read_csv(path))`` equals ``score path``; an
        output that differs from a calibration output only by ASCII case is read as it
        (:meth:`read_outputs`)."""
        panel, _ = self.read_outputs(panel)      # one clear error naming every missing judge
        return self._weighted(panel)

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        """The version-3 document (docs/json-contract.md): judges, members with their weights,
        metadata and the calibration support."""
        # "family": the label for readers of the document (stores, runs lists); not read back
        out = {"format": FORMAT, "format_version": FORMAT_VERSION, "fcps_version": __version__,
               "judges": self.judges, "family": self.family,
               "members": [m.to_dict(w) for w, m in self.members],
               "metadata": self.metadata}
        if self.support is not None:
            out["support"] = self.support
        return out

    def save(self, path: str, *, force: bool = False) -> None:
        """Write the predictor as JSON (atomically; an existing file only with ``force``)."""
        from ..files.safe_write import atomic_output
        with atomic_output(path, force=force) as fh:
            json.dump(self.to_dict(), fh, indent=1, allow_nan=False, default=_json_default)

    @classmethod
    def from_dict(cls, d: dict) -> "FCPSPredictor":
        """A predictor from its JSON document (any readable format version), validated
        completely before any scoring (:class:`PredictorError`, one line, on anything
        malformed)."""
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
        weighted = _members_v3(d) if d["format_version"] >= 3 else _members_v2(d)
        members = [(w, _member_from_dict(m)) for w, m in weighted]
        if set(judges) != {j for _, m in members for j in m.judges}:
            raise PredictorError(_malformed("the predictor's judges must be the union of its members' judges"))
        out = cls(judges=list(judges), members=members, metadata=metadata)
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


def _members_v3(d: dict) -> list[tuple[float, dict]]:
    """(weight, member document) of a version-3 file: weights finite, positive, summing to 1."""
    members = d.get("members")
    if not isinstance(members, list) or not members:
        raise PredictorError(_malformed("it needs a non-empty list of members"))
    if not all(isinstance(m, dict) for m in members):
        raise PredictorError(_malformed("each of its members must be a JSON object"))
    weights = [m.get("weight") for m in members]
    if not all(isinstance(w, (int, float)) and not isinstance(w, bool) and math.isfinite(w) and w > 0
               for w in weights):
        raise PredictorError(_malformed("every member needs a positive weight"))
    if abs(math.fsum(weights) - 1.0) > WEIGHT_TOLERANCE:
        raise PredictorError(_malformed(f"its member weights sum to {math.fsum(weights):.12g}, not 1"))
    return [(float(w), m) for w, m in zip(weights, members)]


def _members_v2(d: dict) -> list[tuple[float, dict]]:
    """(weight, member document) of a version 1-2 file: one family at the top level (weight
    1), or an average (family :func:`average_label`) of single-family ``members``, each 1/n."""
    if d.get("family") != _AVERAGE_LABEL:
        return [(1.0, d)]
    members = d.get("members")
    if not isinstance(members, list) or not members or \
            not all(isinstance(m, dict) and m.get("family") != _AVERAGE_LABEL for m in members):
        raise PredictorError(_malformed("an average needs a list of single-family members"))
    n = len(members)
    return [(1.0 if n == 1 else 1.0 / n, m) for m in members]


def _member_from_dict(m: dict) -> Member:
    """One member from its document (a version-3 member, or a version 1-2 single-family
    predictor or average member)."""
    encoders, judges = m.get("encoders"), m.get("judges")
    if not isinstance(encoders, list) or not isinstance(judges, list) or not encoders \
            or len(encoders) != len(judges):
        raise PredictorError(_malformed("it needs one encoder per judge"))
    names = [e.get("name") if isinstance(e, dict) else None for e in encoders]
    if names != judges or not all(isinstance(j, str) and j for j in judges) or len(set(judges)) != len(judges):
        raise PredictorError(_malformed("the encoders do not name the judges in order"))
    metadata = m.get("metadata", {})
    if not isinstance(metadata, dict):
        raise PredictorError(_malformed("a member's metadata must be a JSON object"))
    try:
        # the family's model class (families.fitted): no scikit-learn to score
        model = fitted_family(m["family"]).from_state(m["model"])
        return Member(judges=list(judges), encoders=[JudgeEncoder.from_dict(e) for e in encoders],
                      family=m["family"], model=model, metadata=metadata)
    except (KeyError, TypeError, ValueError, AttributeError, IndexError, OverflowError) as exc:
        raise PredictorError(_malformed(_describe(exc))) from None


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


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")
