"""Calibration: how well the catalog's judge prompts agree with people, on a model you choose.

``calibrate(model)`` runs catalog prompts as judges over labelled cases and reports, per
prompt, the judge's agreement with the human labels through ``reporting.agreement`` (over
the cases the judge reached a verdict on): accuracy and Cohen's κ, each with its 95 %
interval, and precision and recall of "fail"; the parse-failure rate (failed with
``judge_parse_failure``, counted apart and never as disagreement), the tokens the model
reported (a LangChain usage callback, repair prompts included) and the latency of a case
(median and 95th percentile). The report prints as a table and writes JSON and Markdown
(``report.write(directory)``); the command line is ``langchain-evals calibrate --model
provider:model [--prompt NAME ...] [--labels FILE] [--report DIR]``. Your own judge (an
``LLMJudge`` with your prompt, or any evaluator giving pass/fail verdicts) is calibrated the
same way over your labels: ``calibrate(judge=mine, labels="mine.jsonl")``, or
``langchain-evals calibrate --judge module:attr --labels FILE``.

Labelled sets of at least 30 cases are shipped for ``CORRECTNESS_PROMPT``,
``CONCISENESS_PROMPT``, ``HALLUCINATION_PROMPT``, ``RAG_GROUNDEDNESS_PROMPT`` and
``TRAJECTORY_ACCURACY_PROMPT`` (``SHIPPED_SETS``): clear passes, clear fails and borderline
cases, each with a one-line rationale, written for this project and licensed with it. Bring
your own with ``labels=`` (a JSONL file, see ``load_labels``) for one prompt.

Example:
    >>> from langchain_evals_port.testing import ScriptedChatModel
    >>> always_pass = ScriptedChatModel(responder=lambda m: {"reasoning": "Fine.", "score": True})
    >>> report = calibrate(always_pass, ["CORRECTNESS_PROMPT"], progress=False)
    >>> calibration = report["CORRECTNESS_PROMPT"]
    >>> calibration.agreement.kappa  # a judge that passes everything agrees only by chance
    0.0

A real model over HTTP
----------------------
``scripts/calibrate_local.sh`` is a smoke test of the real-model path, outside the default
test suite: it installs ``llama-cpp-python[server]`` into ``.calibrate-server/`` (built from
source the first time: minutes, with cmake and a C++ compiler), starts its
OpenAI-compatible server on 127.0.0.1 with a GGUF model file, and runs
``langchain-evals calibrate --model openai:<alias>`` against it with ``OPENAI_BASE_URL``
pointing at the server (``OPENAI_API_KEY`` is set to a placeholder; the server ignores it).
No GGUF model is published on PyPI, so the script takes the model file's path:
``bash scripts/calibrate_local.sh path/to/model.gguf [--prompt CONCISENESS_PROMPT ...]``
(without options: ``CONCISENESS_PROMPT``, report in ``calibration-local/``). Cases run one at a
time, as the server answers one request at a time; a small instruction-tuned model keeps a
CPU-only run short. ``bash scripts/calibrate_local.sh --tiny [...]`` serves instead a tiny
llama model with random weights (``scripts/tiny_gguf.py``): noise for verdicts, but a check of
the HTTP path, structured output and report with no model file. The server is started through
``scripts/llama_server.py``, which accepts the ``json_schema`` response format the judges send
(llama-cpp-python's server knows only ``json_object`` with a schema).
"""

from ._calibrate import LabelsLike, acalibrate, calibrate
from ._labels import SHIPPED_SETS, LabelledCase, LabelsError, load_labels, shipped_labels
from ._report import CalibrationReport, CaseCalibration, PromptCalibration

__all__ = [
    "SHIPPED_SETS",
    "CalibrationReport",
    "CaseCalibration",
    "LabelledCase",
    "LabelsError",
    "LabelsLike",
    "PromptCalibration",
    "acalibrate",
    "calibrate",
    "load_labels",
    "shipped_labels",
]
