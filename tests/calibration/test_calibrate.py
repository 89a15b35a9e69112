"""Calibration of judge prompts against labelled cases, with a scripted judge whose verdicts
on each case are known, so every figure is checked against a hand count."""

from __future__ import annotations

import json
import math
import re
import sys

import pytest

from langchain_evals_port.cli import main
from langchain_evals_port.core.errors import EvaluatorUsageError
from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.prompts import get_prompt
from langchain_evals_port.testing import ScriptedChatModel
from langchain_evals_port.trust.calibration import (
    SHIPPED_SETS,
    LabelledCase,
    LabelsError,
    calibrate,
    load_labels,
    shipped_labels,
)
from langchain_evals_port.trust.calibration._labels import check_variables

USAGE = {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15}

# Ten conciseness cases: people passed 1-6 and failed 7-10. The judge passes 1-5 and 9,
# fails 6-8, and answers case 10 with text that is not JSON (also after the repair prompt).
HUMAN_PASSES = {1, 2, 3, 4, 5, 6}
JUDGE_PASSES = {1, 2, 3, 4, 5, 9}
GARBLED = {10}


def _cases() -> list[LabelledCase]:
    return [
        LabelledCase(
            id=f"case-{n:02d}",
            variables={"inputs": "What is the capital of France?", "outputs": f"answer-{n:02d}"},
            passed=n in HUMAN_PASSES,
            rationale=f"why {n}",
        )
        for n in range(1, 11)
    ]


def _scripted_judge() -> ScriptedChatModel:
    def responder(messages):
        text = "\n".join(message.text for message in messages)
        number = int(re.findall(r"answer-(\d\d)", text)[-1])
        if number in GARBLED:
            return "I would rather not say."
        return {"reasoning": f"judged {number}", "score": number in JUDGE_PASSES}

    return ScriptedChatModel(responder=responder, usage=USAGE)


def test_calibration_over_a_labelled_set_gives_the_hand_counted_figures():
    model = _scripted_judge()
    report = calibrate(model, ["CONCISENESS_PROMPT"], _cases(), progress=False)
    calibration = report["CONCISENESS_PROMPT"]

    # Nine verdicts; agreed on 1-5 (pass) and 7-8 (fail): 7 of 9.
    assert calibration.agreement.n == 9
    assert calibration.agreed == 7
    assert calibration.agreement.accuracy == pytest.approx(7 / 9)
    # Human: 6 pass, 3 fail; judge: 6 pass, 3 fail. Chance agreement 6/9·6/9 + 3/9·3/9 = 5/9,
    # so κ = (7/9 - 5/9) / (1 - 5/9) = 1/2.
    assert calibration.agreement.kappa == pytest.approx(0.5)
    # Keyed (judge, human), True for pass: case 6 is (fail, pass), case 9 (pass, fail).
    assert calibration.agreement.confusion == {
        (True, True): 5,
        (False, True): 1,
        (True, False): 1,
        (False, False): 2,
    }
    # κ's interval, Fleiss-Cohen-Everitt (trust._agreement), rows the judge's class: the
    # cells are 5/9 and 2/9 on the diagonal, 1/9 off it; both raters pass 6/9, fail 3/9.
    # A = 5/9·(1 - 12/9·1/2)² + 2/9·(1 - 6/9·1/2)² = 5/81 + 8/81 = 13/81
    # B = (1/2)²·(1/9·(6/9 + 3/9)² + 1/9·(3/9 + 6/9)²) = 1/18
    # C = (1/2 - 5/9·1/2)² = 4/81
    # Var = (13/81 + 1/18 - 4/81) / (9·(1 - 5/9)²) = (1/6) / (16/9) = 3/32
    # so 1/2 ± 1.959964·√(3/32) = [-0.100, 1.100], its top clipped to 1.
    interval = calibration.agreement.kappa_interval
    assert interval is not None
    assert interval.low == pytest.approx(0.5 - 1.959964 * math.sqrt(3 / 32), abs=1e-6)
    assert interval.high == 1.0
    # "fail": the judge failed 3 (cases 6-8), 2 of them failed by people, who failed 3 (7-9).
    assert calibration.agreement.fail_precision == pytest.approx(2 / 3)
    assert calibration.agreement.fail_recall == pytest.approx(2 / 3)
    # The garbled case is a parse failure, counted apart, never as a disagreement.
    assert calibration.parse_failures == 1
    assert calibration.parse_failure_rate == pytest.approx(0.1)
    assert calibration.other_failures == 0
    garbled = calibration.cases[9]
    assert (garbled.judged, garbled.outcome, garbled.error_code) == (
        None,
        "failed",
        "judge_parse_failure",
    )
    # Nine calls answered, the garbled case asked twice (the repair prompt): 11 calls.
    assert len(model.calls) == 11
    assert (calibration.input_tokens, calibration.output_tokens, calibration.total_tokens) == (
        110,
        55,
        165,
    )
    assert 0 < calibration.latency_median_ms <= calibration.latency_p95_ms
    assert report.model == "scripted"


def test_a_judge_that_passes_everything_agrees_only_by_chance():
    always = ScriptedChatModel(responder=lambda messages: {"reasoning": "ok", "score": True})
    calibration = calibrate(always, ["conciseness"], _cases(), progress=False)["CONCISENESS_PROMPT"]
    assert calibration.agreement.accuracy == pytest.approx(0.6)
    assert calibration.agreement.kappa == pytest.approx(0.0)


def test_kappa_is_undefined_when_both_sides_give_one_label_to_every_case():
    always = ScriptedChatModel(responder=lambda messages: {"reasoning": "ok", "score": True})
    passes = [case for case in _cases() if case.passed]
    report = calibrate(always, ["conciseness"], passes, progress=False)
    agreement = report["CONCISENESS_PROMPT"].agreement
    assert (agreement.accuracy, agreement.kappa, agreement.kappa_interval) == (1.0, None, None)
    assert agreement.kappa_undefined is not None
    assert "| 1.000 [" in report.markdown()
    assert "| undefined | - / - |" in report.markdown()
    # Nothing judged at all: no figure, and the failures counted apart.
    garbled = ScriptedChatModel(responder=lambda messages: "no idea")
    calibration = calibrate(garbled, ["conciseness"], passes, progress=False)["CONCISENESS_PROMPT"]
    assert (calibration.agreement.n, calibration.agreement.accuracy) == (0, None)
    assert calibration.agreement.failed == calibration.parse_failures == len(passes)


def test_the_report_is_written_as_json_and_markdown(tmp_path):
    report = calibrate(_scripted_judge(), ["CONCISENESS_PROMPT"], _cases(), progress=False)
    paths = report.write(tmp_path / "out")
    assert [path.name for path in paths] == ["calibration.json", "calibration.md"]
    data = json.loads(paths[0].read_text())
    (prompt,) = data["prompts"]
    assert (prompt["prompt"], prompt["cases"], prompt["judged"], prompt["agreed"]) == (
        "CONCISENESS_PROMPT",
        10,
        9,
        7,
    )
    assert prompt["kappa"] == pytest.approx(0.5)
    assert prompt["kappa_interval"] == [pytest.approx(0.5 - 1.959964 * math.sqrt(3 / 32)), 1.0]
    assert (prompt["fail_precision"], prompt["fail_recall"]) == (
        pytest.approx(2 / 3),
        pytest.approx(2 / 3),
    )
    assert prompt["tokens"] == {"input": 110, "output": 55, "total": 165}
    assert prompt["confusion"]["human_fail_judge_pass"] == 1
    assert prompt["confusion"]["human_pass_judge_fail"] == 1
    assert prompt["confusion"]["human_pass_judge_pass"] == 5
    page = paths[1].read_text()
    assert "| CONCISENESS_PROMPT | 10 | 0.778 [" in page
    assert "| 0.500 [-0.100, 1.000] | 0.667 / 0.667 |" in page
    # The disagreements and the failure are listed with the human's rationale.
    assert "| case-06 | pass | fail | why 6 | judged 6 |" in page
    assert "| case-10 | fail | failed: judge_parse_failure | why 10 |" in page


@pytest.mark.parametrize("prompt", list(SHIPPED_SETS))
def test_the_shipped_sets_load_with_both_classes_and_rationales(prompt):
    cases = shipped_labels(prompt)
    assert len(cases) >= 30
    assert {case.label for case in cases} == {"pass", "fail"}
    assert {case.kind for case in cases} == {"clear", "borderline"}
    assert all(case.rationale.strip() for case in cases)
    assert len({case.id for case in cases}) == len(cases)
    check_variables(cases, get_prompt(prompt).entry, prompt)


def test_a_labels_file_is_read_and_a_bad_line_is_named(tmp_path):
    good = tmp_path / "mine.jsonl"
    good.write_text(
        '{"id": "a", "label": "pass", "inputs": "q", "outputs": "x"}\n\n'
        '{"label": false, "inputs": "q", "outputs": "y", "rationale": "too long"}\n'
    )
    cases = load_labels(good)
    assert [(case.id, case.label, case.rationale) for case in cases] == [
        ("a", "pass", ""),
        ("line-3", "fail", "too long"),
    ]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"label": "pass", "outputs": "x"}\n{"label": "maybe", "outputs": "y"}\n')
    with pytest.raises(LabelsError, match=r"bad.jsonl line 2: label must be 'pass' or 'fail'"):
        load_labels(bad)


def test_cases_that_do_not_fit_the_prompt_are_refused(tmp_path):
    labels = tmp_path / "mine.jsonl"
    labels.write_text('{"id": "a", "label": "pass", "inputs": "q", "outputs": "x"}\n')
    model = _scripted_judge()
    with pytest.raises(LabelsError, match=r"case 'a' \(line 1\) lacks reference_outputs"):
        calibrate(model, ["CORRECTNESS_PROMPT"], labels, progress=False)
    labels.write_text(
        '{"id": "a", "label": "pass", "inputs": "q", "outputs": "x", "contxt": "c"}\n'
    )
    with pytest.raises(LabelsError, match="has contxt, which CONCISENESS_PROMPT does not use"):
        calibrate(model, ["CONCISENESS_PROMPT"], labels, progress=False)
    assert model.calls == []


def test_labels_are_for_one_prompt_and_prompts_must_judge_pass_or_fail():
    model = _scripted_judge()
    with pytest.raises(EvaluatorUsageError, match="labels are for one prompt; 2 prompts"):
        calibrate(model, ["CONCISENESS_PROMPT", "CORRECTNESS_PROMPT"], _cases())
    with pytest.raises(EvaluatorUsageError, match="LANGUAGE_DETECTION_PROMPT cannot be"):
        calibrate(model, ["LANGUAGE_DETECTION_PROMPT"], _cases())
    with pytest.raises(LabelsError, match="no labelled set is shipped for TOXICITY_PROMPT"):
        calibrate(model, ["TOXICITY_PROMPT"])


def test_the_trajectory_set_reaches_the_judge_as_a_message_list():
    model = ScriptedChatModel(responder=lambda messages: {"reasoning": "ok", "score": True})
    report = calibrate(model, ["TRAJECTORY_ACCURACY_PROMPT"], progress=False)
    assert len(report["TRAJECTORY_ACCURACY_PROMPT"].cases) == 32
    assert '"tool_calls"' in model.calls[0].messages[-1].text


# --- your own judge ---------------------------------------------------------------------

POLITENESS = "Is this reply to {inputs} polite? Reply: {outputs}"


def test_your_own_judge_is_calibrated_over_your_labels():
    model = _scripted_judge()
    mine = LLMJudge(prompt=POLITENESS, feedback_key="politeness", model=model)
    report = calibrate(judge=mine, labels=_cases(), progress=False)
    assert report.model == "scripted"
    (calibration,) = report.prompts
    assert calibration.prompt == "politeness"
    assert calibration.labels == "labelled cases given"
    # The same verdicts as the catalog prompt's above, so the same hand-counted figures.
    assert (calibration.agreement.n, calibration.agreed) == (9, 7)
    assert calibration.agreement.kappa == pytest.approx(0.5)
    assert calibration.agreement.kappa_interval is not None
    # The unreadable reply is counted apart although the judge raises on failures itself.
    assert calibration.parse_failures == calibration.agreement.failed == 1
    assert mine.on_error == "raise"
    assert model.calls[0].messages[-1].text.startswith("Is this reply to What is the capital")
    assert len(model.calls) == 11


def test_your_own_judge_is_calibrated_alone_with_labels_and_pass_fail_verdicts():
    model = _scripted_judge()
    mine = LLMJudge(prompt=POLITENESS, feedback_key="politeness", model=model)
    with pytest.raises(EvaluatorUsageError, match="needs labelled cases"):
        calibrate(judge=mine)
    with pytest.raises(EvaluatorUsageError, match="calibrated alone"):
        calibrate(model, judge=mine, labels=_cases())
    with pytest.raises(EvaluatorUsageError, match="calibrated alone"):
        calibrate(prompts=["CONCISENESS_PROMPT"], judge=mine, labels=_cases())
    graded = LLMJudge(prompt=POLITENESS, continuous=True, model=model)
    with pytest.raises(EvaluatorUsageError, match="this judge gives numeric scores"):
        calibrate(judge=graded, labels=_cases())
    with pytest.raises(EvaluatorUsageError, match="judge must be an evaluator"):
        calibrate(judge=model, labels=_cases())  # type: ignore[arg-type]
    with pytest.raises(EvaluatorUsageError, match=r"needs a model .* or your own judge"):
        calibrate()
    assert model.calls == []


# --- the command line ------------------------------------------------------------------


def test_cli_calibrates_and_writes_the_report(tmp_path, monkeypatch, capsys):
    from langchain_evals_port.judge import _model

    labels = tmp_path / "mine.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"id": case.id, "label": case.label, **case.variables}) + "\n"
            for case in _cases()
        )
    )
    monkeypatch.setattr(_model, "_init_chat_model", lambda spec: _scripted_judge())
    monkeypatch.setattr(_model, "_from_strings", {})
    monkeypatch.setenv("COLUMNS", "200")  # the table on one line a row, whatever runs pytest
    argv = ["calibrate", "--model", "scripted:judge", "--prompt", "CONCISENESS_PROMPT"]
    code = main([*argv, "--labels", str(labels), "--report", str(tmp_path / "out")])
    out = capsys.readouterr().out
    assert code == 0
    assert re.search(r"CONCISENESS_PROMPT\s+│\s+10\s+│\s+0\.778 \[", out)
    assert "Judge calibration: scripted:judge" in out
    assert (tmp_path / "out" / "calibration.json").exists()


def test_cli_names_the_closest_prompt_for_a_misspelt_one(capsys):
    assert main(["calibrate", "--model", "openai:gpt-4o-mini", "--prompt", "CONCISNESS"]) == 2
    assert "did you mean CONCISENESS_PROMPT" in capsys.readouterr().err


def test_cli_says_how_to_install_the_langchain_extra(monkeypatch, capsys):
    from langchain_evals_port.judge import _model

    monkeypatch.setattr(_model, "_from_strings", {})
    monkeypatch.setitem(sys.modules, "langchain.chat_models", None)
    assert main(["calibrate", "--model", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert "pip install 'langchain-evals-port[langchain]'" in err


def test_cli_reports_a_model_client_that_cannot_be_built(monkeypatch, capsys):
    from langchain_evals_port.judge import _model

    def no_key(spec):
        raise RuntimeError("Missing credentials")

    monkeypatch.setattr(_model, "_init_chat_model", no_key)
    monkeypatch.setattr(_model, "_from_strings", {})
    assert main(["calibrate", "--model", "openai:gpt-4o-mini"]) == 2
    err = capsys.readouterr().err
    assert (
        "cannot build the judge model 'openai:gpt-4o-mini': RuntimeError: Missing credentials"
        in err
    )


JUDGE_MODULE = """
import re

from langchain_evals_port.judge import LLMJudge
from langchain_evals_port.testing import ScriptedChatModel


def _reply(messages):
    number = int(re.findall(r"answer-(\\d\\d)", messages[-1].text)[-1])
    if number == 10:
        return "I would rather not say."
    return {"reasoning": f"judged {number}", "score": number in {1, 2, 3, 4, 5, 9}}


POLITENESS = LLMJudge(
    prompt="Is this reply to {inputs} polite? Reply: {outputs}",
    feedback_key="politeness",
    model=ScriptedChatModel(responder=_reply),
)
"""


def test_cli_calibrates_your_own_judge(tmp_path, monkeypatch, capsys):
    (tmp_path / "calibrated_judge_module.py").write_text(JUDGE_MODULE)
    labels = tmp_path / "mine.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"id": case.id, "label": case.label, **case.variables}) + "\n"
            for case in _cases()
        )
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("COLUMNS", "200")
    try:
        argv = ["calibrate", "--judge", "calibrated_judge_module:POLITENESS"]
        code = main([*argv, "--labels", str(labels), "--report", str(tmp_path / "out")])
        out = capsys.readouterr().out
        assert code == 0
        assert re.search(
            r"politeness\s+│\s+10\s+│\s+0\.778 \[.*│\s+0\.500 \[-0\.100, 1\.000\]", out
        )
        assert "Judge calibration: scripted" in out
        data = json.loads((tmp_path / "out" / "calibration.json").read_text())
        assert data["prompts"][0]["prompt"] == "politeness"

        assert main([*argv[:2], "calibrated_judge_module:POLITNESS", "--labels", str(labels)]) == 2
        assert "did you mean 'POLITENESS'" in capsys.readouterr().err
        assert main([*argv, "--prompt", "CONCISENESS_PROMPT", "--labels", str(labels)]) == 2
        assert "calibrated alone" in capsys.readouterr().err
    finally:
        sys.modules.pop("calibrated_judge_module", None)
