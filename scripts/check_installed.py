"""Check the installed package where a user has it: run by the Python of a bare environment
that holds the wheel and pytest only (``scripts/check_installed.sh`` makes it).

What runs inside a user's process is checked there, each in a fresh process:

1. an unrelated trivial test passes, with the plugin loaded (the ``pytest11`` entry point)
   and inert: no report written;
2. an eval-suite test writes its report, and pins a baseline;
3. every public module of the package imports, without the optional extras (docker,
   psycopg, opentelemetry), since those are imported only when used;
4. ``langsmith.evaluate(..., upload_results=False)`` with our ``ExactMatch`` sends no run
   to a LangSmith stand-in on 127.0.0.1, with ``LANGSMITH_TRACING`` on and off. A plain
   function evaluator is run the same way first: if it sends runs, LangSmith itself does and
   the check says so instead of blaming ours.
5. the ``langchain-evals`` command (its console-script entry point) runs an experiment over
   a JSONL file twice and compares the two, from a folder of the user's own modules.
6. ``langchain-evals console`` without the ``console`` extra says how to install it (exit
   2), rather than failing with a traceback.
7. the labelled sets of ``langchain_evals_port.trust.calibration`` load from the installed package,
   and ``langchain-evals calibrate`` with a model it cannot build (no API key) says so (exit
   2), rather than failing with a traceback.

Every check runs even when one fails; each prints one line, and the exit code is 1 when
any failed. Only the standard library is used here: the environment has nothing else but
the package and pytest.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

PACKAGE = "langchain_evals_port"
EXTRAS = ("docker", "psycopg", "psycopg_pool", "opentelemetry", "langgraph.checkpoint.postgres")
TIMEOUT = 120

TRIVIAL_TEST = """
def test_one():
    assert 1 + 1 == 2
"""

EVAL_SUITE_TEST = """
import pytest
from langchain_evals_port import ExactMatch

pytestmark = pytest.mark.eval_suite


@pytest.mark.parametrize("answer", ["Paris", "Lyon"])
def test_capital(answer):
    ExactMatch(feedback_key="capital")(outputs=answer, reference_outputs="Paris")
"""

IMPORT_EVERY_MODULE = """
import importlib, pkgutil, sys
import {package} as package

# A module that imported an extra at load time would fail here: they are not installed.
for extra in {extras!r}:
    try:
        importlib.import_module(extra)
    except ModuleNotFoundError:
        continue
    sys.exit(f"the optional dependency {{extra}} is installed; this check needs it absent")
failed, count = [], 0
walk_errors = []
for module in pkgutil.walk_packages(package.__path__, package.__name__ + ".", walk_errors.append):
    if any(part.startswith("_") for part in module.name.split(".")):
        continue
    count += 1
    try:
        importlib.import_module(module.name)
    except Exception as error:
        failed.append(f"{{module.name}}: {{type(error).__name__}}: {{error}}")
failed += [f"{{name}}: cannot be walked" for name in walk_errors]
print(count)
print("\\n".join(failed))
sys.exit(1 if failed else 0)
"""

LANGSMITH_EVALUATE = """
import datetime, sys, uuid

from langchain_core.tracers.langchain import wait_for_all_tracers
from langsmith import evaluate
from langsmith.schemas import Example

from langchain_evals_port import ExactMatch


def plain_exact_match(outputs, reference_outputs):
    return {"key": "exact_match", "score": outputs == reference_outputs}


def target(inputs):
    return {"answer": inputs["question"].upper()}


dataset = uuid.uuid4()
now = datetime.datetime.now(datetime.timezone.utc)
examples = [
    Example(id=uuid.uuid4(), dataset_id=dataset, created_at=now, inputs={"question": q},
            outputs={"answer": a})
    for q, a in [("paris", "PARIS"), ("lyon", "NICE")]
]
evaluator = ExactMatch() if sys.argv[1] == "ours" else plain_exact_match
results = evaluate(target, data=examples, evaluators=[evaluator], upload_results=False)
scores = [row["evaluation_results"]["results"][0].score for row in results]
# Whatever LangChain's tracer or LangSmith's client queued is sent before the process ends.
wait_for_all_tracers()
print(scores)
"""


def run_python(
    code: str, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``code`` in a fresh interpreter of this environment."""
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def run_pytest(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run pytest on ``folder`` (which holds its own ini, so nothing around it applies)."""
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", *args],
        cwd=folder,
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )


def project(root: Path, name: str, files: dict[str, str]) -> Path:
    """A folder ``root/name`` with a ``pytest.ini`` (so it is its own rootdir) and ``files``."""
    folder = root / name
    folder.mkdir()
    (folder / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    for name, text in files.items():
        (folder / name).write_text(textwrap.dedent(text), encoding="utf-8")
    return folder


def output(done: subprocess.CompletedProcess[str]) -> str:
    """The last lines a failed process printed, for the failure message."""
    lines = (done.stdout + done.stderr).strip().splitlines()
    return "\n    ".join(lines[-15:])


def check_trivial_test(root: Path) -> str:
    """An unrelated test passes with the plugin loaded and inert."""
    folder = project(root, "trivial", {"test_trivial.py": TRIVIAL_TEST})
    done = run_pytest(folder)
    if done.returncode != 0 or "1 passed" not in done.stdout:
        raise CheckFailed(f"pytest exited {done.returncode}:\n    {output(done)}")
    plugins = next((line for line in done.stdout.splitlines() if line.startswith("plugins:")), "")
    if "langchain-evals-port" not in plugins:
        raise CheckFailed(f"the plugin is not loaded through its entry point ({plugins!r})")
    written = sorted(p.name for p in folder.iterdir() if p.name.startswith("eval-"))
    if written:
        raise CheckFailed(f"the inert plugin wrote {written}")
    return "1 passed, plugin loaded and inert"


def check_eval_suite(root: Path) -> str:
    """An eval-suite test writes the report and pins a baseline."""
    folder = project(root, "eval_suite", {"test_eval_suite.py": EVAL_SUITE_TEST})
    report = folder / "out" / "report.md"
    baseline = folder / "baseline.json"
    done = run_pytest(
        folder,
        "--evals-report",
        str(report),
        "--evals-baseline",
        str(baseline),
        "--evals-update-baseline",
    )
    if done.returncode != 0:
        raise CheckFailed(f"pytest exited {done.returncode}:\n    {output(done)}")
    expected = [report, report.with_suffix(".json"), report.with_suffix(".html"), baseline]
    missing = [str(path.relative_to(folder)) for path in expected if not path.is_file()]
    if missing:
        raise CheckFailed(f"not written: {', '.join(missing)}")
    figures = json.loads(report.with_suffix(".json").read_text(encoding="utf-8"))["keys"]
    if figures.get("capital", {}).get("mean") != 0.5:
        raise CheckFailed(f"unexpected figures {figures}")
    return "report (.md, .json, .html) and pinned baseline written, capital mean 0.5"


def check_every_module_imports(root: Path) -> str:
    """Every public module imports with only the required dependencies installed."""
    code = IMPORT_EVERY_MODULE.format(package=PACKAGE, extras=EXTRAS)
    done = run_python(code, cwd=root)
    if done.returncode != 0:
        raise CheckFailed(f"imports failed:\n    {output(done)}")
    return f"{done.stdout.split()[0]} public modules imported, without {', '.join(EXTRAS)}"


EXPERIMENT_APP = """
from langchain_evals_port import ExactMatch

def target(inputs):
    return inputs["country"].upper()

EVALUATORS = [ExactMatch()]
"""


def check_experiment_command(root: Path) -> str:
    """langchain-evals run (twice) and compare, from the console script."""
    folder = project(root, "experiment", {"capitals_app.py": EXPERIMENT_APP})
    rows = [("fr", "France", "FRANCE"), ("pe", "Peru", "Lima")]
    (folder / "cases.jsonl").write_text(
        "".join(
            json.dumps({"id": id_, "inputs": {"country": c}, "reference_outputs": r}) + "\n"
            for id_, c, r in rows
        ),
        encoding="utf-8",
    )
    command = Path(sys.executable).parent / "langchain-evals"
    run = [str(command), "run", "cases.jsonl", "--target", "capitals_app:target"]
    run += ["--evaluators", "capitals_app:EVALUATORS"]
    outputs = []
    for args in (run, run, [str(command), "compare", "target-1", "target-2"]):
        done = subprocess.run(
            args, cwd=folder, capture_output=True, text=True, timeout=TIMEOUT, check=False
        )
        if done.returncode != 0:
            raise CheckFailed(
                f"{' '.join(args[1:3])} exited {done.returncode}:\n    {output(done)}"
            )
        outputs.append(done.stdout)
    if not outputs[1].startswith("Experiment target-2: 2 runs, compared with target-1"):
        raise CheckFailed(f"unexpected summary:\n    {outputs[1]}")
    if "exact_match" not in outputs[2] or "0.500" not in outputs[0]:
        raise CheckFailed(f"unexpected figures:\n    {outputs[0]}\n    {outputs[2]}")
    return "run twice and compared: exact_match 0.500, no regression"


def check_console_without_its_extra(root: Path) -> str:
    """langchain-evals console without the console extra: a message, exit 2."""
    command = Path(sys.executable).parent / "langchain-evals"
    done = subprocess.run(
        [str(command), "console", "--ledger", str(root / "ledger.db")],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if done.returncode != 2 or "pip install 'langchain-evals-port[console]'" not in done.stderr:
        raise CheckFailed(f"exited {done.returncode}:\n    {output(done)}")
    if "Traceback" in done.stderr:
        raise CheckFailed(f"a traceback:\n    {output(done)}")
    return "exit 2, saying to install the console extra"


def check_calibrate(root: Path) -> str:
    """The calibration sets load from the package; calibrate without an API key: a message."""
    sets = subprocess.run(
        [
            sys.executable,
            "-c",
            "from langchain_evals_port.trust.calibration import SHIPPED_SETS, shipped_labels\n"
            "print(sum(len(shipped_labels(name)) for name in SHIPPED_SETS))",
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
    if sets.returncode != 0:
        raise CheckFailed(f"the labelled sets did not load:\n    {output(sets)}")
    command = Path(sys.executable).parent / "langchain-evals"
    done = subprocess.run(
        [str(command), "calibrate", "--model", "openai:gpt-4o-mini"],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
        cwd=root,
        env={key: value for key, value in os.environ.items() if not key.startswith("OPENAI_")},
    )
    expected = "cannot build the judge model 'openai:gpt-4o-mini'"
    if done.returncode != 2 or expected not in done.stderr or "Traceback" in done.stderr:
        raise CheckFailed(f"exited {done.returncode}:\n    {output(done)}")
    return (
        f"{sets.stdout.strip()} labelled cases loaded; calibrate without a key: exit 2, a message"
    )


class Recorder(ThreadingHTTPServer):
    """A LangSmith stand-in on 127.0.0.1 that answers ``{}`` and records every request."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str]] = []
        super().__init__(("127.0.0.1", 0), _Handler)

    @property
    def url(self) -> str:
        """The endpoint to give LangSmith's client."""
        return f"http://127.0.0.1:{self.server_port}"

    def runs_sent(self) -> list[str]:
        """Every request that created or updated a run (``/runs``, ``/runs/batch``,
        ``/runs/multipart``, ``/runs/{id}``)."""
        return [
            f"{method} {path}"
            for method, path in self.requests
            if method in ("POST", "PATCH") and (path == "/runs" or path.startswith("/runs/"))
        ]


class _Handler(BaseHTTPRequestHandler):
    server: Recorder

    def _answer(self) -> None:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        self.server.requests.append((self.command, self.path.split("?")[0].rstrip("/")))
        body = b"{}"
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    do_GET = do_POST = do_PATCH = do_PUT = do_DELETE = _answer

    def log_message(self, *args: object) -> None:
        """Quiet: the recorder is read instead."""


@contextmanager
def langsmith_stand_in() -> Iterator[Recorder]:
    """Serve a ``Recorder`` on 127.0.0.1 for the block."""
    server = Recorder()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def evaluate_against_stand_in(root: Path, evaluator: str, tracing: str) -> tuple[list[str], str]:
    """Run ``langsmith.evaluate`` with ``evaluator`` ("ours" or "plain") in a fresh process
    against a stand-in; the runs it sent and the scores it printed."""
    # The user's environment as they would have it, minus any LangSmith or LangChain
    # settings of this machine, so nothing can reach a real endpoint.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    with langsmith_stand_in() as stand_in:
        env |= {
            "LANGSMITH_ENDPOINT": stand_in.url,
            "LANGSMITH_API_KEY": "not-a-real-key",
            "LANGSMITH_TRACING": tracing,
        }
        done = run_python(LANGSMITH_EVALUATE, evaluator, cwd=root, env=env)
        if done.returncode != 0:
            raise CheckFailed(f"langsmith.evaluate failed:\n    {output(done)}")
        return stand_in.runs_sent(), done.stdout.strip().splitlines()[-1]


def check_no_runs_uploaded(tracing: str) -> Callable[[Path], str]:
    """The check that ``upload_results=False`` sends no run, with ``LANGSMITH_TRACING`` set
    to ``tracing``."""

    def check(root: Path) -> str:
        plain, _ = evaluate_against_stand_in(root, "plain", tracing)
        if plain:
            raise CheckFailed(
                f"LangSmith itself sent runs with a plain function evaluator ({plain}); "
                "this check cannot tell ours apart"
            )
        ours, scores = evaluate_against_stand_in(root, "ours", tracing)
        if scores != "[True, False]":
            raise CheckFailed(f"ExactMatch scored {scores}, expected [True, False]")
        if ours:
            counts = {request: ours.count(request) for request in ours}
            raise CheckFailed(
                "our ExactMatch sent runs to LangSmith although upload_results=False "
                f"(a plain function evaluator sent none): {counts}"
            )
        return "no run sent (a plain function evaluator: none either), scores [True, False]"

    check.__doc__ = f"langsmith.evaluate(upload_results=False), LANGSMITH_TRACING={tracing}"
    return check


class CheckFailed(Exception):
    """A check found a defect; the message says which."""


def main() -> int:
    checks: list[Callable[[Path], str]] = [
        check_trivial_test,
        check_eval_suite,
        check_every_module_imports,
        check_no_runs_uploaded("true"),
        check_no_runs_uploaded("false"),
        check_experiment_command,
        check_console_without_its_extra,
        check_calibrate,
    ]
    failures = 0
    with tempfile.TemporaryDirectory(prefix="check-installed-") as scratch:
        for check in checks:
            title = (check.__doc__ or check.__name__).strip().splitlines()[0].rstrip(".")
            started = time.perf_counter()
            try:
                outcome, ok = check(Path(scratch)), True
            except CheckFailed as failure:
                outcome, ok = str(failure), False
            except subprocess.TimeoutExpired as error:
                outcome, ok = f"timed out after {error.timeout} s", False
            failures += not ok
            took = time.perf_counter() - started
            print(
                f"check_installed: {'ok  ' if ok else 'FAIL'} {title} ({took:.1f} s): {outcome}",
                flush=True,
            )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
