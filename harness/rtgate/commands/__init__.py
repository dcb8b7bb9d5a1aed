"""Subcommands: each module has register(subparsers) and a handler set on its parser."""
