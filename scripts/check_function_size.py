"""Fail when a function is longer than 80 lines: a reader should see one on a screen or two.

Complexity is ruff's job (C901, at most 20); length is this script's, since ruff counts statements,
not lines. The count runs from ``def`` to the last line, the docstring included; decorators (a
command's option list) are not counted.

    uv run --frozen python scripts/check_function_size.py src tests scripts benchmarks
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

MAX_LINES = 80


def long_functions(path: Path) -> list[str]:
    """``file:line name (N lines)`` for every function in ``path`` over :data:`MAX_LINES`."""
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.end_lineno is not None:
            lines = node.end_lineno - node.lineno + 1
            if lines > MAX_LINES:
                found.append(f"{path}:{node.lineno}: {node.name} is {lines} lines (at most {MAX_LINES})")
    return found


def main(roots: list[str]) -> int:
    """Check every ``*.py`` under ``roots``; print each long function and return 1 if there was one."""
    found = [
        line for root in roots for path in sorted(Path(root).rglob("*.py")) for line in long_functions(path)
    ]
    print("\n".join(found) or f"no function over {MAX_LINES} lines")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["src"]))
