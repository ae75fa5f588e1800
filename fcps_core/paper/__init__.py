"""The paper's code: regimes, sweeps, robustness checks, analyses, the reproduction report."""
