# SPDX-License-Identifier: GPL-2.0-or-later
"""Fuego adapter: criteria, reference and chart files for Benchmark.rtgate, from a threshold file."""
