"""trialbook's version: the one place it is written (the build reads it from here, see pyproject.toml).

Kept as a constant rather than read through ``importlib.metadata``, whose import (email parsing, zip
and CSV readers) cost every ``trialbook`` command about 60 ms of CPU before it did anything.
"""

__version__ = "0.1.0"
