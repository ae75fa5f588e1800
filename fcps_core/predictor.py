"""The deployable predictor: the selected (path, K, family) with its encoders, as JSON.

A predictor file holds only data (judge names, encoder vocabularies/bin edges/scalar maps,
the family's fitted parameters), never code: users can exchange these files safely.
Refit policy: ``frozen`` deploys the candidate fitted on the calibration block; ``refit``
refits encoders and the family (same hyperparameters) on S + M + V.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np

from . import __version__
from .encoding import JudgeEncoder, apply_encoders, encode_panel, prefix_patterns
from .errors import PredictorError
from .families import PrefixFeatures, get_family
from .panel import Panel

FORMAT = "fcps-predictor"
FORMAT_VERSION = 1


@dataclass
class FCPSPredictor:
    judges: list[str]
    encoders: list[JudgeEncoder]
    family: str
    model: object
    metadata: dict = field(default_factory=dict)

    @classmethod
    def from_selection(cls, result) -> "FCPSPredictor":
        sel = result.selected
        sel_idx = list(sel.judge_idx)
        meta = {"path_rule": sel.path_rule, "K": sel.K, "params": sel.params,
                "val_mse": sel.val_mse, "test_mse": sel.test_mse,
                "refit": result.selector.refit, "panel": result.panel.name,
                "split": result.blocks.sizes(), "seed": result.blocks.seed}
        if result.selector.refit == "frozen":
            encoders = [result.encoded.encoders[j] for j in sel_idx]
            return cls(judges=sel.judges, encoders=encoders, family=sel.family,
                       model=result.models[sel.index], metadata=meta)
        b = result.blocks
        rows = np.sort(np.concatenate([b.S, b.M, b.V]))
        sub = result.panel.subset_judges(sel.judges)
        encoded = encode_panel(sub, rows, n_bins=result.selector.n_bins)
        feats = PrefixFeatures(patterns=prefix_patterns(encoded.codes, encoded.alphabet_sizes),
                               scores=encoded.scores)
        model = result.selector.family_instance(sel.family, sel.params)
        rest = np.setdiff1d(np.arange(result.panel.n_rows), np.concatenate([rows, b.T]))
        model.fit(feats.take(rows), result.panel.labels[rows],
                  feats.take(rest) if type(model).uses_unlabelled else None)
        meta["refit_rows"] = int(len(rows))
        return cls(judges=sel.judges, encoders=encoded.encoders, family=sel.family, model=model,
                   metadata=meta)

    # -- predict -------------------------------------------------------------------------
    def features(self, panel: Panel) -> PrefixFeatures:
        missing = [j for j in self.judges if j not in panel.judge_names]
        if missing:
            raise PredictorError("the panel lacks judge column(s) the predictor needs: "
                                 + ", ".join(repr(m) for m in missing))
        encoded = apply_encoders(panel, self.encoders)
        return PrefixFeatures(patterns=prefix_patterns(encoded.codes, encoded.alphabet_sizes),
                              scores=encoded.scores)

    def predict(self, panel: Panel) -> np.ndarray:
        """P(label = 1) in [0, 1] for every row of ``panel``."""
        return self.model.predict(self.features(panel))

    # -- JSON ----------------------------------------------------------------------------
    def to_dict(self) -> dict:
        return {"format": FORMAT, "format_version": FORMAT_VERSION, "fcps_version": __version__,
                "judges": self.judges, "family": self.family,
                "encoders": [e.to_dict() for e in self.encoders],
                "model": self.model.get_state(), "metadata": self.metadata}

    def save(self, path: str) -> None:
        with open(path, "w", encoding="utf-8") as fh:
            json.dump(self.to_dict(), fh, indent=1, allow_nan=False, default=_json_default)

    @classmethod
    def from_dict(cls, d: dict) -> "FCPSPredictor":
        if not isinstance(d, dict) or d.get("format") != FORMAT:
            raise PredictorError("not an fcps predictor file (missing format 'fcps-predictor')")
        if d.get("format_version") != FORMAT_VERSION:
            raise PredictorError(f"predictor format version {d.get('format_version')} is not supported "
                                 f"(this fcps reads version {FORMAT_VERSION})")
        try:
            model = get_family(d["family"]).from_state(d["model"])
            encoders = [JudgeEncoder.from_dict(e) for e in d["encoders"]]
            return cls(judges=list(d["judges"]), encoders=encoders, family=d["family"],
                       model=model, metadata=d.get("metadata", {}))
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as exc:
            raise PredictorError(f"predictor file is malformed: {exc!r}") from None

    @classmethod
    def load(cls, path: str) -> "FCPSPredictor":
        try:
            with open(path, encoding="utf-8") as fh:
                d = json.load(fh)
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise PredictorError(f"cannot read predictor {path!r}: {exc}") from None
        return cls.from_dict(d)


def _json_default(o):
    if isinstance(o, (np.integer,)):
        return int(o)
    if isinstance(o, (np.floating,)):
        return float(o)
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"not JSON serialisable: {type(o)}")
