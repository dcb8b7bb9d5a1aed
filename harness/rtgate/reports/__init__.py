# SPDX-License-Identifier: GPL-2.0-or-later
"""What users read: text, verdict JSON, JUnit, HTML, plots, KCIDB, and the worst-case estimate."""
