"""``langchain-evals config schema``: the JSON Schema of the evaluation configuration file
(``evals.yaml``), for editors (``runtime.EvaluationConfig.json_schema``)."""

from __future__ import annotations

import argparse
import json
from typing import Any

__all__ = ["add_config", "run_config"]


def add_config(commands: Any) -> None:
    """The ``config`` command's arguments (on ``commands``, argparse's subparsers)."""
    parser = commands.add_parser(
        "config",
        help="the evaluation configuration file (evals.yaml): its JSON Schema",
        description="Tools for the evaluation configuration file that the runtime and "
        "`langchain-evals worker --config` read.",
    )
    actions = parser.add_subparsers(dest="action", required=True)
    actions.add_parser(
        "schema",
        help="print the JSON Schema of the configuration file",
        description="Print the JSON Schema of the evaluation configuration file, for an "
        "editor to check and complete evals.yaml as you type: `langchain-evals config schema "
        "> evals.schema.json`, then start evals.yaml with the line "
        "`# yaml-language-server: $schema=evals.schema.json`. The runtime checks more at "
        "startup than the schema can say: a property named within a typo of a reserved key "
        "(agent for agents), a key given in both spellings, an evaluator id that is not "
        "registered.",
    )


def run_config(args: argparse.Namespace) -> int:
    """The ``config`` command: the process exit status."""
    from langchain_evals_port.runtime import EvaluationConfig

    assert args.action == "schema"  # argparse allows no other
    print(json.dumps(EvaluationConfig.json_schema(), indent=2, ensure_ascii=False))
    return 0
