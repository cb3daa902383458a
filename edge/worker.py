"""The gunicorn worker class, ``edge.worker.Worker``, which the Procfile's web line names.

gunicorn keeps what it is good at (processes, restarts, ``HUP`` reloads, ``--max-requests``),
and each process serves with uvicorn's event loop, ``EdgeProtocol`` in front of uvicorn's
httptools protocol. ``--threads`` is the number of threads per process that run Django.
"""

from __future__ import annotations

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
        super().load_wsgi()
        if hasattr(self.wsgi, "threads"):
            self.wsgi.threads = self.cfg.threads
