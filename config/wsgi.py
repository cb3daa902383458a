from django.conf import settings
from django.core.wsgi import get_wsgi_application

from config.boot import load_settings
from core.infra.dbtimeouts import bound_web_sessions
from edge.chunked import ChunkedBodies
from files.receiving import LARGEST_BODY

load_settings()
bound_web_sessions()  # after the settings: every database session of a web process is bounded
application = ChunkedBodies(get_wsgi_application(), settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
                            upload_limit=LARGEST_BODY)
