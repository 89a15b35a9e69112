from __future__ import annotations

import math
import textwrap

import pytest
from langchain_core.runnables import RunnableLambda

from langchain_evals_port import LevenshteinDistance, evaluator
from langchain_evals_port.capture._config import ConfigKeyError, ConfigTypeError, EvaluatorConfig
from langchain_evals_port.core.errors import EvalsError, EvaluatorUsageError
from langchain_evals_port.runtime import EvaluationRuntime, InMemoryLedger, Registration
from langchain_evals_port.runtime._config import Binding, ConfigurationError, EvaluationConfig
from langchain_evals_port.runtime.testkit import runtime_testkit

QUALITY = "interaction-quality-evaluator"
ENTRY = f"evaluation.evaluators.{QUALITY}"

# The example of the specification, as YAML and as a dict.
SPEC_YAML = f"""
evaluation:
  defaults:
    evaluator: {{ enabled: true }}
    agent: {{ sampling_ratio: 1.0, trigger_on_failure: false }}
  evaluators:
    {QUALITY}:
      control_id: quality-control
      min_length: 20
      agents:
        support-agent: {{ trigger: interaction }}
        billing-agent: {{ trigger: interaction, enabled: false, min_length: 50 }}
      agent_roles:
        customer-facing: {{ trigger: interaction }}
        "*": {{ trigger: interaction, sampling_ratio: 0.1 }}
"""


def spec_document() -> dict:
    return {
        "evaluation": {
            "defaults": {
                "evaluator": {"enabled": True},
                "agent": {"sampling_ratio": 1.0, "trigger_on_failure": False},
            },
            "evaluators": {
                QUALITY: {
                    "control_id": "quality-control",
                    "min_length": 20,
                    "agents": {
                        "support-agent": {"trigger": "interaction"},
                        "billing-agent": {
                            "trigger": "interaction",
                            "enabled": False,
                            "min_length": 50,
                        },
                    },
                    "agent_roles": {
                        "customer-facing": {"trigger": "interaction"},
                        "*": {"trigger": "interaction", "sampling_ratio": 0.1},
                    },
                }
            },
        }
    }


def config_of(evaluators: dict, **sections: object) -> EvaluationConfig:
    return EvaluationConfig.from_mapping({"evaluation": {"evaluators": evaluators, **sections}})


def startup_error(document: dict) -> ConfigurationError:
    with pytest.raises(ConfigurationError) as caught:
        EvaluationConfig.from_mapping(document)
    return caught.value


def evaluators_error(evaluators: dict, **sections: object) -> ConfigurationError:
    return startup_error({"evaluation": {"evaluators": evaluators, **sections}})


@pytest.fixture
def spec() -> EvaluationConfig:
    return EvaluationConfig.from_mapping(spec_document())


# --- choosing the binding ------------------------------------------------------------------


def test_an_agent_with_its_own_entry_is_bound_through_it(spec):
    binding = spec.binding(QUALITY, "support-agent", [])
    assert binding == Binding(
        evaluator_id=QUALITY,
        key_path=f"{ENTRY}.agents.support-agent",
        sampling_ratio=1.0,
        trigger_on_failure=False,
        trigger_on_interrupt=False,
        control_id="quality-control",
        config=EvaluatorConfig(
            {"control_id": "quality-control", "min_length": 20, "trigger": "interaction"}
        ),
    )


def test_a_disabled_agent_entry_wins_over_a_matching_role_entry(spec):
    assert spec.binding(QUALITY, "billing-agent", ["customer-facing"]) is None
    assert spec.bindings_for("billing-agent", ["customer-facing"]) == []


def test_the_role_entry_does_not_inherit_the_ratio_of_the_star_entry(spec):
    binding = spec.binding(QUALITY, "chat-agent", ["customer-facing"])
    assert binding.key_path == f"{ENTRY}.agent_roles.customer-facing"
    assert binding.sampling_ratio == 1.0


def test_the_star_entry_binds_an_agent_with_any_role(spec):
    binding = spec.binding(QUALITY, "router", ["internal"])
    assert binding.key_path == f"{ENTRY}.agent_roles.*"
    assert binding.sampling_ratio == 0.1


def test_an_agent_without_a_role_is_not_bound_through_the_star_entry(spec):
    assert spec.binding(QUALITY, "judge", []) is None
    assert spec.binding(QUALITY, "judge", ()) is None


def test_an_agent_without_a_role_is_bound_through_its_own_entry():
    config = config_of({"q": {"agents": {"judge": {}}, "agent_roles": {"*": {}}}})
    assert config.binding("q", "judge", []).key_path == "evaluation.evaluators.q.agents.judge"


def test_the_first_of_the_agents_roles_with_an_entry_wins():
    config = config_of(
        {"q": {"agent_roles": {"a": {"sampling_ratio": 0.2}, "b": {"sampling_ratio": 0.3}}}}
    )
    assert config.binding("q", "x", ["b", "a"]).sampling_ratio == 0.3
    assert config.binding("q", "x", ["a", "b"]).sampling_ratio == 0.2
    assert config.binding("q", "x", ["none", "b"]).sampling_ratio == 0.3


def test_a_disabled_entry_for_the_first_role_is_final():
    config = config_of({"q": {"agent_roles": {"a": {"enabled": False}, "b": {}, "*": {}}}})
    assert config.binding("q", "x", ["a", "b"]) is None
    assert config.binding("q", "x", ["b", "a"]) is not None


def test_an_agent_that_matches_no_entry_is_not_bound(spec):
    config = config_of({"q": {"agents": {"a": {}}, "agent_roles": {"r": {}}}})
    assert config.binding("q", "other", ["other-role"]) is None


def test_an_unconfigured_evaluator_binds_nothing(spec):
    assert spec.binding("unknown", "support-agent", []) is None
    assert not spec.is_enabled("unknown")
    assert spec.control_id("unknown") is None


def test_roles_given_as_a_string_are_refused(spec):
    with pytest.raises(TypeError, match="sequence of role names"):
        spec.binding(QUALITY, "x", "customer-facing")


# --- settings and defaults -----------------------------------------------------------------


def test_binding_settings_come_from_the_entry_then_defaults_agent_then_built_in():
    config = config_of(
        {
            "q": {
                "agents": {
                    "own": {"sampling_ratio": 0.5, "trigger_on_failure": True},
                    "plain": {},
                }
            }
        },
        defaults={"agent": {"sampling_ratio": 0.25, "trigger_on_interrupt": True}},
    )
    own = config.binding("q", "own", [])
    assert (own.sampling_ratio, own.trigger_on_failure, own.trigger_on_interrupt) == (
        0.5,
        True,
        True,
    )
    plain = config.binding("q", "plain", [])
    assert (plain.sampling_ratio, plain.trigger_on_failure, plain.trigger_on_interrupt) == (
        0.25,
        False,
        True,
    )


def test_the_built_in_defaults_apply_without_a_defaults_section():
    binding = config_of({"q": {"agents": {"a": None}}}).binding("q", "a", [])
    assert (binding.sampling_ratio, binding.trigger_on_failure, binding.trigger_on_interrupt) == (
        1.0,
        False,
        False,
    )


def test_an_integer_ratio_is_read_as_a_float():
    binding = config_of({"q": {"agents": {"a": {"sampling_ratio": 0}}}}).binding("q", "a", [])
    assert binding.sampling_ratio == 0.0
    assert type(binding.sampling_ratio) is float


def test_an_evaluator_entry_is_enabled_by_default(spec):
    assert spec.is_enabled(QUALITY)
    assert spec.control_id(QUALITY) == "quality-control"


def test_a_disabled_evaluator_entry_binds_no_agent():
    config = config_of({"q": {"enabled": False, "agents": {"a": {"enabled": True}}}})
    assert not config.is_enabled("q")
    assert config.binding("q", "a", []) is None
    assert config.evaluator_ids == ("q",)


def test_defaults_evaluator_disables_entries_that_do_not_enable_themselves():
    config = config_of(
        {"off": {"agents": {"a": {}}}, "on": {"enabled": True, "agents": {"a": {}}}},
        defaults={"evaluator": {"enabled": False}},
    )
    assert not config.is_enabled("off")
    assert config.is_enabled("on")
    assert [b.evaluator_id for b in config.bindings_for("a", [])] == ["on"]


def test_null_sections_mean_empty():
    config = config_of({"q": None}, defaults=None)
    assert config.evaluator_ids == ("q",)
    assert config.binding("q", "a", ["r"]) is None
    assert config.config_for("q", "a", []) == {}


@pytest.mark.parametrize("document", [None, {}, {"evaluation": None}, {"evaluation": {}}])
def test_nothing_configured(document):
    config = EvaluationConfig.from_mapping(document)
    assert config.evaluator_ids == ()
    assert config.bindings_for("a", ["r"]) == []


def test_a_misspelt_evaluation_section_is_an_error():
    error = startup_error({"evaluaton": {"evaluators": {"q": {"agents": {"a": {}}}}}})
    assert error.key_path == "evaluaton"
    assert str(error).startswith(
        "evaluaton: unknown key (did you mean 'evaluation'?); the top level accepts only evaluation"
    )


def test_other_top_level_keys_are_errors():
    # The document is the evaluation configuration alone: an application passes the section.
    settings = {"app": {"port": 8080}, "evaluation": {"evaluators": {"q": {}}}}
    error = startup_error(settings)
    assert error.key_path == "app"
    assert "unknown key; the top level accepts only evaluation" in str(error)
    assert "give the evaluation section alone" in str(error)
    config = EvaluationConfig.from_mapping({"evaluation": settings["evaluation"]})
    assert config.evaluator_ids == ("q",)


def test_a_document_must_be_a_mapping():
    with pytest.raises(TypeError, match="must be a mapping"):
        EvaluationConfig.from_mapping([("evaluation", {})])  # type: ignore[arg-type]


# --- ctx.config ----------------------------------------------------------------------------


def test_a_binding_property_overrides_the_entry_property(spec):
    config = spec.config_for(QUALITY, "support-agent", [])
    assert config.get_int("min_length") == 20
    overriding = config_of(
        {"q": {"min_length": 20, "agents": {"billing-agent": {"min_length": 50}}}}
    )
    assert overriding.config_for("q", "billing-agent", []).get_int("min_length") == 50


def test_config_for_an_agent_without_an_enabled_binding_is_the_evaluator_entry(spec):
    entry = {"control_id": "quality-control", "min_length": 20}
    assert spec.config_for(QUALITY, "billing-agent", ["customer-facing"]) == entry
    assert spec.config_for(QUALITY, "judge", []) == entry


def test_config_for_a_disabled_evaluator_is_its_entry():
    config = config_of({"q": {"enabled": False, "p": 1, "agents": {"a": {"p": 2}}}})
    assert config.config_for("q", "a", []) == {"enabled": False, "p": 1}


def test_config_for_an_unconfigured_evaluator_is_empty(spec):
    assert spec.config_for("unknown", "support-agent", []) == {}


def test_config_holds_reserved_keys_only_where_entries_set_them(spec):
    star = spec.config_for(QUALITY, "router", ["internal"])
    assert star == {
        "control_id": "quality-control",
        "min_length": 20,
        "trigger": "interaction",
        "sampling_ratio": 0.1,
    }
    role = spec.config_for(QUALITY, "chat-agent", ["customer-facing"])
    assert "sampling_ratio" not in role
    assert "trigger_on_failure" not in role  # set under defaults.agent only
    assert "enabled" not in role  # set under defaults.evaluator only
    assert "agents" not in role
    assert "agent_roles" not in role


def test_config_for_is_the_binding_config(spec):
    binding = spec.binding(QUALITY, "router", ["internal"])
    assert spec.config_for(QUALITY, "router", ["internal"]) == binding.config


def test_property_keys_are_kept_as_written():
    config = config_of({"q": {"min-length": 20, "agents": {"a": {"Max_Length": 9}}}})
    assert dict(config.config_for("q", "a", [])) == {"min-length": 20, "Max_Length": 9}


def test_a_kebab_case_reserved_key_is_read_as_snake_case():
    config = config_of(
        {
            "q": {
                "control-id": "c-1",
                "agent-roles": {
                    "r": {
                        "sampling-ratio": 0.5,
                        "trigger-on-failure": True,
                        "trigger-on-interrupt": True,
                    }
                },
            }
        }
    )
    binding = config.binding("q", "a", ["r"])
    assert (binding.sampling_ratio, binding.trigger_on_failure, binding.trigger_on_interrupt) == (
        0.5,
        True,
        True,
    )
    assert binding.control_id == "c-1"
    assert binding.config == {
        "control_id": "c-1",
        "sampling_ratio": 0.5,
        "trigger_on_failure": True,
        "trigger_on_interrupt": True,
    }


def test_a_kebab_case_key_under_defaults_is_read_as_snake_case():
    config = config_of({"q": {"agents": {"a": {}}}}, defaults={"agent": {"sampling-ratio": 0.3}})
    assert config.binding("q", "a", []).sampling_ratio == 0.3


def test_the_configuration_does_not_follow_later_changes_to_the_input():
    document = spec_document()
    config = EvaluationConfig.from_mapping(document)
    document["evaluation"]["evaluators"][QUALITY]["min_length"] = 99
    document["evaluation"]["evaluators"][QUALITY]["agents"]["new-agent"] = {}
    assert config.config_for(QUALITY, "support-agent", [])["min_length"] == 20
    assert config.binding(QUALITY, "new-agent", []) is None


# --- bindings_for --------------------------------------------------------------------------


def test_bindings_for_lists_the_enabled_bindings_in_configuration_order():
    config = config_of(
        {
            "b": {"agent_roles": {"*": {}}},
            "disabled": {"enabled": False, "agent_roles": {"*": {}}},
            "a": {"agents": {"x": {}}},
            "c": {"agents": {"x": {"enabled": False}}, "agent_roles": {"*": {}}},
            "d": {"agents": {"other": {}}},
        }
    )
    assert [b.evaluator_id for b in config.bindings_for("x", ["r"])] == ["b", "a"]
    assert [b.evaluator_id for b in config.bindings_for("y", ["r"])] == ["b", "c"]
    assert [b.evaluator_id for b in config.bindings_for("y", [])] == []


def test_bindings_for_is_cached_and_returns_equal_results(spec):
    first = spec.bindings_for("router", ["internal"])
    first.clear()  # the caller's list, not the cache
    second = spec.bindings_for("router", ("internal",))
    third = spec.bindings_for("router", ["internal"])
    assert second == third == [spec.binding(QUALITY, "router", ["internal"])]
    assert second[0] is third[0]


def test_the_cache_tells_role_lists_apart(spec):
    assert spec.bindings_for("x", ["customer-facing"])[0].sampling_ratio == 1.0
    assert spec.bindings_for("x", ["other"])[0].sampling_ratio == 0.1
    assert spec.bindings_for("x", []) == []


def test_a_binding_is_hashable(spec):
    binding = spec.binding(QUALITY, "support-agent", [])
    assert binding in {binding}


# --- EvaluatorConfig -----------------------------------------------------------------------


def test_getters_read_present_values():
    config = EvaluatorConfig({"n": 5, "f": 0.5, "b": False, "s": "text", "whole": 50.0})
    assert config.get_int("n") == 5
    assert config.get_int("whole") == 50
    assert type(config.get_int("whole")) is int
    assert config.get_float("f") == 0.5
    assert config.get_float("n") == 5.0
    assert type(config.get_float("n")) is float
    assert config.get_bool("b") is False
    assert config.get_str("s") == "text"


@pytest.mark.parametrize("getter", ["get_int", "get_float", "get_bool", "get_str"])
def test_a_missing_key_raises_a_key_error_naming_it(getter):
    config = EvaluatorConfig({"other": 1, "null": None})
    for key in ("min_length", "null"):
        with pytest.raises(ConfigKeyError) as caught:
            getattr(config, getter)(key)
        assert caught.value.key == key
        assert str(caught.value) == f"{key}: not set in the evaluator configuration"
        assert isinstance(caught.value, KeyError)
        assert isinstance(caught.value, EvalsError)


def test_subscripting_a_missing_key_raises_the_same_error():
    with pytest.raises(ConfigKeyError, match="min_length"):
        EvaluatorConfig()["min_length"]


def test_getters_return_the_default_for_a_missing_or_null_key():
    config = EvaluatorConfig({"null": None})
    assert config.get_int("x", 3) == 3
    assert config.get_float("null", 0.5) == 0.5
    assert config.get_bool("x", True) is True
    assert config.get_str("x", "d") == "d"
    assert config.get("x") is None
    assert config.get("x", 1) == 1


@pytest.mark.parametrize(
    ("getter", "value"),
    [
        ("get_int", True),
        ("get_int", 2.5),
        ("get_int", "50"),
        ("get_int", math.inf),
        ("get_float", False),
        ("get_float", "0.5"),
        ("get_bool", 1),
        ("get_bool", "true"),
        ("get_str", 5),
        ("get_str", ["a"]),
    ],
)
def test_a_wrong_type_raises_naming_the_key_and_the_value(getter, value):
    config = EvaluatorConfig({"k": value})
    with pytest.raises(ConfigTypeError) as caught:
        getattr(config, getter)("k")
    assert str(caught.value).startswith("k: expected ")
    assert repr(value) in str(caught.value)
    assert (caught.value.key, caught.value.value) == ("k", value)
    assert isinstance(caught.value, TypeError)


def test_a_wrong_type_is_not_hidden_by_a_default():
    with pytest.raises(ConfigTypeError):
        EvaluatorConfig({"k": "5"}).get_int("k", 1)


def test_the_evaluator_config_is_read_only():
    config = EvaluatorConfig({"k": 1})
    with pytest.raises(TypeError):
        config["k"] = 2  # type: ignore[index]
    with pytest.raises(TypeError):
        del config["k"]  # type: ignore[attr-defined]
    with pytest.raises(AttributeError):
        config.update({"k": 2})  # type: ignore[attr-defined]
    assert config == {"k": 1}


def test_the_evaluator_config_copies_its_input():
    data = {"k": 1}
    config = EvaluatorConfig(data)
    data["k"] = 2
    assert config["k"] == 1


def test_the_evaluator_config_is_a_mapping_with_a_useful_repr():
    config = EvaluatorConfig({"a": 1, "b": [2]})
    assert config == {"a": 1, "b": [2]}
    assert config != {"a": 1}
    assert config == EvaluatorConfig({"b": [2], "a": 1})
    assert list(config) == ["a", "b"]
    assert len(config) == 2
    assert "a" in config
    assert "z" not in config
    assert dict(config.items()) == {"a": 1, "b": [2]}
    assert repr(config) == "EvaluatorConfig({'a': 1, 'b': [2]})"
    assert EvaluatorConfig() == {}


# --- files and layering --------------------------------------------------------------------


def write(tmp_path, name: str, text: str):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text), encoding="utf-8")
    return path


def test_the_spec_example_reads_the_same_from_yaml(tmp_path, spec):
    from_yaml = EvaluationConfig.from_files(write(tmp_path, "application.yaml", SPEC_YAML))
    for agent, roles in [
        ("support-agent", []),
        ("billing-agent", ["customer-facing"]),
        ("chat", ["customer-facing"]),
        ("router", ["internal"]),
        ("judge", []),
    ]:
        assert from_yaml.bindings_for(agent, roles) == spec.bindings_for(agent, roles)
        assert from_yaml.config_for(QUALITY, agent, roles) == spec.config_for(QUALITY, agent, roles)


def test_a_deployment_override_is_layered_over_the_base_file(tmp_path):
    base = write(tmp_path, "base.yaml", SPEC_YAML)
    override = write(
        tmp_path,
        "production.yml",
        f"""
        evaluation:
          evaluators:
            {QUALITY}:
              agent_roles:
                "*": {{ sampling-ratio: 0.01 }}
                customer-facing: {{ enabled: false }}
        """,
    )
    config = EvaluationConfig.from_files(base, str(override))
    star = config.binding(QUALITY, "router", ["internal"])
    assert star.sampling_ratio == 0.01
    assert star.config["trigger"] == "interaction"  # kept from the base
    assert "sampling-ratio" not in star.config
    assert config.binding(QUALITY, "chat", ["customer-facing"]) is None
    support = config.binding(QUALITY, "support-agent", [])
    assert support.config["min_length"] == 20
    assert support.control_id == "quality-control"


def test_a_later_file_wins_over_an_earlier_one(tmp_path):
    base = write(tmp_path, "a.yaml", "evaluation: {evaluators: {q: {agents: {x: {p: [1, 2]}}}}}")
    middle = write(tmp_path, "b.yaml", "evaluation: {evaluators: {q: {agents: {x: {p: [3]}}}}}")
    last = write(tmp_path, "c.yaml", "evaluation: {evaluators: {q: {enabled: false}}}")
    config = EvaluationConfig.from_files(base, middle)
    assert config.config_for("q", "x", []) == {"p": [3]}  # a list is replaced, not merged
    assert not EvaluationConfig.from_files(base, middle, last).is_enabled("q")


def test_a_toml_file_is_read_and_layered(tmp_path):
    base = write(
        tmp_path,
        "base.toml",
        """
        [evaluation.defaults.agent]
        trigger_on_failure = true

        [evaluation.evaluators.quality]
        control-id = "quality-control"
        min_length = 20

        [evaluation.evaluators.quality.agents.support-agent]
        trigger = "interaction"
        sampling_ratio = 0.5

        [evaluation.evaluators.quality.agent-roles."*"]
        """,
    )
    override = write(
        tmp_path,
        "override.toml",
        """
        [evaluation.evaluators.quality.agents.support-agent]
        sampling-ratio = 0.2
        """,
    )
    config = EvaluationConfig.from_files(base, override)
    binding = config.binding("quality", "support-agent", [])
    assert binding.sampling_ratio == 0.2
    assert binding.trigger_on_failure is True
    assert binding.control_id == "quality-control"
    assert binding.config == {
        "control_id": "quality-control",
        "min_length": 20,
        "trigger": "interaction",
        "sampling_ratio": 0.2,
    }
    assert config.binding("quality", "other", ["r"]).key_path == (
        "evaluation.evaluators.quality.agent_roles.*"
    )


def test_yaml_and_toml_files_layer_together(tmp_path):
    base = write(tmp_path, "base.yaml", SPEC_YAML)
    override = write(
        tmp_path,
        "override.toml",
        f"""
        [evaluation.evaluators.{QUALITY}.agents.billing-agent]
        enabled = true
        """,
    )
    config = EvaluationConfig.from_files(base, override)
    assert config.config_for(QUALITY, "billing-agent", [])["min_length"] == 50


def test_an_empty_yaml_file_configures_nothing(tmp_path):
    config = EvaluationConfig.from_files(write(tmp_path, "empty.yaml", ""))
    assert config.evaluator_ids == ()
    assert EvaluationConfig.from_files().evaluator_ids == ()


def test_an_unknown_file_type_is_an_error_naming_the_file(tmp_path):
    path = write(tmp_path, "application.conf", "evaluation {}")
    with pytest.raises(ConfigurationError, match=r"unsupported file type '\.conf'") as caught:
        EvaluationConfig.from_files(path)
    assert caught.value.key_path == str(path)
    assert str(caught.value).startswith(f"{path}: ")


@pytest.mark.parametrize(
    ("name", "text"), [("bad.yaml", "evaluation: [unclosed"), ("bad.toml", "evaluation = ")]
)
def test_a_file_that_cannot_be_parsed_is_an_error_naming_the_file(tmp_path, name, text):
    path = write(tmp_path, name, text)
    with pytest.raises(ConfigurationError, match="cannot be parsed") as caught:
        EvaluationConfig.from_files(path)
    assert caught.value.key_path in (str(path), f"{path}, line 1")


@pytest.mark.parametrize(
    ("text", "where", "problem"),
    [
        (  # PyYAML alone keeps the last 'a': the first binding was silently dropped
            "evaluation:\n  evaluators:\n    quality:\n      agents:\n"
            "        a: {sampling_ratio: 1.0}\n        a: {enabled: false}\n",
            "line 6",
            "evaluation.evaluators.quality.agents.a: key 'a' given twice in one mapping",
        ),
        (
            "evaluation:\n  evaluators:\n    quality:\n      pass_threshold: .nan\n",
            "line 4",
            "evaluation.evaluators.quality.pass_threshold: .nan is not a finite number",
        ),
        (
            "evaluation:\n  evaluators:\n    quality:\n      limit: -.inf\n",
            "line 4",
            "evaluation.evaluators.quality.limit: -.inf is not a finite number",
        ),
        (
            "evaluation: {x: " + "[" * 300 + "]" * 300 + "}\n",
            "line 1",
            "evaluation.x[0][0]…[0][0][0]: nested more than 100 levels deep",
        ),
        ("evaluation: " + "[" * 990 + "]" * 990 + "\n", "line 1", "nested more than 100 levels"),
    ],
)
def test_a_yaml_file_with_a_repeated_key_nan_or_deep_nesting_is_refused(
    tmp_path, text, where, problem
):
    path = write(tmp_path, "application.yaml", text)
    with pytest.raises(ConfigurationError) as caught:
        EvaluationConfig.from_files(path)
    assert caught.value.key_path == f"{path}, {where}"
    assert str(caught.value).startswith(f"{path}, {where}: {problem}")


def test_a_yaml_file_must_hold_a_mapping(tmp_path):
    path = write(tmp_path, "list.yaml", "- evaluation\n")
    with pytest.raises(ConfigurationError, match="expected a mapping at the top level, got list"):
        EvaluationConfig.from_files(path)


def test_merge_reads_kebab_keys_before_merging_and_leaves_its_inputs_alone():
    base = {"evaluation": {"evaluators": {"q": {"agents": {"a": {"sampling_ratio": 1.0}}}}}}
    override = {"evaluation": {"evaluators": {"q": {"agents": {"a": {"sampling-ratio": 0.5}}}}}}
    merged = EvaluationConfig.merge(base, override)
    assert merged == {
        "evaluation": {"evaluators": {"q": {"agents": {"a": {"sampling_ratio": 0.5}}}}}
    }
    assert base["evaluation"]["evaluators"]["q"]["agents"]["a"] == {"sampling_ratio": 1.0}
    assert EvaluationConfig.merge() == {}


def test_merge_keeps_other_top_level_keys_and_replaces_non_mappings():
    merged = EvaluationConfig.merge({"app": {"a": 1, "b": 2}, "x": [1]}, {"app": {"b": 3}, "x": 5})
    assert merged == {"app": {"a": 1, "b": 3}, "x": 5}


# --- startup errors ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "key", ["sampling_ratio", "trigger_on_failure", "trigger_on_interrupt", "sampling-ratio"]
)
def test_a_binding_setting_on_an_evaluator_entry_is_an_error(key):
    value = 0.5 if "ratio" in key else True
    error = evaluators_error({"quality": {key: value}})
    snake = key.replace("-", "_")
    assert error.key_path == f"evaluation.evaluators.quality.{snake}"
    assert str(error).startswith(f"evaluation.evaluators.quality.{snake}: not allowed on an")


@pytest.mark.parametrize("ratio", [1.5, -0.1, "high", True, None, math.nan, math.inf])
def test_a_sampling_ratio_outside_zero_to_one_or_not_a_number_is_an_error(ratio):
    error = evaluators_error({"quality": {"agent_roles": {"r": {"sampling_ratio": ratio}}}})
    assert error.key_path == "evaluation.evaluators.quality.agent_roles.r.sampling_ratio"
    assert "expected a number from 0.0 to 1.0" in str(error)
    assert repr(ratio) in str(error)


@pytest.mark.parametrize("ratio", [0, 1, 0.0, 1.0, 0.5])
def test_a_sampling_ratio_from_zero_to_one_is_accepted(ratio):
    config = config_of({"q": {"agents": {"a": {"sampling_ratio": ratio}}}})
    assert config.binding("q", "a", []).sampling_ratio == ratio


def test_an_invalid_ratio_under_defaults_agent_is_an_error():
    error = evaluators_error({}, defaults={"agent": {"sampling_ratio": 2}})
    assert error.key_path == "evaluation.defaults.agent.sampling_ratio"


@pytest.mark.parametrize(
    ("defaults", "key_path"),
    [
        ({"evaluator": {"min_length": 20}}, "evaluation.defaults.evaluator.min_length"),
        ({"agent": {"min_length": 20}}, "evaluation.defaults.agent.min_length"),
        ({"evaluator": {"sampling_ratio": 0.5}}, "evaluation.defaults.evaluator.sampling_ratio"),
        ({"agent": {"enabled": False}}, "evaluation.defaults.agent.enabled"),
        ({"agent": {"control-id": "c"}}, "evaluation.defaults.agent.control_id"),
        ({"agent": {"trigger": "interaction"}}, "evaluation.defaults.agent.trigger"),
        ({"min_length": 20}, "evaluation.defaults.min_length"),
    ],
)
def test_properties_and_misplaced_keys_under_defaults_are_errors(defaults, key_path):
    error = evaluators_error({}, defaults=defaults)
    assert error.key_path == key_path
    assert str(error).startswith(f"{key_path}: ")
    assert "accepts only" in str(error)


@pytest.mark.parametrize(
    ("entry", "key_path"),
    [
        ({"trigger": "on_message"}, "evaluation.evaluators.q.trigger"),
        ({"agents": {"a": {"trigger": "always"}}}, "evaluation.evaluators.q.agents.a.trigger"),
        ({"agent_roles": {"*": {"trigger": 1}}}, "evaluation.evaluators.q.agent_roles.*.trigger"),
    ],
)
def test_an_unknown_trigger_is_an_error_listing_the_allowed_ones(entry, key_path):
    error = evaluators_error({"q": entry})
    assert error.key_path == key_path
    assert "unknown trigger" in str(error)
    assert "allowed: interaction" in str(error)


@pytest.mark.parametrize("trigger", ["interaction", None])
def test_the_interaction_trigger_or_none_is_accepted(trigger):
    config = config_of({"q": {"agents": {"a": {"trigger": trigger}}}})
    assert config.binding("q", "a", []) is not None


@pytest.mark.parametrize("key", ["control_id", "control-id"])
def test_control_id_on_a_binding_is_an_error(key):
    error = evaluators_error({"q": {"agents": {"a": {key: "c"}}}})
    assert error.key_path == "evaluation.evaluators.q.agents.a.control_id"
    assert "set it on the evaluator entry" in str(error)


@pytest.mark.parametrize("group", ["agents", "agent_roles"])
def test_bindings_do_not_nest(group):
    error = evaluators_error({"q": {"agent_roles": {"r": {group: {}}}}})
    assert error.key_path == f"evaluation.evaluators.q.agent_roles.r.{group}"


@pytest.mark.parametrize("control_id", [5, "", None, ["c"]])
def test_control_id_must_be_a_non_empty_string(control_id):
    error = evaluators_error({"q": {"control_id": control_id}})
    assert error.key_path == "evaluation.evaluators.q.control_id"


@pytest.mark.parametrize(
    ("entry", "key_path"),
    [
        ({"enabled": "no"}, "evaluation.evaluators.q.enabled"),
        ({"enabled": 0}, "evaluation.evaluators.q.enabled"),
        ({"agents": {"a": {"enabled": None}}}, "evaluation.evaluators.q.agents.a.enabled"),
        (
            {"agent_roles": {"r": {"trigger_on_failure": "yes"}}},
            "evaluation.evaluators.q.agent_roles.r.trigger_on_failure",
        ),
        (
            {"agents": {"a": {"trigger-on-interrupt": 1}}},
            "evaluation.evaluators.q.agents.a.trigger_on_interrupt",
        ),
    ],
)
def test_flags_must_be_bools(entry, key_path):
    error = evaluators_error({"q": entry})
    assert error.key_path == key_path
    assert "expected true or false" in str(error)


def test_a_flag_under_defaults_must_be_a_bool():
    error = evaluators_error({}, defaults={"evaluator": {"enabled": "false"}})
    assert error.key_path == "evaluation.defaults.evaluator.enabled"


def test_check_registered_rejects_an_unregistered_evaluator_id(spec):
    spec.check_registered({QUALITY, "other"})
    with pytest.raises(ConfigurationError) as caught:
        spec.check_registered(["reply-length-evaluator"])
    assert caught.value.key_path == ENTRY
    assert str(caught.value).startswith(f"{ENTRY}: no evaluator with this id is registered")
    assert "reply-length-evaluator" in str(caught.value)


def test_check_registered_covers_disabled_entries():
    config = config_of({"typo-evaluator": {"enabled": False}})
    with pytest.raises(ConfigurationError, match="registered: none"):
        config.check_registered([])


@pytest.mark.parametrize("key", ["evaluator", "agents", "defaults_agent"])
def test_an_unknown_key_under_evaluation_is_an_error(key):
    error = startup_error({"evaluation": {"evaluators": {}, key: {}}})
    assert error.key_path == f"evaluation.{key}"
    assert "unknown key" in str(error)
    assert "defaults, evaluators" in str(error)


@pytest.mark.parametrize(
    ("document", "key_path", "suggestion"),
    [
        ({"evaluation": {"evaluator": {}}}, "evaluation.evaluator", "evaluators"),
        ({"evaluation": {"Defaults": {}}}, "evaluation.Defaults", "defaults"),
        ({"evaluation": {"defaults": {"agents": {}}}}, "evaluation.defaults.agents", "agent"),
        (
            {"evaluation": {"defaults": {"agent": {"sampling_rate": 0.5}}}},
            "evaluation.defaults.agent.sampling_rate",
            "sampling_ratio",
        ),
        (
            {"evaluation": {"defaults": {"evaluator": {"enable": False}}}},
            "evaluation.defaults.evaluator.enable",
            "enabled",
        ),
    ],
)
def test_an_unknown_key_of_the_fixed_part_names_the_closest_valid_key(
    document, key_path, suggestion
):
    error = startup_error(document)
    assert error.key_path == key_path
    assert str(error).startswith(f"{key_path}: unknown key (did you mean {suggestion!r}?); ")
    assert "accepts only" in str(error)


@pytest.mark.parametrize(
    ("entry", "key_path", "suggestion"),
    [
        # The issue's example: ``agent`` for ``agents`` bound nothing.
        ({"agent": {"a": {}}}, "evaluation.evaluators.q.agent", "agents"),
        ({"agent_role": {"*": {}}}, "evaluation.evaluators.q.agent_role", "agent_roles"),
        ({"agentRoles": {"*": {}}}, "evaluation.evaluators.q.agentRoles", "agent_roles"),
        ({"Enabled": False}, "evaluation.evaluators.q.Enabled", "enabled"),
        ({"controlid": "c"}, "evaluation.evaluators.q.controlid", "control_id"),
        (
            {"agents": {"a": {"sampling_rate": 0.1}}},
            "evaluation.evaluators.q.agents.a.sampling_rate",
            "sampling_ratio",
        ),
        (
            {"agent_roles": {"r": {"trigger_on_fail": True}}},
            "evaluation.evaluators.q.agent_roles.r.trigger_on_fail",
            "trigger_on_failure",
        ),
        (
            {"agents": {"a": {"triggers": "x"}}},
            "evaluation.evaluators.q.agents.a.triggers",
            "trigger",
        ),
    ],
)
def test_a_typo_of_a_reserved_key_is_an_error_not_a_property(entry, key_path, suggestion):
    error = evaluators_error({"q": entry})
    assert error.key_path == key_path
    assert str(error).startswith(f"{key_path}: unknown key (did you mean {suggestion!r}?); ")
    assert "rename it if it is one" in str(error)


def test_properties_unlike_any_reserved_key_are_kept():
    properties = {"min_length": 20, "events": ["x"], "agent_id": "a", "model": "m", "label": "l"}
    config = config_of({"q": {**properties, "agents": {"a": properties}}})
    assert dict(config.config_for("q", "a", [])) == properties


@pytest.mark.parametrize(
    ("entry", "key_path"),
    [
        ({"sampling_ratio": 1.0, "sampling-ratio": 0.5}, "evaluation.evaluators.q.sampling_ratio"),
        (
            {"agent_roles": {}, "agent-roles": {}},
            "evaluation.evaluators.q.agent_roles",
        ),
        (
            {"agents": {"a": {"trigger-on-failure": True, "trigger_on_failure": False}}},
            "evaluation.evaluators.q.agents.a.trigger_on_failure",
        ),
    ],
)
def test_both_spellings_of_a_reserved_key_in_one_entry_is_an_error(entry, key_path):
    error = evaluators_error({"q": entry})
    assert error.key_path == key_path
    assert "set twice" in str(error)


def test_both_spellings_under_defaults_is_an_error():
    error = evaluators_error({}, defaults={"agent": {"sampling_ratio": 1.0, "sampling-ratio": 0.5}})
    assert error.key_path == "evaluation.defaults.agent.sampling_ratio"


@pytest.mark.parametrize(
    ("document", "key_path"),
    [
        ({"evaluation": ["evaluators"]}, "evaluation"),
        ({"evaluation": {"evaluators": ["q"]}}, "evaluation.evaluators"),
        ({"evaluation": {"defaults": 1}}, "evaluation.defaults"),
        ({"evaluation": {"defaults": {"agent": "fast"}}}, "evaluation.defaults.agent"),
        ({"evaluation": {"evaluators": {"q": "on"}}}, "evaluation.evaluators.q"),
        (
            {"evaluation": {"evaluators": {"q": {"agents": ["a"]}}}},
            "evaluation.evaluators.q.agents",
        ),
        (
            {"evaluation": {"evaluators": {"q": {"agent_roles": {"r": True}}}}},
            "evaluation.evaluators.q.agent_roles.r",
        ),
    ],
)
def test_a_non_mapping_where_a_mapping_belongs_is_an_error(document, key_path):
    error = startup_error(document)
    assert error.key_path == key_path
    assert "expected a mapping" in str(error)


@pytest.mark.parametrize(
    ("document", "key_path"),
    [
        ({"evaluation": {"evaluators": {1: {}}}}, "evaluation.evaluators.1"),
        (
            {"evaluation": {"evaluators": {"q": {"agents": {True: {}}}}}},
            "evaluation.evaluators.q.agents.True",
        ),
        ({"evaluation": {"evaluators": {"q": {2: "x"}}}}, "evaluation.evaluators.q.2"),
    ],
)
def test_ids_and_keys_must_be_strings(document, key_path):
    error = startup_error(document)
    assert error.key_path == key_path
    assert "keys must be strings" in str(error)


def test_configuration_errors_are_value_errors_of_this_package():
    error = evaluators_error({"q": {"sampling_ratio": 0.5}})
    assert isinstance(error, ValueError)
    assert isinstance(error, EvalsError)


def test_properties_are_not_validated():
    config = config_of({"q": {"min_length": "not a number", "nested": {"enabled": "x"}}})
    assert config.config_for("q", "a", [])["nested"] == {"enabled": "x"}


# --- pass_threshold --------------------------------------------------------------------------


def test_pass_threshold_is_a_reserved_key_of_entries_and_bindings():
    config = config_of(
        {
            "q": {
                "pass_threshold": 0.8,
                "agents": {"a": {}, "b": {"pass-threshold": 0.5}},
            }
        }
    )
    # In config_for where an entry sets it, the binding's over the entry's, kebab-case read
    # as snake_case; it never becomes a property named otherwise.
    assert config.config_for("q", "a", []) == {"pass_threshold": 0.8}
    assert config.config_for("q", "b", []) == {"pass_threshold": 0.5}
    assert config.binding("q", "b", []).config.get_float("pass_threshold") == 0.5


@pytest.mark.parametrize("threshold", [0, 1, 0.75, -2, 40])
def test_any_finite_number_is_a_pass_threshold(threshold):
    config = config_of({"q": {"pass_threshold": threshold, "agents": {"a": {}}}})
    assert config.config_for("q", "a", [])["pass_threshold"] == threshold


@pytest.mark.parametrize("threshold", ["0.8", True, None, math.nan, math.inf, [0.8]])
@pytest.mark.parametrize(
    ("where", "key_path"),
    [
        (lambda value: {"pass_threshold": value}, "evaluation.evaluators.q.pass_threshold"),
        (
            lambda value: {"agent_roles": {"r": {"pass_threshold": value}}},
            "evaluation.evaluators.q.agent_roles.r.pass_threshold",
        ),
    ],
    ids=["entry", "binding"],
)
def test_a_pass_threshold_that_is_not_a_finite_number_is_an_error(threshold, where, key_path):
    error = evaluators_error({"q": where(threshold)})
    assert error.key_path == key_path
    assert str(error) == f"{key_path}: expected a number, got {threshold!r}"


@pytest.mark.parametrize("typo", ["pass_treshold", "pass_thresholds", "passthreshold"])
def test_a_typo_of_pass_threshold_is_an_error_not_a_property(typo):
    error = evaluators_error({"q": {"agents": {"a": {typo: 0.8}}}})
    assert error.key_path == f"evaluation.evaluators.q.agents.a.{typo}"
    assert "did you mean 'pass_threshold'?" in str(error)


def test_pass_threshold_is_not_a_default():
    error = evaluators_error({}, defaults={"agent": {"pass_threshold": 0.8}})
    assert error.key_path == "evaluation.defaults.agent.pass_threshold"
    assert "accepts only" in str(error)


@pytest.mark.parametrize(
    ("entry", "missing"),
    [
        ({"pass_threshold": 0.8, "agents": {"a": {}}}, None),
        ({"agents": {"a": {"pass_threshold": 0.8}, "b": {"pass_threshold": 0.6}}}, None),
        ({"agents": {"a": {"pass_threshold": 0.8}, "b": {"enabled": False}}}, None),
        ({"agents": {"a": {"pass_threshold": 0.8}, "b": {}}}, "evaluation.evaluators.q.agents.b"),
        ({"agent_roles": {"*": {}}}, "evaluation.evaluators.q.agent_roles.*"),
        ({"min_length": 3}, "evaluation.evaluators.q"),
    ],
    ids=["entry", "every-binding", "disabled-binding", "one-binding", "role", "no-bindings"],
)
def test_missing_pass_threshold_names_where_a_verdict_would_lack_one(entry, missing):
    assert config_of({"q": entry}).missing_pass_threshold("q") == missing


def test_missing_pass_threshold_of_an_unconfigured_evaluator():
    missing = config_of({}).missing_pass_threshold("q")
    assert missing == "evaluation.evaluators.q (not configured)"


# The runtime applies pass_threshold; these start one.


def similarity_runtime(config: dict, **registration: object) -> EvaluationRuntime:
    """A runtime that does not start, with LevenshteinDistance (numeric) registered as q."""
    evaluators = {"q": Registration(LevenshteinDistance(), **registration)}
    return EvaluationRuntime(config, evaluators=evaluators, ledger=InMemoryLedger(), start=False)


@pytest.mark.parametrize(
    ("entry", "key_path"),
    [
        ({"min_length": 3}, "evaluation.evaluators.q"),
        ({"agents": {"a": {}}}, "evaluation.evaluators.q.agents.a"),
        (
            {"agents": {"a": {"pass_threshold": 0.8}, "b": {}}},
            "evaluation.evaluators.q.agents.b",
        ),
    ],
)
def test_a_numeric_evaluator_without_a_pass_threshold_is_a_startup_error(entry, key_path):
    with pytest.raises(EvaluatorUsageError) as caught:
        similarity_runtime({"evaluation": {"evaluators": {"q": entry}}})
    message = str(caught.value)
    assert message.startswith("evaluators['q']: LevenshteinDistance scores with numbers")
    assert f"none is set at {key_path} " in message


@pytest.mark.parametrize(
    ("entry", "registration"),
    [
        ({"pass_threshold": 0.8, "agents": {"a": {}}}, {}),
        ({"agents": {"a": {"pass_threshold": 0.8}}}, {}),
        ({"agents": {"a": {}}}, {"pass_threshold": 0.8}),
    ],
    ids=["entry", "binding", "registration"],
)
def test_a_numeric_evaluator_starts_with_a_pass_threshold_from_anywhere(entry, registration):
    similarity_runtime({"evaluation": {"evaluators": {"q": entry}}}, **registration).close()


def test_the_configured_pass_threshold_wins_over_the_registration():
    """The same score of 0.75 against the registration's 0.5, the entry's 0.9 and a
    binding's 0.7: the most specific configured threshold decides."""

    @evaluator
    def three_quarters() -> float:
        return 0.75

    config = {
        "evaluation": {
            "evaluators": {
                "quality": {
                    "pass_threshold": 0.9,
                    "agents": {"strict-agent": {}, "lenient-agent": {"pass_threshold": 0.7}},
                }
            }
        }
    }
    registration = Registration(three_quarters, pass_threshold=0.5)
    records = {}
    with runtime_testkit(config, {"quality": registration}) as runtime:
        for agent_id in ("strict-agent", "lenient-agent"):
            agent = runtime.bind(RunnableLambda(lambda question: question), agent_id=agent_id)
            reply = agent.invoke_detailed("hi")
            [records[agent_id]] = runtime.wait_for_evaluations(reply.interaction_id)
    strict, lenient = records["strict-agent"], records["lenient-agent"]
    assert (strict.result.score, strict.pass_threshold, strict.passed) == (0.75, 0.9, False)
    assert (lenient.result.score, lenient.pass_threshold, lenient.passed) == (0.75, 0.7, True)


# --- the models ----------------------------------------------------------------------------


def test_a_wrong_type_deep_in_a_binding_of_a_file_names_its_key_path(tmp_path):
    path = write(
        tmp_path,
        "evals.yaml",
        """
        evaluation:
          evaluators:
            quality:
              agent_roles:
                customer-facing: { sampling_ratio: 0.5 }
                "*": { trigger-on-interrupt: "yes" }
        """,
    )
    with pytest.raises(ConfigurationError) as caught:
        EvaluationConfig.from_files(path)
    key_path = "evaluation.evaluators.quality.agent_roles.*.trigger_on_interrupt"
    assert caught.value.key_path == key_path
    assert str(caught.value) == f"{key_path}: expected true or false, got 'yes'"


@pytest.mark.parametrize(
    ("document", "key_path", "suggestion"),
    [
        (
            {"evaluation": {"evaluators": {"q": {"agents": {"a": {"Sampling-Rate": 0.5}}}}}},
            "evaluation.evaluators.q.agents.a.Sampling-Rate",
            "sampling_ratio",
        ),
        (
            {"evaluation": {"defaults": {"agent": {"sampling-rate": 0.5}}}},
            "evaluation.defaults.agent.sampling-rate",
            "sampling_ratio",
        ),
        ({"evaluation": {"Evaluators": {}}}, "evaluation.Evaluators", "evaluators"),
    ],
)
def test_an_unknown_key_with_a_close_match_names_its_key_path_and_the_match(
    document, key_path, suggestion
):
    error = startup_error(document)
    assert error.key_path == key_path
    assert str(error).startswith(f"{key_path}: unknown key (did you mean {suggestion!r}?); ")


def test_an_evaluator_given_twice_in_a_yaml_file_names_its_key_path(tmp_path):
    path = write(
        tmp_path,
        "evals.yaml",
        """
        evaluation:
          evaluators:
            quality: { min_length: 3 }
            quality: { min_length: 5 }
        """,
    )
    with pytest.raises(ConfigurationError) as caught:
        EvaluationConfig.from_files(path)
    assert str(caught.value) == (
        f"{path}, line 5: evaluation.evaluators.quality: key 'quality' given twice in one mapping"
    )


def test_the_outermost_problem_is_the_one_reported():
    error = startup_error(
        {
            "evaluation": {
                "evaluators": {"q": {"enabled": "no", "agents": {"a": {"sampling_ratio": 2}}}},
                "evaluator": {},
            }
        }
    )
    assert error.key_path == "evaluation.evaluator"
    error = evaluators_error({"q": {"enabled": "no", "agents": {"a": {"sampling_ratio": 2}}}})
    assert error.key_path == "evaluation.evaluators.q.enabled"


@pytest.mark.parametrize(
    ("entry", "key_path", "problem"),
    [
        (
            {"agents": {"a": {"trigger": ["interaction"]}}},
            "evaluation.evaluators.q.agents.a.trigger",
            "unknown trigger ['interaction']; allowed: interaction",
        ),
        (
            {"agents": {"a": {"sampling_ratio": {"x": 1}}}},
            "evaluation.evaluators.q.agents.a.sampling_ratio",
            "expected a number from 0.0 to 1.0, got {'x': 1}",
        ),
        ({"control_id": {}}, "evaluation.evaluators.q.control_id", "expected a non-empty string"),
        ({"enabled": []}, "evaluation.evaluators.q.enabled", "expected true or false, got []"),
        ({("a", "b"): 1}, "evaluation.evaluators.q.('a', 'b')", "keys must be strings"),
    ],
)
def test_every_model_error_is_a_configuration_error_at_its_key_path(entry, key_path, problem):
    error = evaluators_error({"q": entry})  # a ConfigurationError, not pydantic's own error
    assert error.key_path == key_path
    assert str(error).startswith(f"{key_path}: {problem}")


def test_the_document_is_the_checked_frozen_models(spec):
    entry = spec.document.evaluation.evaluators[QUALITY]
    assert entry.model_extra == {"min_length": 20}
    assert entry.agents["billing-agent"].enabled is False
    assert spec.document.evaluation.defaults.agent.sampling_ratio == 1.0
    with pytest.raises(ValueError, match="frozen"):
        entry.enabled = False  # type: ignore[misc]


def test_properties_named_like_the_models_attributes_are_properties():
    properties = {"choose": 1, "setting": 2, "model_extra": 3, "model_fields_set": 4}
    config = config_of({"q": {**properties, "agents": {"a": {"as_written": 5}}}})
    assert dict(config.config_for("q", "a", [])) == {**properties, "as_written": 5}
