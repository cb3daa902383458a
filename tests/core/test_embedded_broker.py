import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import django
django.setup()
from config.celery import app
app.control.ping(timeout=0.2)  # a fanout broadcast, as the worker's remote control uses
app.send_task("formflow.probe")
"""


def test_embedded_broker_keeps_every_file_in_the_data_folder(tmp_path):
    workdir, data = tmp_path / "cwd", tmp_path / "data"
    workdir.mkdir()
    environment = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "CELERY_BROKER_URL"}
    }
    environment.update(
        DJANGO_SETTINGS_MODULE="config.settings", DATA_DIR=str(data), PYTHONPATH=str(ROOT)
    )

    result = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=workdir,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )

    assert result.returncode == 0, result.stderr
    assert list(workdir.iterdir()) == []
    assert list((data / "broker" / "queue").iterdir())  # the task is waiting in the queue
