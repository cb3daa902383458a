"""The gunicorn worker class, ``edge.worker.Worker``, which the Procfile's web line names.

gunicorn keeps what it is good at (processes, restarts, ``HUP`` reloads, ``--max-requests``),
and each process serves with uvicorn's event loop, ``EdgeProtocol`` in front of uvicorn's
httptools protocol. ``--threads`` is the number of threads per process that run Django.
"""

from __future__ import annotations

import sys

from gunicorn.arbiter import Arbiter
from uvicorn_worker import UvicornWorker

from edge.protocol import EdgeProtocol


class Worker(UvicornWorker):
    CONFIG_KWARGS = {
        "loop": "auto",  # uvloop where it is installed
        "http": EdgeProtocol,
        "interface": "asgi3",
        "lifespan": "off",
        "ws": "none",
        # The app reads client addresses itself (TRUSTED_PROXY_COUNT); uvicorn must not
        # rewrite them from X-Forwarded-For.
        "proxy_headers": False,
        "server_header": False,
    }

    def load_wsgi(self) -> None:
        try:
            super().load_wsgi()
        except SystemExit as refusal:
            # The app refused to load (config.boot has said why). Any other exit code makes
            # the master start another worker, which fails the same way, hundreds of times a
            # minute while it holds the port; this one makes it stop ("Worker failed to boot").
            if isinstance(refusal.code, str):
                sys.stderr.write(f"{refusal.code}\n")
            sys.exit(Arbiter.WORKER_BOOT_ERROR)
        if hasattr(self.wsgi, "threads"):
            self.wsgi.threads = self.cfg.threads
