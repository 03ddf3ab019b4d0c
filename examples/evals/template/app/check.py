"""Exit 0 when acme.toml names a project and a region, as the deploy guide requires."""

import sys
import tomllib
from pathlib import Path

config_path = Path("acme.toml")
if not config_path.exists():
    sys.exit("acme.toml is missing: run step 2 of the guide")
config = tomllib.loads(config_path.read_text())
missing = [key for key in ("project", "region", "entry") if not config.get(key)]
if missing:
    sys.exit(f"acme.toml lacks {', '.join(missing)}")
print(f"config ok: {config['project']} in {config['region']}")
