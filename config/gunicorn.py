"""gunicorn's configuration, named by the Procfile's web line (``--config
python:config.gunicorn``): gunicorn's master reads it before it binds the port or starts a
worker.

The master never loads the app (each worker does), so without this a wrong setting was found
by each worker in turn: every one exited, the master started another, and the port stayed
held by a process that could never serve. Loading the settings here stops the whole web
process at once, with config.boot's one line naming the variable. Everything else stays on
gunicorn's command line in the Procfile.
"""

from config.boot import load_settings

load_settings()
