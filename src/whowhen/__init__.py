"""whowhen: exact-label benchmarks and evaluation for failure attribution in agent systems."""

from importlib.metadata import PackageNotFoundError, version

from whowhen.errors import WhowhenError

__all__ = ["WhowhenError"]

try:  # one source of the version: pyproject.toml, as installed
    __version__ = version("whowhen")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
