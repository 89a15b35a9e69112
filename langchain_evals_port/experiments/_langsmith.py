"""Reading cases from a LangSmith dataset, through langsmith's own client."""

from __future__ import annotations

import datetime
from collections.abc import Iterator, Sequence

import langsmith
from langsmith.utils import LangSmithNotFoundError

from langchain_evals_port.integrations.langsmith import bounded_client

from ._case import Located, case_at
from ._errors import DatasetError, Location

__all__ = ["langsmith_cases"]


def langsmith_cases(
    name: str,
    *,
    client: langsmith.Client | None,
    splits: Sequence[str] | None,
    as_of: datetime.datetime | str | None,
) -> Iterator[Located]:
    """The examples of the LangSmith dataset ``name`` as cases: the example's id, inputs,
    outputs (as ``reference_outputs``) and metadata."""
    client = client or bounded_client()
    try:
        dataset = client.read_dataset(dataset_name=name)
    except LangSmithNotFoundError:
        raise DatasetError(
            f"not found at {client.api_url}",
            location=Location(f"LangSmith dataset {name!r}"),
        ) from None
    examples = client.list_examples(dataset_id=dataset.id, splits=splits, as_of=as_of)
    for example in examples:
        location = Location(f"LangSmith dataset {name!r}, example {example.id}")
        row = {
            "id": str(example.id),
            "inputs": example.inputs,
            "reference_outputs": example.outputs,
            "metadata": example.metadata,
        }
        yield location, case_at(row, location)
