"""The app the web server runs: Django's WSGI app behind the event-loop bridge
(``edge/``). Run it with gunicorn's ``-k edge.worker.Worker``."""

from django.conf import settings

from config.wsgi import application as wsgi_application
from edge.bridge import WsgiBridge
from files.receiving import LARGEST_BODY

application = WsgiBridge(wsgi_application, settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
                         upload_limit=LARGEST_BODY)
