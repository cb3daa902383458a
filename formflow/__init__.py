"""FormFlow's release. The one place the version is written: /readyz, the OpenAPI document
and CHANGELOG.md's newest entry agree with it (tests/operations/test_version.py)."""

__version__ = "1.2.0"
