import math

import pytest
from pydantic import ValidationError

from langchain_evals_port import EvaluatorResult, Score


def test_integer_scores_are_stored_as_floats_and_booleans_stay_booleans():
    assert EvaluatorResult(key="k", score=1).score == 1.0
    assert type(EvaluatorResult(key="k", score=1).score) is float
    assert EvaluatorResult(key="k", score=True).score is True


@pytest.mark.parametrize("bad", ["0.5", math.nan, math.inf, -math.inf, 10**400, [1], object()])
def test_a_score_that_is_not_a_bool_or_finite_number_is_rejected(bad):
    with pytest.raises(ValidationError, match="score"):
        EvaluatorResult(key="k", score=bad)


def test_a_verdict_needs_a_score():
    with pytest.raises(ValidationError, match="needs a score"):
        EvaluatorResult(key="k")


def test_non_verdicts_carry_a_reason_and_no_score():
    with pytest.raises(ValidationError, match="needs a reason"):
        EvaluatorResult(key="k", outcome="inconclusive")
    with pytest.raises(ValidationError, match="carries no score"):
        EvaluatorResult(key="k", outcome="inconclusive", reason="r", score=0.0)
    with pytest.raises(ValidationError, match="error_code"):
        EvaluatorResult(key="k", outcome="failed", reason="judge down")
    with pytest.raises(ValidationError, match="error_code"):
        EvaluatorResult(key="k", score=1.0, error_code="timeout")


def test_verdict_dict_has_the_openevals_shape():
    assert EvaluatorResult(key="k", score=0.25, comment="c").to_dict() == {
        "key": "k",
        "score": 0.25,
        "comment": "c",
        "metadata": None,
    }


def test_failed_outcome_travels_in_metadata_of_the_dict():
    result = EvaluatorResult.failed("k", "rate_limited", "429 from provider", metadata={"a": 1})
    assert result.to_dict() == {
        "key": "k",
        "score": None,
        "comment": "[failed: rate_limited] 429 from provider",
        "metadata": {
            "a": 1,
            "outcome": "failed",
            "reason": "429 from provider",
            "error_code": "rate_limited",
        },
    }
    assert not result.is_verdict


def test_inconclusive_dict_and_source_run_id():
    result = EvaluatorResult.inconclusive("k", "nothing to judge", source_run_id="abc")
    as_dict = result.to_dict()
    assert as_dict["metadata"] == {"outcome": "inconclusive", "reason": "nothing to judge"}
    assert as_dict["comment"] == "[inconclusive] nothing to judge"
    assert as_dict["source_run_id"] == "abc"


def test_a_non_verdict_keeps_its_own_comment_after_the_reason():
    result = EvaluatorResult.inconclusive("k", "no context given", comment="judge said n/a")
    assert result.to_dict()["comment"] == "[inconclusive] no context given\njudge said n/a"
    assert result.comment == "judge said n/a"


def test_score_converts_to_results():
    assert Score(0.5, "half", {"n": 2}).to_result("k") == EvaluatorResult(
        key="k", score=0.5, comment="half", metadata={"n": 2}
    )
    unscored = Score.unscored("no code found", language="python").to_result("k")
    assert unscored.outcome == "inconclusive"
    assert unscored.reason == "no code found"
    assert unscored.metadata == {"language": "python"}


def test_score_checks_itself():
    from langchain_evals_port import EvaluatorUsageError

    with pytest.raises(EvaluatorUsageError, match=r"Score\.unscored"):
        Score(None)
    with pytest.raises(EvaluatorUsageError, match="carries no value"):
        Score(0.5, inconclusive="why")


def test_a_misspelt_field_is_refused():
    with pytest.raises(ValidationError, match="coment"):
        EvaluatorResult(key="k", score=True, coment="typo")
