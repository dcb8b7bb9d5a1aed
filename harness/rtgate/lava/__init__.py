# SPDX-License-Identifier: GPL-2.0-or-later
"""LAVA adapter: jobs from threshold files, and LAVA's results back into verdicts.

Gate math is not here: on the board the sampler's native gates decide (compiled from the same
threshold file); on the host, results are read back as the verdicts LAVA recorded.
"""
