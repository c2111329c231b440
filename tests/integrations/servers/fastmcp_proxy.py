"""A real FastMCP proxy (``fastmcp.server.create_proxy``) in front of ``elicit_server.py``.

Since FastMCP 4.2 the proxy forwards a backend's URL-mode elicitation as URL mode (4.1 turned
it into an empty form, which a guard would have judged as a harmless form). The backend's
era mirrors the front connection's.

Run: ``python fastmcp_proxy.py`` (stdio).
"""

from __future__ import annotations

import sys
from pathlib import Path

from fastmcp.client.transports import StdioTransport
from fastmcp.server import create_proxy

BACKEND = Path(__file__).with_name("elicit_server.py")


def main() -> None:
    backend = StdioTransport(command=sys.executable, args=[str(BACKEND)])
    create_proxy(backend, name="fastmcp-proxy").run(show_banner=False)


if __name__ == "__main__":
    main()
