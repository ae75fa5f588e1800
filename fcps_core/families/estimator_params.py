"""scikit-learn's parameter protocol for the families, without importing scikit-learn.

The families are the engine's private solvers: the selection fits thousands of them, in the
main process and in its fold worker processes, none of which needs anything else of
scikit-learn, and importing ``sklearn.base`` pulls in SciPy's statistics, pandas and most of
``sklearn.utils`` in every one of those processes. :class:`EstimatorParams` gives them what
scikit-learn's ``BaseEstimator`` gave them and what the code and scikit-learn's tools read:

* ``get_params(deep=True)`` / ``set_params(**params)``: the ``__init__`` arguments found by
  introspecting its signature (``BaseEstimator._get_param_names``: sorted, no ``*args``),
  nested ``<component>__<parameter>`` names, the same ValueError for an unknown name; so
  ``sklearn.base.clone`` and the parameter checks of ``sklearn.utils.estimator_checks``
  work on a family (``tests/test_estimators.py``);
* ``repr``: ``ClassName(param=value)`` with the parameters that differ from their defaults
  (scikit-learn's ``print_changed_only``);
* ``__sklearn_tags__``: ``BaseEstimator``'s default tags, built only when scikit-learn's
  own tools ask (``get_tags``, ``check_is_fitted``), so they import scikit-learn themselves.

The public scikit-learn estimators on plain arrays are :mod:`fcps_core.sklearn`, which
subclass ``BaseEstimator`` itself and wrap these families.
"""

from __future__ import annotations

import inspect
from collections import defaultdict


class EstimatorParams:
    """Base class giving an estimator scikit-learn's ``get_params``/``set_params``/``repr``
    from the parameters of its ``__init__`` (each stored under its own name)."""

    @classmethod
    def _get_param_names(cls) -> list[str]:
        """The ``__init__`` parameters other than ``self`` and ``**kwargs``, sorted (as
        ``BaseEstimator._get_param_names``); ``*args`` is refused."""
        init = cls.__init__
        if init is object.__init__:
            return []
        parameters = [p for p in inspect.signature(init).parameters.values()
                      if p.name != "self" and p.kind != p.VAR_KEYWORD]
        for p in parameters:
            if p.kind == p.VAR_POSITIONAL:
                raise RuntimeError(f"{cls.__name__} must list its parameters in the signature of "
                                   f"its __init__ (no *args), as scikit-learn estimators do")
        return sorted(p.name for p in parameters)

    def get_params(self, deep: bool = True) -> dict:
        """Parameter names mapped to their values; with ``deep``, the parameters of a
        parameter that is itself an estimator too, as ``<name>__<its parameter>``."""
        out = {}
        for key in self._get_param_names():
            value = getattr(self, key)
            if deep and hasattr(value, "get_params") and not isinstance(value, type):
                out.update((f"{key}__{k}", v) for k, v in value.get_params().items())
            out[key] = value
        return out

    def set_params(self, **params) -> "EstimatorParams":
        """Set parameters (``<component>__<parameter>`` for a nested estimator's); returns
        self. An unknown name is a ValueError listing the valid ones."""
        if not params:
            return self
        valid = self.get_params(deep=True)
        nested: dict[str, dict] = defaultdict(dict)
        for key, value in params.items():
            key, delim, sub_key = key.partition("__")
            if key not in valid:
                raise ValueError(f"Invalid parameter {key!r} for estimator {self}. "
                                 f"Valid parameters are: {self._get_param_names()!r}.")
            if delim:
                nested[key][sub_key] = value
            else:
                setattr(self, key, value)
                valid[key] = value
        for key, sub_params in nested.items():
            valid[key].set_params(**sub_params)
        return self

    def __repr__(self) -> str:
        """``ClassName(name=value, ...)`` for the parameters whose repr differs from their
        default's (NaN equal to NaN), in name order."""
        init = type(self).__init__
        defaults = {} if init is object.__init__ else {
            p.name: p.default for p in inspect.signature(init).parameters.values()}
        changed = []
        for key, value in self.get_params(deep=False).items():
            default = defaults.get(key, inspect.Parameter.empty)
            if repr(value) != repr(default) and not (_is_nan(value) and _is_nan(default)):
                changed.append(f"{key}={value!r}")
        return f"{type(self).__name__}({', '.join(changed)})"

    def __sklearn_tags__(self):
        """``BaseEstimator``'s default tags, for scikit-learn's tools (which have imported
        scikit-learn already)."""
        from sklearn.utils import Tags, TargetTags
        return Tags(estimator_type=None, target_tags=TargetTags(required=False),
                    transformer_tags=None, regressor_tags=None, classifier_tags=None)


def _is_nan(value) -> bool:
    return isinstance(value, float) and value != value
