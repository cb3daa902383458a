from django.conf import settings
from django.core.wsgi import get_wsgi_application

from config.boot import load_settings
from config.chunked import ChunkedBodies
from files.receiving import LARGEST_BODY

load_settings()
application = ChunkedBodies(get_wsgi_application(), settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
                            upload_limit=LARGEST_BODY)
