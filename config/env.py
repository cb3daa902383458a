"""Typed access to the environment. The only module that reads ``os.environ``."""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from urllib.parse import urlsplit

from cryptography.fernet import Fernet

TRUE_VALUES = {"1", "true", "yes", "on"}
FALSE_VALUES = {"0", "false", "no", "off", ""}


class ConfigError(RuntimeError):
    pass


def string(name: str, default: str = "") -> str:
    return os.environ.get(name, default)


def optional(name: str) -> str | None:
    value = os.environ.get(name, "").strip()
    return value or None


def boolean(name: str, default: bool = False) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in TRUE_VALUES:
        return True
    if value in FALSE_VALUES:
        return False
    raise ConfigError(f"{name} must be a boolean (true/false), got {raw!r}")


def choice(name: str, choices: tuple[str, ...], default: str) -> str:
    value = os.environ.get(name, default).strip().lower() or default
    if value not in choices:
        raise ConfigError(f"{name} must be one of {', '.join(choices)}, got {value!r}")
    return value


def integer(name: str, default: int, minimum: int | None = None) -> int:
    raw = os.environ.get(name)
    if raw is None or not raw.strip():
        return default
    try:
        value = int(raw)
    except ValueError:
        raise ConfigError(f"{name} must be an integer, got {raw!r}") from None
    if minimum is not None and value < minimum:
        raise ConfigError(f"{name} must be >= {minimum}, got {value}")
    return value


def string_list(name: str, default: str) -> list[str]:
    raw = os.environ.get(name, default)
    return [item.strip() for item in raw.split(",") if item.strip()]


def integer_list(name: str, default: str) -> list[int]:
    items = string_list(name, default)
    try:
        values = [int(item) for item in items]
    except ValueError:
        raise ConfigError(f"{name} must be comma-separated integers, got {items!r}") from None
    if any(value < 0 for value in values):
        raise ConfigError(f"{name} must not contain negative numbers")
    return values


def http_url(name: str, default: str) -> str:
    """An absolute http(s) URL, without a trailing slash. ``forms.example.com`` alone would
    make every form endpoint and emailed link relative, so it stops the start."""
    value = os.environ.get(name, "").strip() or default
    parts = urlsplit(value)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ConfigError(
            f"{name} must be an absolute http(s) URL such as https://forms.example.com, "
            f"got {value!r}")
    return value.rstrip("/")


def url(name: str, schemes: tuple[str, ...]) -> str | None:
    """An optional URL whose scheme is one of ``schemes`` (checked here, where the variable's
    name is known, instead of failing later inside a library)."""
    value = optional(name)
    if value is None:
        return None
    scheme = urlsplit(value).scheme
    if scheme not in schemes:
        shown = f"{scheme}://" if scheme else "no scheme"
        raise ConfigError(
            f"{name} must start with {' or '.join(s + '://' for s in schemes)}, got {shown}")
    return value


def export_default(name: str, value: str) -> str:
    """Set ``name`` for this process and its children unless the operator set it: for a
    library that reads its own variable (prometheus-client's PROMETHEUS_MULTIPROC_DIR)."""
    return os.environ.setdefault(name, value)


def required(name: str, why: str) -> str:
    value = optional(name)
    if value is None:
        raise ConfigError(f"{name} must be set: {why}")
    return value


def private_folder(path: Path) -> Path:
    """Create ``path`` readable by this user alone (0700), its files 0600.

    The folder holds the generated keys and, on the embedded setup, the database and queue.
    The umask makes every file these processes create there later private too (SQLite's
    journals, queued messages, beat's schedule).
    """
    os.umask(0o077)
    path.mkdir(parents=True, exist_ok=True)
    for folder, _subfolders, files in os.walk(path):
        _chmod(Path(folder), 0o700)
        for name in files:
            _chmod(Path(folder) / name, 0o600)
    return path


def _chmod(path: Path, mode: int) -> None:
    try:
        if path.stat().st_mode & 0o777 != mode:
            path.chmod(mode)
    except FileNotFoundError:  # another process removed it meanwhile (a consumed message)
        pass


def generated_secret(data_dir: Path, filename: str, make) -> str:
    """Read a secret from the data folder, creating it the first time.

    Web and worker processes may start at the same moment, so the file is created
    exclusively and the loser of that race reads the winner's value.
    """
    path = data_dir / filename
    if not path.exists():
        data_dir.mkdir(parents=True, exist_ok=True)
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        else:
            with os.fdopen(fd, "w") as handle:
                handle.write(make())
    value = ""
    for _ in range(50):  # the winner may still be writing
        value = path.read_text().strip()
        if value:
            break
        time.sleep(0.1)
    if not value:
        raise ConfigError(f"{path} is empty; delete it to regenerate")
    return value


def new_secret_key() -> str:
    return secrets.token_urlsafe(64)


def new_fernet_key() -> str:
    return Fernet.generate_key().decode()
