"""Frozen baselines that benchmarks time against and tests check the engine with."""
