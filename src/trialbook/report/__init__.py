"""Renderers of finished runs: the terminal table, Markdown summary and PR comment, JUnit, the HTML viewer.

Everything here is pure: a renderer takes rows or a suite and returns text. The rows every renderer
reads are exported here; each renderer is imported from its own module (``report.markdown``,
``report.terminal``, ``report.junit``, ``report.html``, ...), so a run that prints a table never loads
the viewer's templates or the XML machinery.
"""

from __future__ import annotations

from ._rows import BaseResult, ListedEval, ReviewRow, cached_note

__all__ = ["BaseResult", "ListedEval", "ReviewRow", "cached_note"]
