"""Fixtures of the console tests (the PostgreSQL ones live in ``_postgres_server``)."""

from _postgres_server import postgres_dsn

__all__ = ["postgres_dsn"]
