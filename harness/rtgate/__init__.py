"""rtgate: real-time latency gates for kernel CI."""

__version__ = "0.1.0"
