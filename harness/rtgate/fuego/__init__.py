"""Fuego adapter: criteria, reference and chart files for Benchmark.rtgate, from a threshold file."""
