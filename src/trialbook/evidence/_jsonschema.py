"""Print the committed JSON Schema of schema-4.0 evidence.

Regenerate the committed copy after changing an evidence record::

    uv run --frozen python -m trialbook.evidence._jsonschema > src/trialbook/evidence/schema-4.0.json

The package does not import this module, so running it with ``-m`` does not load it twice.
"""

from __future__ import annotations

import sys

from ._schema import render_schema, suite_json_schema

__all__ = ["main", "render_schema", "suite_json_schema"]


def main() -> None:
    """Write the schema to standard output, exactly as it is committed."""
    sys.stdout.write(render_schema())


if __name__ == "__main__":
    main()
