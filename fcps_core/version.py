"""The package version (one place; imported by the package, predictors, the store and reports)."""

__version__ = "0.1.0"
