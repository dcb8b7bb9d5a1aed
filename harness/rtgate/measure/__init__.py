# SPDX-License-Identifier: GPL-2.0-or-later
"""Taking a measurement: sampler arguments, requirements, load, environment, running the sampler, sessions."""
