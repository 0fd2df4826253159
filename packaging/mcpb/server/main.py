"""Entry point of the Claude Desktop extension: `uv run --directory <bundle> server/main.py`.

uv installs the pinned dependencies (pyproject.toml beside this folder) into the bundle's own
environment; the package itself is not installed, it sits next to this folder. Claude Desktop
passes the settings of its form as environment variables; an optional one the user left empty
arrives as an empty string and is dropped here, so the server's default applies.
"""

import os
import sys
from pathlib import Path

OPTIONAL = ("NEXTCLOUD_MCP_PERMISSIONS", "CONFIRM_DESTRUCTIVE")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
for name in OPTIONAL:
    if not os.environ.get(name, "").strip():
        os.environ.pop(name, None)

from nextcloud_mcp_server.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main(["run", "--serve-config-errors", *sys.argv[1:]]))
