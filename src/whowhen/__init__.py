"""whowhen: exact-label benchmarks and evaluation for failure attribution in agent systems."""

from whowhen.errors import WhowhenError

__all__ = ["WhowhenError"]
__version__ = "0.1.0"
