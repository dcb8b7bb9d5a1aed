# SPDX-License-Identifier: GPL-2.0-or-later
"""Subcommands: each module has register(subparsers) and a handler set on its parser."""
