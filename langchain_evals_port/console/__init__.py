"""The console: a local web application over a ledger and an experiment store.

``create_app(ledger, store, token=, read_only=)`` is a Starlette application (the
``console`` extra: Starlette, uvicorn, python-multipart, Plotly), rendered on the
server; ``langchain-evals console --ledger URL`` serves it on 127.0.0.1. Pages: an overview
of pass rates and scores per agent and evaluator over time, the interactions (filtered,
paged), one interaction with its transcript and verdicts, the evaluations waiting for a
person (resumed from a form), the failed ones (retried once through the ledger's queue), and
the experiments (a list, one experiment's runs, two compared case by case).
The pages share their base template, style sheet and charts with every other HTML page of
results (``reporting``'s templates); the experiment and comparison pages are the ones
``experiments.report_html`` writes as one file (``langchain-evals report``). Nothing is
fetched from or sent anywhere.

What the pages read is ``langchain_evals_port.storage.ConsoleQueries``: the console holds no
SQL of its own (``ConsoleQueries`` imported from here warns, for one release).

This package is not imported by ``import langchain_evals_port``; import it explicitly.
"""

from langchain_evals_port._moved import forwarding

from ._app import create_app

__all__ = ["create_app"]

__getattr__ = forwarding(
    "langchain_evals_port.console", "langchain_evals_port.storage", {"ConsoleQueries"}
)
