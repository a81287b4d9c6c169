"""Benchmark harness of sklearn-dpsynth (``python -m benchmarks.run --help``)."""
