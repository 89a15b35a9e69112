"""The stores and ledgers commands are pointed at: a ``postgresql://`` DSN or a SQLite file.

A command that only reads (``experiments``, ``compare``, ``report``, ``agreement``,
``console``) refuses a file that does not exist, rather than creating an empty database for a
misspelt path; every command refuses a directory or a file that is not a SQLite database with
a message naming it, before SQLite's own errors (which name no file) can.
"""

from __future__ import annotations

from pathlib import Path

from langchain_evals_port._locations import DEFAULT_STORE

__all__ = ["NO_LEDGER", "STORE_HELP", "LocationError", "checked_location"]

NO_LEDGER = (
    "no ledger at {path}; run an application with an EvaluationRuntime first, or name a "
    "ledger with --ledger"
)
"""What a reading command says when the default ledger does not exist."""

STORE_HELP = (
    f"the experiment store: a postgresql:// DSN or a SQLite file (default: {DEFAULT_STORE})"
)
"""The help of every command's ``--store``."""

_SQLITE_HEADER = b"SQLite format 3\x00"


class LocationError(ValueError):
    """A store or ledger location the command cannot use; the message names it."""


def checked_location(
    location: str | None,
    *,
    default: Path | None = None,
    reads: bool,
    missing: str = "no experiment store at {path}; run an experiment first (langchain-evals "
    "run) or name a store with --store",
) -> str:
    """``location`` (or ``default`` when it is ``None``) once it is a DSN, or a SQLite file
    that exists when the command only ``reads`` (or a path where one can be created).
    ``missing`` says what to do when the default is missing for a command that reads.

    Raises:
        LocationError: The path is a directory, a file that is not a SQLite database, or,
            for a command that ``reads``, missing (with the closest file there).
    """
    # Imported here: the storage package is heavy, and --help needs none of it.
    from langchain_evals_port.storage import is_dsn

    if location is not None and is_dsn(location):
        return location
    if location is None:
        assert default is not None, "a location or a default"
        path = default
        if reads and not path.exists():
            raise LocationError(missing.format(path=path))
    else:
        path = Path(location)
    expected = "expected a SQLite file or a postgresql:// DSN"
    if path.is_dir():
        raise LocationError(f"{path}: a directory; {expected}")
    if not path.exists():
        if reads:
            raise LocationError(f"{path}: no such file{_closest(path)}; {expected}")
        return str(path)
    with path.open("rb") as file:
        header = file.read(len(_SQLITE_HEADER))
    if header and header != _SQLITE_HEADER:  # an empty file is an empty database
        raise LocationError(f"{path}: not a SQLite database; {expected}")
    return str(path)


def _closest(path: Path) -> str:
    from langchain_evals_port.experiments._errors import did_you_mean

    folder = path.parent
    if not folder.is_dir():
        return f" (no folder {folder})"
    return did_you_mean(str(path), [str(folder / sibling.name) for sibling in folder.iterdir()])
