"""``langchain-evals console``: serve the console over a ledger (and an experiment store).

It binds 127.0.0.1 unless told otherwise; binding anywhere else requires a token (``--token``
or ``LANGCHAIN_EVALS_CONSOLE_TOKEN``), which every request must then carry. It answers only
requests naming a host it is served on (``localhost``, ``127.0.0.1``, ``[::1]``, ``--host``
and each ``--allowed-host``), and prints its address once it is ready.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
from typing import Any

from langchain_evals_port._locations import DEFAULT_LEDGER, DEFAULT_STORE

__all__ = ["add_console", "run_console"]

TOKEN_VARIABLE = "LANGCHAIN_EVALS_CONSOLE_TOKEN"
_LOCAL = ("127.0.0.1", "localhost", "::1")


def add_console(commands: Any) -> None:
    """The ``console`` command's arguments (on ``commands``, argparse's subparsers)."""
    console = commands.add_parser(
        "console",
        help="serve the console: a local web page over the ledger and the experiments",
        description="Serve the console over a ledger (and an experiment store): pass rates "
        "over time, interactions and their verdicts, reviews waiting for a person, failed "
        "evaluations to retry, experiments. Needs the console extra: "
        "pip install 'langchain-evals-port[console]'.",
    )
    console.add_argument(
        "--ledger",
        help=f"a postgresql:// DSN or a SQLite file (default: {DEFAULT_LEDGER})",
    )
    console.add_argument(
        "--store",
        help="the experiment store, a postgresql:// DSN or a path (default: "
        f"{DEFAULT_STORE} when it exists)",
    )
    console.add_argument("--host", default="127.0.0.1", help="the address to bind (127.0.0.1)")
    console.add_argument(
        "--port", type=int, default=8484, help="the port (8484; 0 picks a free one)"
    )
    console.add_argument(
        "--allowed-host",
        action="append",
        default=[],
        metavar="NAME",
        help="a host name the console is reached by, besides localhost, 127.0.0.1, [::1] and "
        "--host (repeatable); a request naming any other host is refused",
    )
    console.add_argument(
        "--token", help=f"a secret every request must carry (or ${TOKEN_VARIABLE})"
    )
    console.add_argument("--read-only", action="store_true", help="no actions that change state")


def run_console(args: argparse.Namespace) -> int:
    """The ``console`` command: the process exit status."""
    token = args.token or os.environ.get(TOKEN_VARIABLE) or None
    if args.host not in _LOCAL and token is None:
        print(
            f"langchain-evals console: serving on {args.host} needs a token (--token or "
            f"${TOKEN_VARIABLE}); on 127.0.0.1 it does not",
            file=sys.stderr,
        )
        return 2
    try:
        import uvicorn  # noqa: F401

        from langchain_evals_port.console import create_app
    except ImportError as error:
        print(
            f"langchain-evals console: {error}; install the console extra: "
            "pip install 'langchain-evals-port[console]'",
            file=sys.stderr,
        )
        return 2
    from langchain_evals_port.core.errors import EvalsError
    from langchain_evals_port.experiments import ExperimentStore
    from langchain_evals_port.storage import open_storage

    from ._locations import NO_LEDGER, checked_location

    ledger = store = None
    try:
        ledger = open_storage(
            checked_location(args.ledger, default=DEFAULT_LEDGER, reads=True, missing=NO_LEDGER)
        )
        if args.store or DEFAULT_STORE.exists():
            store = ExperimentStore(checked_location(args.store, default=DEFAULT_STORE, reads=True))
        app = create_app(
            ledger,
            store,
            token=token,
            read_only=args.read_only,
            allowed_hosts=[_as_host(args.host), *args.allowed_host],
        )
    except (EvalsError, OSError, ValueError, sqlite3.Error) as error:
        # Usage, files and DSNs (an unreachable server): a message, never a traceback.
        _close(ledger, store)
        print(f"langchain-evals console: {error}", file=sys.stderr)
        return 2
    try:
        _serve(app, args.host, args.port, token=token is not None)
    finally:
        _close(ledger, store)
    return 0


def _as_host(address: str) -> str:
    """``address`` as a ``Host`` header names it (an IPv6 address in brackets)."""
    return f"[{address}]" if ":" in address and not address.startswith("[") else address


def _serve(app: Any, host: str, port: int, *, token: bool) -> None:
    """Serve ``app`` with uvicorn until interrupted; print its address once it listens (the
    application is warmed up before that: its lifespan does it)."""
    import uvicorn

    class Announced(uvicorn.Server):
        async def startup(self, sockets: Any = None) -> None:
            await super().startup(sockets)
            if not self.started:
                return
            bound = self.servers[0].sockets[0].getsockname()[1] if self.servers else port
            needs = " (every request needs the token)" if token else ""
            print(
                f"langchain-evals console: serving http://{_as_host(host)}:{bound}/{needs}; "
                "Ctrl-C stops it",
                flush=True,
            )

    Announced(uvicorn.Config(app, host=host, port=port, log_level="warning")).run()


def _close(*opened: Any) -> None:
    for each in opened:
        if each is not None:
            each.close()
