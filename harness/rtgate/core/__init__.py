# SPDX-License-Identifier: GPL-2.0-or-later
"""The centre of the pipeline: the results model, threshold files, gate evaluation and its statistics."""
