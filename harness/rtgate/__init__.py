# SPDX-License-Identifier: GPL-2.0-or-later
"""rtgate: real-time latency gates for kernel CI.

The package, in pipeline order (no module imports from a stage after its own; tests/unit/test_layers.py checks it):

- ``errors``: the one exception family; every user-facing failure is an ``RtgateError`` (exit 2).
- ``core/``: the results model (``model``), threshold files (``thresholds``), the thread plan of a measurement
  (``thread_plan``: which thread runs where, at which priority, under which label), gate evaluation (``gates``) and
  its statistics (``stats``). Everything else reads from here.
- ``parsers/``: every results format (rtgate and rt-tests JSON, histogram text, T: lines, -v samples) into one
  ``RunResult``.
- ``measure/``: taking a measurement: sampler arguments and native gates, preflight (doctor's checks and
  ``require:``), loads, the environment, running the sampler (``runner``), one measurement end to end for
  ``rtgate run`` and the pytest plugin (``orchestrate``).
- ``history/``: results across kernel releases, and the comparisons that find regressions.
- ``reports/``: what people read: text, verdict JSON, JUnit, HTML, plots, KCIDB, the worst-case estimate.
- adapters: ``lava/`` (jobs and results of a LAVA lab), ``fuego/`` (Benchmark.rtgate criteria), ``pytest_plugin/``
  (the hooks, and ``session``: measurements shared by their gates, with the session's reports).
- ``options``: the options the ``rtgate`` command and the pytest plugin share, each declared once.
- ``commands/`` and ``cli``: the ``rtgate`` command, one module per subcommand; ``console``: its script, which guards
  Ctrl-C from the first instant.
"""

__version__ = "0.1.0"
