"""``langchain-evals cache clear``: remove judge replies from the judges' cache file, those of
one judge, of one prompt, or all (``judge.SqliteCache.remove`` and ``clear``)."""

from __future__ import annotations

import argparse
import difflib
import sqlite3
import sys
from pathlib import Path
from typing import Any

__all__ = ["add_cache", "run_cache"]

_DEFAULT = Path(".langchain-evals") / "judge-cache.db"


def add_cache(commands: Any) -> None:
    """The ``cache`` command's arguments (on ``commands``, argparse's subparsers)."""
    parser = commands.add_parser(
        "cache",
        help="manage the judges' cache",
        description="Manage the judges' cache file (judge-cache.db beside the experiment "
        "store), whose replies answer judges again on later runs.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    clear = actions.add_parser(
        "clear",
        help="remove cached judge replies: of a judge, of a prompt, or all",
        description="Remove cached judge replies, so the next run asks those judges again. "
        "--judge and --prompt together remove the entries matching both. Entries stored by "
        "earlier releases carry no judge or prompt: only --all removes them. To ask the "
        "judges again once and keep their new replies, run with --judge-cache=refresh.",
    )
    clear.add_argument("--judge", metavar="KEY", help="the entries of the judge with this key")
    clear.add_argument(
        "--prompt",
        metavar="TEXT",
        help="the entries of judges whose prompt contains TEXT, or is the catalog prompt "
        "named TEXT (e.g. CORRECTNESS_PROMPT)",
    )
    clear.add_argument("--all", action="store_true", help="every entry")
    clear.add_argument(
        "--file", type=Path, default=_DEFAULT, help=f"the cache file (default: {_DEFAULT})"
    )


def run_cache(args: argparse.Namespace) -> int:
    """The ``cache clear`` command: the process exit status."""
    from langchain_evals_port.judge import SqliteCache

    def fail(message: str) -> int:
        print(f"langchain-evals cache clear: {message}", file=sys.stderr)
        return 2

    if not (args.all or args.judge is not None or args.prompt is not None):
        return fail("say what to clear: --judge KEY, --prompt TEXT, or --all")
    if args.all and (args.judge is not None or args.prompt is not None):
        return fail("--all clears every entry; give it alone, or --judge/--prompt without it")
    if not args.file.is_file():
        return fail(f"no judge cache at {args.file} (give its path with --file)")
    try:
        cache = SqliteCache(args.file)
        if args.all:
            cache.clear()
            print(f"cleared every entry of {args.file}")
            return 0
        removed = cache.remove(judge=args.judge, prompt=_prompt_text(args.prompt))
        judges = cache.judges()
    except (sqlite3.Error, ValueError) as error:
        return fail(f"{args.file}: {error}")
    print(f"cleared {removed} {'entry' if removed == 1 else 'entries'} of {args.file}")
    if not removed and args.judge is not None and args.judge not in judges:
        close = difflib.get_close_matches(args.judge, list(judges), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        known = f" (it has {', '.join(judges)})" if judges else ""
        print(f"no judge {args.judge!r} in the cache{hint}{known}", file=sys.stderr)
    return 0


def _prompt_text(prompt: str | None) -> str | None:
    """The text to look for: a catalog prompt's own text for its name, else ``prompt``."""
    if prompt is None:
        return None
    from langchain_evals_port import prompts
    from langchain_evals_port.prompts import PromptText

    found = getattr(prompts, prompt, None) if prompt.isidentifier() else None
    return str(found) if isinstance(found, PromptText) else prompt
