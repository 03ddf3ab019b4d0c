"""trialbook: find out whether the prompts you ship still work when real coding agents follow them."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("trialbook")
except PackageNotFoundError:  # pragma: no cover - running from a source tree without metadata
    __version__ = "0.0.0+unknown"

__all__ = ["__version__"]
