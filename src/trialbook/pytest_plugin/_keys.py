"""The stash key the plugin's hooks and fixtures share, in a module that imports nothing else of trialbook.

Loading the plugin must stay cheap: pytest imports it in every session of every project with trialbook
installed, so the evidence model is imported only when a session records evidence or a fixture runs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from ._state import PluginState

__all__ = ["STATE"]

STATE: pytest.StashKey[PluginState] = pytest.StashKey()
