"""The arguments of the experiment functions, checked before any work, and what resuming an
experiment must match (its target, cases, trials and evaluators' configuration).

Each check raises ``EvaluatorUsageError`` (or ``ExperimentMismatchError``) naming the argument,
what was expected and, for a misspelt name, the closest valid one.
"""

from __future__ import annotations

import difflib
import hashlib
import os
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, Literal, TypeAlias

from langchain_core.caches import BaseCache

from langchain_evals_port.core import Evaluator, canonical_json
from langchain_evals_port.core._fingerprint import changed_fields, configuration_fingerprint
from langchain_evals_port.core._specs import import_spec
from langchain_evals_port.core.errors import CanonicalizationError, EvaluatorUsageError

from ._case import Case
from ._dataset import Dataset
from ._store import ExperimentInfo, ExperimentStore

__all__ = [
    "EvaluatorConfigs",
    "ExperimentMismatchError",
    "JudgeCacheMode",
    "changed_evaluators",
    "check_count",
    "check_options",
    "check_same",
    "checked_cases",
    "checked_configs",
    "checked_evaluators",
    "dataset_fingerprint",
    "evaluator_fingerprints",
    "judge_cache_mode",
]

JudgeCacheMode: TypeAlias = Literal["use", "refresh", "off"]
"""How judges use the default cache: ``"use"`` answers from it and stores new replies,
``"refresh"`` asks the judges again and writes their replies over the old ones (so the next
run answers with the new ones), ``"off"`` neither reads nor writes it."""

EvaluatorConfigs: TypeAlias = "Mapping[str, Mapping[str, Any]]"
"""``evaluator_config``: per feedback key, the properties its evaluator reads as ``config``."""


class ExperimentMismatchError(EvaluatorUsageError):
    """An experiment of that name exists with another target, other cases, trials or
    evaluators, or an evaluator configured otherwise (another judge prompt, model, output
    schema, threshold); resuming it would mix two experiments (choose another name, or
    ``rescore`` it)."""


def dataset_fingerprint(cases: Sequence[Case]) -> str:
    """16 hex digits naming the dataset's case ids in order: equal datasets, equal names."""
    digest = hashlib.sha256("\n".join(case.id for case in cases).encode("utf-8"))
    return digest.hexdigest()[:16]


def check_same(stored: ExperimentInfo, wanted: ExperimentInfo) -> None:
    """Resuming ``stored`` as ``wanted`` must not mix two experiments."""
    differences = [
        f"{field} {getattr(stored, field)!r} (now {getattr(wanted, field)!r})"
        for field in ("target", "dataset", "cases", "trials", "evaluators", "rescored_from")
        if getattr(stored, field) != getattr(wanted, field)
    ]
    if differences:
        raise ExperimentMismatchError(
            f"experiment {stored.name!r} exists with another {'; '.join(differences)}: "
            "give this run another name (or none, for the next free one)"
        )
    changed = changed_evaluators(stored, wanted.evaluator_fingerprints)
    if changed:
        raise ExperimentMismatchError(
            f"experiment {stored.name!r} was scored with other evaluators: {changed}; its "
            "stored results would be mixed with the new ones: give this run another name "
            "(or none, for the next free one), or rescore the experiment with the new evaluators"
        )


def changed_evaluators(
    stored: ExperimentInfo, fingerprints: dict[str, dict[str, str]] | None
) -> str:
    """How the evaluators of ``fingerprints`` differ from those ``stored`` was started with
    (``"evaluator 'k' changed its prompt (… → …)"``), or ``""``."""
    before = stored.evaluator_fingerprints
    if before is None or fingerprints is None:
        return ""  # an experiment of an earlier release kept no fingerprints
    return "; ".join(
        f"evaluator {key!r} changed its {', '.join(changed_fields(before[key], now))}"
        for key, now in fingerprints.items()
        if key in before and before[key] != now
    )


def judge_cache_mode(cache: object) -> JudgeCacheMode:
    """The mode ``cache`` (a ``CacheLike``) stands for; a clear error for anything else."""
    if cache is None or cache is True or cache == "use" or isinstance(cache, BaseCache):
        return "use"
    if cache is False or cache == "off":
        return "off"
    if cache == "refresh":
        return "refresh"
    close = difflib.get_close_matches(str(cache), ["use", "refresh", "off"], n=1)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    raise EvaluatorUsageError(
        f"cache must be a LangChain BaseCache, 'use', 'refresh', 'off', True, False or None, "
        f"got {cache!r}{hint}"
    )


def evaluator_fingerprints(
    evaluators: Sequence[Evaluator], configs: Mapping[str, Mapping[str, Any]]
) -> dict[str, dict[str, str]]:
    """What each evaluator is configured with, by feedback key (``configuration_fingerprint``,
    and the ``evaluator_config`` it reads, if any)."""
    fingerprints = {}
    for ev in evaluators:
        fingerprint = configuration_fingerprint(ev)
        if configs.get(ev.feedback_key):
            fingerprint["config"] = canonical_json(configs[ev.feedback_key])
        fingerprints[ev.feedback_key] = fingerprint
    return fingerprints


def checked_configs(
    given: EvaluatorConfigs | None, evaluators: Sequence[Evaluator]
) -> dict[str, dict[str, Any]]:
    """``evaluator_config`` checked: mappings of JSON values, by the feedback key of one of
    ``evaluators``."""
    if given is None:
        return {}
    if not isinstance(given, Mapping):
        raise EvaluatorUsageError(
            "evaluator_config must map feedback keys to mappings of properties, got "
            f"{type(given).__name__}"
        )
    keys = [ev.feedback_key for ev in evaluators]
    configs: dict[str, dict[str, Any]] = {}
    for key, properties in given.items():
        if key not in keys:
            close = difflib.get_close_matches(str(key), keys, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else f" (feedback keys: {keys})"
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}]: no evaluator reports this feedback key{hint}"
            )
        if not isinstance(properties, Mapping):
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}] must be a mapping of properties, got "
                f"{type(properties).__name__}"
            )
        try:
            canonical_json(properties)
        except CanonicalizationError as error:
            raise EvaluatorUsageError(
                f"evaluator_config[{key!r}]: the properties must be JSON values ({error})"
            ) from None
        configs[key] = dict(properties)
    return configs


def check_options(name: object, store: object, progress: object) -> None:
    """The keyword arguments every experiment function shares, checked before any work."""
    if name is not None and (not isinstance(name, str) or not name.strip()):
        raise EvaluatorUsageError(f"name must be a non-empty string or None, got {name!r}")
    if not (
        store is None or store is False or isinstance(store, (ExperimentStore, str, os.PathLike))
    ):
        raise EvaluatorUsageError(
            "store must be an ExperimentStore, a SQLite path, a postgresql:// DSN, None (the "
            f"default file) or False (keep nothing), got {type(store).__name__} {store!r}"
        )
    if progress is not None and not isinstance(progress, bool):
        raise EvaluatorUsageError(f"progress must be True, False or None, got {progress!r}")


def check_count(name: str, value: object) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise EvaluatorUsageError(f"{name} must be a whole number of at least 1, got {value!r}")


def checked_cases(dataset: Iterable[Case]) -> list[Case]:
    if isinstance(dataset, Dataset):
        return list(dataset)
    cases = list(dataset)
    for index, case in enumerate(cases):
        if not isinstance(case, Case):
            raise EvaluatorUsageError(
                f"dataset[{index}] is a {type(case).__name__}, not a Case; build the dataset "
                "with Dataset.from_records(...), Dataset.load(...) or Case(inputs=...)"
            )
    return list(Dataset(cases))  # refuses two cases with one id, naming both


def checked_evaluators(evaluators: object) -> tuple[list[Evaluator], str | None]:
    """The evaluator list, and the ``"module:ATTR"`` it was imported from."""
    spec = evaluators if isinstance(evaluators, str) else None
    if spec is not None:
        evaluators = import_spec(spec, "evaluators")
    if isinstance(evaluators, (dict, str)) or not isinstance(evaluators, Sequence):
        raise EvaluatorUsageError(
            f"evaluators{f' ({spec})' if spec else ''} must be a list of evaluators, "
            f"got {type(evaluators).__name__}"
        )
    keys: dict[str, int] = {}
    for index, evaluator in enumerate(evaluators):
        if not isinstance(evaluator, Evaluator):
            raise EvaluatorUsageError(
                f"evaluators[{index}] is {evaluator!r}, not an Evaluator (wrap a function "
                "with @evaluator)"
            )
        key = evaluator.feedback_key
        if key in keys:
            raise EvaluatorUsageError(
                f"evaluators[{keys[key]}] and evaluators[{index}] both report {key!r}; their "
                "scores would be mixed: give one another feedback_key="
            )
        keys[key] = index
    return list(evaluators), spec
