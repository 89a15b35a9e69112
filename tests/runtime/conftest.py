"""Fixtures of the runtime tests (the PostgreSQL ones live in ``_postgres_server``)."""

from _postgres_server import postgres_database_dsn, postgres_dsn, restartable_postgres

__all__ = ["postgres_database_dsn", "postgres_dsn", "restartable_postgres"]
