#!/usr/bin/env python3
"""The container's health check (compose.yaml): exit 0 when this container's web process
answers ``GET /readyz`` with 200, else 1 with one line saying what it answered.

It asks as the TLS proxy in front does: the Host of BASE_URL (so ALLOWED_HOSTS accepts it)
and X-Forwarded-Proto of BASE_URL's scheme (so an https site does not redirect the probe).
Standard library only, like every script the image runs.
"""

from __future__ import annotations

import os
import sys
from urllib.parse import urlsplit

import stack


def main() -> int:
    base = urlsplit(os.environ.get("BASE_URL", "http://localhost:8000"))
    port = os.environ.get("PORT", "8000")
    headers = {"Host": base.netloc, "X-Forwarded-Proto": base.scheme}
    status, body = stack.probe(f"http://127.0.0.1:{port}/readyz", headers=headers)
    if status == 200:
        return 0
    failing = sorted(name for name, check in ((body or {}).get("checks") or {}).items()
                     if not check.get("ok"))
    print(f"readyz answered {status or 'nothing'}; failing: {', '.join(failing) or '-'}")
    return 1


if __name__ == "__main__":
    sys.exit(main())
