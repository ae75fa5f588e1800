"""Reference implementations the package is tested against (not shipped)."""
