"""``langchain-evals config schema``: the JSON Schema of the evaluation configuration file,
printed for editors; it accepts the documented and shipped configurations and refuses what
the runtime refuses in the fixed part, the reserved keys' values and misplaced keys."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest
import yaml
from jsonschema.exceptions import best_match
from test_config import SPEC_YAML

from langchain_evals_port.cli import main
from langchain_evals_port.runtime import ConfigurationError, EvaluationConfig

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def validator(capsys: pytest.CaptureFixture[str]) -> jsonschema.Draft202012Validator:
    assert main(["config", "schema"]) == 0
    captured = capsys.readouterr()
    assert captured.err == ""
    schema = json.loads(captured.out)
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def test_the_schema_is_titled_and_described_for_editors(validator):
    schema = validator.schema
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["title"] == "langchain-evals evaluation configuration"
    assert schema["additionalProperties"] is False
    binding = schema["$defs"]["BindingEntry"]["properties"]
    assert "evaluation.defaults.agent.sampling_ratio" in binding["sampling_ratio"]["description"]
    assert schema == EvaluationConfig.json_schema()


def _readme_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [example] = re.findall(r"^```yaml\n(# evals\.yaml\n.*?)^```", readme, re.MULTILINE | re.DOTALL)
    return example


EXAMPLES = {
    "README.md": _readme_example(),
    "specification": SPEC_YAML,
    **{
        path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8")
        for path in sorted((ROOT / "cookbook").rglob("evals*.yaml"))
    },
    "kebab-case and nulls": """
evaluation:
  defaults: { agent: { sampling-ratio: 0.5, trigger-on-failure: true }, evaluator: null }
  evaluators:
    q:
      control-id: c-1
      pass-threshold: 0.8
      min-length: 20
      agents: { a: null, b: { trigger: null } }
      agent-roles: null
    r: null
""",
}


@pytest.mark.parametrize("name", sorted(EXAMPLES))
def test_the_schema_accepts_the_documented_and_shipped_configurations(validator, name):
    document = yaml.safe_load(EXAMPLES[name])
    EvaluationConfig.from_mapping(document)  # the runtime accepts it
    assert list(validator.iter_errors(document)) == []


@pytest.mark.parametrize(
    "document",
    [
        {"evaluaton": {"evaluators": {}}},
        {"evaluation": {"evaluator": {}}},
        {"evaluation": {"defaults": {"agent": {"sampling_rate": 0.5}}}},
        {"evaluation": {"defaults": {"evaluator": {"min_length": 20}}}},
        {"evaluation": {"evaluators": {"q": {"sampling_ratio": 0.5}}}},
        {"evaluation": {"evaluators": {"q": {"sampling-ratio": 0.5}}}},
        {"evaluation": {"evaluators": {"q": {"agents": {"a": {"control_id": "c"}}}}}},
        {"evaluation": {"evaluators": {"q": {"agents": {"a": {"agents": {}}}}}}},
        {"evaluation": {"evaluators": {"q": {"agents": {"a": {"sampling_ratio": 1.5}}}}}},
        {"evaluation": {"evaluators": {"q": {"agent-roles": {"*": {"trigger": "x"}}}}}},
        {"evaluation": {"evaluators": {"q": {"enabled": "yes"}}}},
        {"evaluation": {"evaluators": {"q": {"control_id": ""}}}},
        {"evaluation": {"evaluators": {"q": {"agents": ["a"]}}}},
    ],
)
def test_the_schema_refuses_what_the_runtime_refuses(validator, document: dict[str, Any]):
    with pytest.raises(ConfigurationError) as caught:
        EvaluationConfig.from_mapping(document)
    problem = best_match(validator.iter_errors(document))
    assert problem is not None, document
    # The editor points at the key the runtime names, or at the section holding it (as
    # written: the runtime names a kebab-case reserved key in snake_case).
    where = ".".join(str(part) for part in problem.absolute_path).replace("-", "_")
    assert caught.value.key_path.startswith(where), (where, problem.message)


@pytest.mark.parametrize("argv", [["config"], ["config", "scheme"], ["config", "schema", "x"]])
def test_a_config_command_without_an_action_it_knows_is_a_usage_error(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as caught:
        main(argv)
    assert caught.value.code == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith("usage: langchain-evals")


def test_a_file_pointing_an_editor_at_the_schema_reads_as_before(tmp_path: Path, capsys) -> None:
    # As the README says: the schema written beside evals.yaml, named on its first line.
    assert main(["config", "schema"]) == 0
    (tmp_path / "evals.schema.json").write_text(capsys.readouterr().out, encoding="utf-8")
    path = tmp_path / "evals.yaml"
    path.write_text(
        "# yaml-language-server: $schema=./evals.schema.json\n" + _readme_example(),
        encoding="utf-8",
    )
    config = EvaluationConfig.from_files(path)
    assert config.evaluator_ids == ("reply-length", "similarity")
