"""The contract every ``Ledger`` follows, as pytest tests any ledger can be held to.

``LedgerContract`` is a class of tests over one fixture, ``ledger``: a fresh, empty ledger
(closed by the fixture afterwards). To check a ledger of your own, subclass it in a test
module with a name pytest collects and provide the fixture::

    import pytest
    from langchain_evals_port.storage.contract import LedgerContract

    class TestMyLedger(LedgerContract):
        @pytest.fixture
        def ledger(self, tmp_path):
            ledger = MyLedger(tmp_path / "ledger")
            yield ledger
            ledger.close()

The tests cover records, queries and their paging, export, the work queue with its claims,
leases, fencing and waits for ``resume``; for a ledger that is ``SupportsCheckpoints``
(skipped otherwise), LangGraph checkpoints kept on the ledger's own storage; and for a
``SqlLedger`` (skipped otherwise), the console's queries (``ConsoleQueries``) in its
dialect. A few sleep a fraction of a second to let a lease expire. This module needs pytest
(the rest of the package does not); it also holds the records the tests store
(``make_interaction``, ``make_evaluation``, ``make_unit``), for tests of your own.
"""

from __future__ import annotations

import asyncio
import io
import json
import time
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple, empty_checkpoint

from langchain_evals_port.capture._records import (
    InteractionRecord,
    ModelResponse,
    TokenUsage,
    ToolCallRecord,
)
from langchain_evals_port.core import EvaluatorResult
from langchain_evals_port.storage._records import Claim, EvaluationRecord, WorkUnit

from . import (
    ConsoleQueries,
    InteractionNotFoundError,
    Ledger,
    SqlLedger,
    SupportsCheckpoints,
    WorkState,
    export_jsonl,
)

__all__ = [
    "BASE_TIME",
    "LEASE",
    "LedgerContract",
    "make_evaluation",
    "make_interaction",
    "make_unit",
]

BASE_TIME = datetime(2025, 3, 1, 9, 30, tzinfo=timezone.utc)
"""The default start of interactions and time of evaluations."""


def make_interaction(
    interaction_id: str = "i-1", agent_id: str = "support-agent", **overrides: Any
) -> InteractionRecord:
    """A support-agent exchange: a question, one tool call, one reply with token usage."""
    started_at = overrides.pop("started_at", BASE_TIME)
    question = HumanMessage(content="Where is my order A-17?", id="msg-human")
    tool_call = {"name": "lookup_order", "args": {"order_id": "A-17"}, "id": "call-1"}
    requested = AIMessage(content="", tool_calls=[tool_call], id="msg-ai-1")
    tool_result = ToolMessage(content="shipped 2025-02-27", tool_call_id="call-1", id="msg-tool")
    reply = AIMessage(
        content="Your order A-17 shipped on 27 February.",
        id="msg-ai-2",
        usage_metadata={"input_tokens": 120, "output_tokens": 14, "total_tokens": 134},
        response_metadata={"model_name": "gpt-4o-mini", "finish_reason": "stop"},
    )
    fields: dict[str, Any] = {
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "roles": ("support",),
        "thread_id": "thread-7",
        "system_message": "You answer questions about orders.",
        "input_messages": [question],
        "responses": [
            ModelResponse(
                message=reply,
                model_name="gpt-4o-mini",
                usage=TokenUsage(input_tokens=120, output_tokens=14, total_tokens=134),
                finish_reason="stop",
                started_at=started_at + timedelta(seconds=1),
                ended_at=started_at + timedelta(seconds=2),
            )
        ],
        "tool_calls": [
            ToolCallRecord(
                id="call-1",
                name="lookup_order",
                args={"order_id": "A-17"},
                result="shipped 2025-02-27",
                status="success",
            )
        ],
        "transcript": [question, requested, tool_result, reply],
        "output_text": reply.text,
        "started_at": started_at,
        "ended_at": started_at + timedelta(seconds=2),
        "run_id": f"run-{interaction_id}",
        "metadata": {"channel": "chat"},
    }
    return InteractionRecord(**{**fields, **overrides})


def make_evaluation(
    evaluation_id: str = "e-1",
    interaction_id: str = "i-1",
    agent_id: str = "support-agent",
    evaluator_id: str = "helpfulness",
    **overrides: Any,
) -> EvaluationRecord:
    """A passing, scored verdict on ``interaction_id`` by ``evaluator_id``."""
    fields: dict[str, Any] = {
        "evaluation_id": evaluation_id,
        "evaluator_id": evaluator_id,
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "results": [
            EvaluatorResult(
                key="helpfulness",
                score=0.9,
                comment="answered the question",
                metadata={"passed": True},
            )
        ],
        "pass_threshold": 0.7,
        "duration": 0.25,
        "timestamp": BASE_TIME,
    }
    return EvaluationRecord(**{**fields, **overrides})


def make_unit(
    evaluation_id: str = "e-1",
    interaction_id: str = "i-1",
    agent_id: str = "support-agent",
    evaluator_id: str = "helpfulness",
    **overrides: Any,
) -> WorkUnit:
    """A work unit for ``evaluator_id`` on ``interaction_id``, enqueued now unless overridden."""
    fields: dict[str, Any] = {
        "evaluation_id": evaluation_id,
        "evaluator_id": evaluator_id,
        "interaction_id": interaction_id,
        "agent_id": agent_id,
        "enqueued_at": time.time(),
    }
    return WorkUnit(**{**fields, **overrides})


LEASE = 0.1
"""Seconds of the short leases (and delays) the tests let expire, sleeping 1.5 times as long."""


def _at(minutes: float) -> datetime:
    return BASE_TIME + timedelta(minutes=minutes)


def _claim_one(ledger: Ledger, worker_id: str = "w-1", lease_seconds: float = 30.0) -> Claim:
    [claim] = ledger.claim(worker_id, limit=1, lease_seconds=lease_seconds)
    return claim


class LedgerContract:
    """The tests every ``Ledger`` passes; subclass it and provide a ``ledger`` fixture that
    yields a fresh, empty ledger (see the module's docstring)."""

    # --- records -------------------------------------------------------------------------------

    def test_is_a_ledger(self, ledger: Ledger) -> None:
        assert isinstance(ledger, Ledger)

    def test_interaction_round_trips_with_langchain_messages(self, ledger: Ledger) -> None:
        record = make_interaction("i-1")
        ledger.record_interaction(record)

        stored = ledger.get_interaction("i-1")

        assert stored == record
        assert isinstance(stored.input_messages[0], HumanMessage)
        assert isinstance(stored.responses[0].message, AIMessage)
        assert stored.transcript == record.transcript
        requested = stored.transcript[1]
        assert isinstance(requested, AIMessage)
        assert requested.tool_calls[0]["name"] == "lookup_order"
        assert stored.responses[0].message.usage_metadata == {
            "input_tokens": 120,
            "output_tokens": 14,
            "total_tokens": 134,
        }
        assert stored.started_at.tzinfo is not None
        assert stored.responses[0].started_at.utcoffset() == timedelta(0)
        assert stored.final_response_text == "Your order A-17 shipped on 27 February."

    def test_a_repeated_interaction_is_kept_once(self, ledger: Ledger) -> None:
        ledger.record_interaction(make_interaction("i-1"))
        ledger.record_interaction(make_interaction("i-1"))

        assert len(ledger.query_interactions().items) == 1

    def test_missing_interaction_raises_a_key_error(self, ledger: Ledger) -> None:
        with pytest.raises(InteractionNotFoundError, match="i-404") as raised:
            ledger.get_interaction("i-404")
        assert isinstance(raised.value, KeyError)
        assert raised.value.interaction_id == "i-404"

    def test_record_evaluation_first_writer_wins(self, ledger: Ledger) -> None:
        first = make_evaluation("e-1", duration=1.0)

        assert ledger.record_evaluation(first) is True
        assert ledger.record_evaluation(make_evaluation("e-1", duration=2.0)) is False
        assert ledger.get_evaluation("e-1") == first
        assert ledger.get_evaluation("e-404") is None

    def test_get_evaluations_of_one_interaction_oldest_first(self, ledger: Ledger) -> None:
        later = make_evaluation("e-a", timestamp=_at(2))
        earlier = make_evaluation("e-b", timestamp=_at(1))
        other = make_evaluation("e-c", interaction_id="i-2")
        for record in (later, earlier, other):
            ledger.record_evaluation(record)

        assert ledger.get_evaluations("i-1") == [earlier, later]
        assert ledger.get_evaluations("i-404") == []

    # --- queries -------------------------------------------------------------------------------

    def test_query_interactions_by_agent_and_time_range(self, ledger: Ledger) -> None:
        for minute, agent in enumerate(["a", "b", "a", "a", "b"]):
            ledger.record_interaction(
                make_interaction(f"i-{minute}", agent, started_at=_at(minute))
            )

        def ids(**filters: Any) -> list[str]:
            return [r.interaction_id for r in ledger.query_interactions(**filters).items]

        assert ids() == ["i-0", "i-1", "i-2", "i-3", "i-4"]
        assert ids(agent_id="a") == ["i-0", "i-2", "i-3"]
        assert ids(since=_at(1), until=_at(3)) == ["i-1", "i-2"]
        assert ids(agent_id="b", since=_at(2)) == ["i-4"]
        assert ids(agent_id="nobody") == []

    def test_query_evaluations_by_agent_evaluator_and_time_range(self, ledger: Ledger) -> None:
        specs = [("a", "helpfulness"), ("a", "safety"), ("b", "helpfulness"), ("a", "helpfulness")]
        for minute, (agent, evaluator) in enumerate(specs):
            ledger.record_evaluation(
                make_evaluation(
                    f"e-{minute}", agent_id=agent, evaluator_id=evaluator, timestamp=_at(minute)
                )
            )

        def ids(**filters: Any) -> list[str]:
            return [r.evaluation_id for r in ledger.query_evaluations(**filters).items]

        assert ids() == ["e-0", "e-1", "e-2", "e-3"]
        assert ids(agent_id="a") == ["e-0", "e-1", "e-3"]
        assert ids(evaluator_id="helpfulness") == ["e-0", "e-2", "e-3"]
        assert ids(agent_id="a", evaluator_id="helpfulness", since=_at(1)) == ["e-3"]
        assert ids(since=_at(1), until=_at(3)) == ["e-1", "e-2"]

    @pytest.mark.parametrize("what", ["interactions", "evaluations"])
    def test_pages_cover_everything_once_in_order(self, ledger: Ledger, what: str) -> None:
        # Several records share a timestamp, so the id must break ties across page boundaries.
        for n in range(23):
            moment = _at(n // 4)
            if what == "interactions":
                ledger.record_interaction(make_interaction(f"x-{n:02d}", started_at=moment))
            else:
                ledger.record_evaluation(make_evaluation(f"x-{n:02d}", timestamp=moment))
        query = ledger.query_interactions if what == "interactions" else ledger.query_evaluations
        key = "interaction_id" if what == "interactions" else "evaluation_id"

        seen: list[str] = []
        cursor: str | None = None
        pages = 0
        while True:
            page = query(limit=5, cursor=cursor)
            seen.extend(getattr(record, key) for record in page.items)
            pages += 1
            if page.next_cursor is None:
                break
            cursor = page.next_cursor

        assert seen == [f"x-{n:02d}" for n in range(23)]
        assert pages == 5

    def test_a_full_last_page_has_no_cursor(self, ledger: Ledger) -> None:
        for n in range(4):
            ledger.record_interaction(make_interaction(f"i-{n}", started_at=_at(n)))

        first = ledger.query_interactions(limit=2)
        second = ledger.query_interactions(limit=2, cursor=first.next_cursor)

        assert [r.interaction_id for r in second.items] == ["i-2", "i-3"]
        assert second.next_cursor is None

    @pytest.mark.parametrize("cursor", ["not-a-cursor", "W10=", "e30="])
    def test_a_bad_cursor_is_refused(self, ledger: Ledger, cursor: str) -> None:
        with pytest.raises(ValueError, match="cursor"):
            ledger.query_interactions(cursor=cursor)
        with pytest.raises(ValueError, match="cursor"):
            ledger.query_evaluations(cursor=cursor)

    @pytest.mark.parametrize("limit", [0, -1, True, 2.5])
    def test_a_bad_limit_is_refused(self, ledger: Ledger, limit: Any) -> None:
        with pytest.raises(ValueError, match="limit"):
            ledger.query_interactions(limit=limit)
        with pytest.raises(ValueError, match="limit"):
            ledger.query_evaluations(limit=limit)
        with pytest.raises(ValueError, match="limit"):
            ledger.claim("w-1", limit=limit, lease_seconds=1.0)

    # --- export --------------------------------------------------------------------------------

    def test_export_evaluations_to_a_path(self, ledger: Ledger, tmp_path: Path) -> None:
        records = [make_evaluation(f"e-{n}", timestamp=_at(n)) for n in range(3)]
        for record in records:
            ledger.record_evaluation(record)
        destination = tmp_path / "evaluations.jsonl"

        assert export_jsonl(ledger, destination) == 3

        lines = destination.read_text(encoding="utf-8").splitlines()
        assert [EvaluationRecord.model_validate_json(line) for line in lines] == records

    def test_export_interactions_of_one_agent_to_a_stream(self, ledger: Ledger) -> None:
        ledger.record_interaction(make_interaction("i-1", "a", started_at=_at(0)))
        ledger.record_interaction(make_interaction("i-2", "b", started_at=_at(1)))
        ledger.record_interaction(make_interaction("i-3", "a", started_at=_at(2)))
        out = io.StringIO()

        assert export_jsonl(ledger, out, what="interactions", agent_id="a", until=_at(2)) == 1

        assert [json.loads(line)["interaction_id"] for line in out.getvalue().splitlines()] == [
            "i-1"
        ]

    # --- work queue ----------------------------------------------------------------------------

    def test_enqueue_ignores_ids_already_queued_claimed_or_recorded(self, ledger: Ledger) -> None:
        assert ledger.enqueue([make_unit("e-1"), make_unit("e-2"), make_unit("e-1")]) == 2
        assert ledger.enqueue([make_unit("e-2"), make_unit("e-3")]) == 1
        _claim_one(ledger)
        assert ledger.enqueue([make_unit("e-1")]) == 0
        ledger.record_evaluation(make_evaluation("e-9"))
        assert ledger.enqueue([make_unit("e-9")]) == 0
        assert ledger.pending_work() == 3

    def test_record_interaction_enqueues_its_work(self, ledger: Ledger) -> None:
        ledger.record_evaluation(make_evaluation("e-done"))
        work = [make_unit("e-1"), make_unit("e-2"), make_unit("e-done")]

        ledger.record_interaction(make_interaction("i-1"), work)

        assert ledger.pending_work("i-1") == 2
        assert ledger.get_interaction("i-1").interaction_id == "i-1"
        ledger.record_interaction(make_interaction("i-1"), work)
        assert ledger.pending_work("i-1") == 2

    def test_claim_respects_limit_and_hands_out_oldest_first(self, ledger: Ledger) -> None:
        now = time.time()
        ledger.enqueue([make_unit(f"e-{n}", enqueued_at=now - n) for n in range(5)])

        first = ledger.claim("w-1", limit=2, lease_seconds=30.0)
        second = ledger.claim("w-2", limit=10, lease_seconds=30.0)

        assert [c.unit.evaluation_id for c in first] == ["e-4", "e-3"]
        assert [c.unit.evaluation_id for c in second] == ["e-2", "e-1", "e-0"]
        assert {c.worker_id for c in second} == {"w-2"}
        assert all(c.lease_expires_at > now + 29 for c in first + second)

    def test_claim_waits_for_not_before(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-later", not_before=time.time() + LEASE)])

        assert ledger.claim("w-1", limit=1, lease_seconds=30.0) == []
        time.sleep(LEASE * 1.5)
        assert [c.unit.evaluation_id for c in ledger.claim("w-1", limit=1, lease_seconds=30.0)] == [
            "e-later"
        ]

    def test_a_leased_unit_is_not_claimed_twice(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])
        _claim_one(ledger, "w-1")

        assert ledger.claim("w-2", limit=5, lease_seconds=30.0) == []
        assert ledger.pending_work() == 1

    def test_claim_refuses_a_bad_lease(self, ledger: Ledger) -> None:
        with pytest.raises(ValueError, match="lease_seconds"):
            ledger.claim("w-1", limit=1, lease_seconds=0)

    def test_heartbeat_extends_the_lease(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])
        claim = _claim_one(ledger, lease_seconds=LEASE)

        renewed = ledger.heartbeat(claim, lease_seconds=30.0)
        time.sleep(LEASE * 1.5)

        assert renewed is not None
        assert renewed.token == claim.token
        assert renewed.lease_expires_at > claim.lease_expires_at
        assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []

    def test_an_expired_lease_is_taken_over_and_the_stale_claim_changes_nothing(
        self, ledger: Ledger
    ) -> None:
        ledger.enqueue([make_unit("e-1")])
        stale = _claim_one(ledger, "w-1", lease_seconds=LEASE)
        time.sleep(LEASE * 1.5)

        current = _claim_one(ledger, "w-2")

        assert current.token > stale.token
        assert ledger.heartbeat(stale, lease_seconds=30.0) is None
        assert ledger.complete(stale, make_evaluation("e-1")) is False
        assert ledger.release(stale, delay=60.0) is False
        assert ledger.get_evaluation("e-1") is None
        assert ledger.pending_work() == 1
        # The current claim is untouched: it still completes.
        assert ledger.complete(current, make_evaluation("e-1", duration=7.0)) is True
        completed = ledger.get_evaluation("e-1")
        assert completed is not None
        assert completed.duration == 7.0

    def test_release_puts_the_unit_back_after_a_delay_with_attempts(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])
        claim = _claim_one(ledger)

        assert ledger.release(claim, delay=LEASE, attempts=2) is True
        assert ledger.release(claim) is False  # released once; the claim is gone
        assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []
        time.sleep(LEASE * 1.5)

        again = _claim_one(ledger, "w-2")
        assert again.unit.attempts == 2
        assert again.unit.not_before > claim.unit.not_before
        assert again.token > claim.token

    def test_release_without_attempts_keeps_the_count(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1", attempts=1)])
        assert ledger.release(_claim_one(ledger)) is True

        assert _claim_one(ledger).unit.attempts == 1

    def test_complete_records_the_outcome_and_removes_the_unit(self, ledger: Ledger) -> None:
        ledger.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
        claim = _claim_one(ledger)
        record = make_evaluation(claim.unit.evaluation_id)

        assert ledger.complete(claim, record) is True

        assert ledger.get_evaluation(record.evaluation_id) == record
        assert ledger.pending_work("i-1") == 1
        assert ledger.complete(claim, record) is False
        assert ledger.enqueue([claim.unit]) == 0

    def test_complete_keeps_an_outcome_recorded_earlier(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])
        claim = _claim_one(ledger)
        earlier = make_evaluation("e-1", duration=1.0)
        ledger.record_evaluation(earlier)

        assert ledger.complete(claim, make_evaluation("e-1", duration=2.0)) is True
        assert ledger.get_evaluation("e-1") == earlier
        assert ledger.pending_work() == 0

    def test_complete_refuses_the_record_of_another_unit(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])

        with pytest.raises(ValueError, match="e-2"):
            ledger.complete(_claim_one(ledger), make_evaluation("e-2"))
        assert ledger.pending_work() == 1

    def test_reclaim_expired_frees_only_expired_leases(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-short"), make_unit("e-long"), make_unit("e-queued")])
        [short] = ledger.claim("w-1", limit=1, lease_seconds=LEASE)
        ledger.claim("w-1", limit=1, lease_seconds=30.0)
        time.sleep(LEASE * 1.5)

        assert ledger.reclaim_expired() == 1
        assert ledger.reclaim_expired() == 0
        assert ledger.heartbeat(short, lease_seconds=30.0) is None
        assert [c.unit.evaluation_id for c in ledger.claim("w-2", limit=5, lease_seconds=30.0)] == [
            "e-short",
            "e-queued",
        ]

    def test_pending_work_counts_queued_and_claimed_units_per_interaction(
        self, ledger: Ledger
    ) -> None:
        ledger.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
        ledger.record_interaction(make_interaction("i-2"), [make_unit("e-3", interaction_id="i-2")])
        _claim_one(ledger)

        assert ledger.pending_work() == 3
        assert ledger.pending_work("i-1") == 2
        assert ledger.pending_work("i-2") == 1
        assert ledger.pending_work("i-404") == 0

    def test_a_waiting_unit_is_due_again_on_resume_with_the_value(self, ledger: Ledger) -> None:
        ledger.enqueue([make_unit("e-1")])
        claim = _claim_one(ledger)
        assert ledger.resume("e-1", "too early") is False  # claimed, not waiting

        assert ledger.release(claim, delay=3600.0, waiting=True) is True
        assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []
        assert ledger.pending_work() == 1

        assert ledger.resume("e-1", {"approved": True}) is True
        assert ledger.resume("e-1", "twice") is False  # no longer waiting
        resumed = _claim_one(ledger, "w-2")
        assert resumed.unit.resumed is True
        assert resumed.unit.resume_value == {"approved": True}
        assert resumed.unit.waiting is False
        assert ledger.resume("e-404", None) is False

    def test_a_waiting_unit_is_due_at_its_deadline_and_releasing_uses_up_the_value(
        self, ledger: Ledger
    ) -> None:
        ledger.enqueue([make_unit("e-1")])
        ledger.release(_claim_one(ledger), delay=LEASE, waiting=True)
        time.sleep(LEASE * 1.5)
        at_deadline = _claim_one(ledger, "w-2")
        assert at_deadline.unit.waiting is True  # the worker sees it came back unresumed

        ledger.release(at_deadline, delay=3600.0, waiting=True)
        ledger.resume("e-1", "yes")
        again = _claim_one(ledger, "w-3")
        ledger.release(again)  # e.g. a retry after a failure: the value is used up
        plain = _claim_one(ledger, "w-4")
        assert (plain.unit.resumed, plain.unit.resume_value) == (False, None)

    def test_waiting_work_lists_the_parked_units_with_their_question(self, ledger: Ledger) -> None:
        ledger.enqueue(
            [make_unit("e-1", interaction_id="i-1"), make_unit("e-2", interaction_id="i-2")]
        )
        first, second = ledger.claim("w-1", limit=2, lease_seconds=30.0)
        ledger.release(first, delay=3600.0, waiting=True, question={"ask": "approve?"})
        assert [unit.evaluation_id for unit in ledger.waiting_work()] == [first.unit.evaluation_id]
        [parked] = ledger.waiting_work(first.unit.interaction_id)
        assert parked.question == {"ask": "approve?"}
        assert ledger.waiting_work(second.unit.interaction_id) == []  # claimed, not waiting
        ledger.resume(parked.evaluation_id, "yes")
        assert ledger.waiting_work() == []

    # --- checkpoints -------------------------------------------------------------------

    def test_checkpoints_are_kept_on_the_ledger_s_own_storage(self, ledger: Ledger) -> None:
        if not isinstance(ledger, SupportsCheckpoints):
            pytest.skip(f"{type(ledger).__name__} keeps no LangGraph checkpoints")
        config: RunnableConfig = {"configurable": {"thread_id": "e-1", "checkpoint_ns": ""}}
        checkpoint = empty_checkpoint()

        async def write_then_reopen() -> CheckpointTuple | None:
            async with ledger.open_checkpointer() as saver:
                await saver.aput(config, checkpoint, {"step": 1}, {})
            # Opened again, as after a restart: the checkpoint is still there.
            async with ledger.open_checkpointer() as saver:
                found: CheckpointTuple | None = await saver.aget_tuple(config)
                return found

        # Run here, not as an async test: the suite must not need an asyncio plugin.
        found = asyncio.run(write_then_reopen())

        assert found is not None
        assert found.checkpoint["id"] == checkpoint["id"]
        assert found.metadata["step"] == 1

    # --- the console's queries (SQL ledgers) -------------------------------------------

    def test_the_overview_counts_outcomes_per_agent_evaluator_and_hour(
        self, ledger: Ledger
    ) -> None:
        queries = _console_queries(ledger)
        failed = [EvaluatorResult.failed("helpfulness", "timeout", "the judge timed out")]
        unsure = [EvaluatorResult.inconclusive("helpfulness", "no answer to judge")]
        failing = [EvaluatorResult(key="helpfulness", score=0.2, passed=False)]
        for evaluation_id, agent, minute, results in [
            ("e-1", "a", 0, None),  # passes, score 0.9
            ("e-2", "a", 10, failing),
            ("e-3", "a", 20, unsure),
            ("e-4", "a", 70, failed),  # the next hour
            ("e-5", "b", 0, None),
            ("e-6", "a", 24 * 60, None),  # outside the range asked for
        ]:
            extra: dict[str, Any] = {} if results is None else {"results": results}
            ledger.record_evaluation(
                make_evaluation(evaluation_id, agent_id=agent, timestamp=_at(minute), **extra)
            )
        start = BASE_TIME.timestamp()

        series = queries.overview(start - 3600, start + 6 * 3600)

        assert [(one.agent_id, one.evaluator_id) for one in series] == [
            ("a", "helpfulness"),
            ("b", "helpfulness"),
        ]
        first, second = series[0].buckets
        hour = start // 3600 * 3600
        assert (first.start, second.start) == (hour, hour + 3600)
        assert (first.evaluations, first.verdicts, first.passed) == (3, 2, 1)
        assert (first.inconclusive, first.failed, first.pass_rate) == (1, 0, 0.5)
        assert first.score_mean == pytest.approx(0.55)
        assert (second.evaluations, second.failed, second.pass_rate) == (1, 1, None)
        total = series[0].total
        assert (total.evaluations, total.verdicts, total.passed, total.failed) == (4, 2, 1, 1)
        assert total.score_mean == pytest.approx(0.55)
        assert queries.overview(start + 7 * 3600, start + 8 * 3600) == []

    def test_the_failed_evaluations_newest_first_in_pages(self, ledger: Ledger) -> None:
        queries = _console_queries(ledger)
        failed = [EvaluatorResult.failed("helpfulness", "timeout", "the judge timed out")]
        for n in range(7):
            # Two at each moment: the id breaks ties across pages.
            ledger.record_evaluation(
                make_evaluation(f"f-{n}", timestamp=_at(n // 2), results=failed)
            )
        ledger.record_evaluation(make_evaluation("passed", timestamp=_at(10)))

        assert [r.evaluation_id for r in queries.latest_failures(limit=3)] == ["f-6", "f-5", "f-4"]
        seen: list[str] = []
        cursor: str | None = None
        while True:
            page, cursor = queries.failed(limit=3, cursor=cursor)
            seen += [record.evaluation_id for record in page]
            if cursor is None:
                break
        assert seen == [f"f-{n}" for n in reversed(range(7))]
        with pytest.raises(ValueError, match="cursor"):
            queries.failed(cursor="not-a-cursor")

    def test_the_interactions_newest_first_filtered_with_their_evaluations(
        self, ledger: Ledger
    ) -> None:
        queries = _console_queries(ledger)
        failed = [EvaluatorResult.failed("safety", "timeout", "the judge timed out")]
        for n, agent in enumerate(["a", "b", "a", "a"]):
            ledger.record_interaction(make_interaction(f"i-{n}", agent, started_at=_at(n)))
        ledger.record_evaluation(make_evaluation("e-0", "i-0", "a", timestamp=_at(0.5)))
        ledger.record_evaluation(
            make_evaluation("e-1", "i-0", "a", "safety", timestamp=_at(0.6), results=failed)
        )
        ledger.record_evaluation(make_evaluation("e-2", "i-3", "a", timestamp=_at(3.5)))

        def ids(**filters: Any) -> list[str]:
            rows, _ = queries.interactions(**filters)
            return [row.record.interaction_id for row in rows]

        assert ids() == ["i-3", "i-2", "i-1", "i-0"]
        assert ids(agent_id="a") == ["i-3", "i-2", "i-0"]
        assert ids(evaluator_id="helpfulness") == ["i-3", "i-0"]
        assert ids(outcome="failed") == ["i-0"]
        assert ids(evaluator_id="helpfulness", outcome="failed") == []
        assert ids(since=_at(1).timestamp(), until=_at(3).timestamp()) == ["i-2", "i-1"]
        rows, _ = queries.interactions(agent_id="a", since=_at(0).timestamp(), limit=10)
        assert rows[-1].evaluations == [
            ("helpfulness", "verdict", True),
            ("safety", "failed", None),
        ]
        assert rows[-1].evaluations[1].outcome == "failed"
        first, cursor = queries.interactions(limit=3)
        assert cursor is not None
        rest, last = queries.interactions(limit=3, cursor=cursor)
        assert ([r.record.interaction_id for r in first + rest], last) == (ids(), None)
        assert queries.agents_and_evaluators() == (["a"], ["helpfulness", "safety"])

    def test_a_text_search_reads_a_window_of_interactions_a_page(self, ledger: Ledger) -> None:
        queries = _console_queries(ledger, text_window=3)
        for n in range(8):
            record = make_interaction(f"i-{n}", started_at=_at(n))
            if n in (1, 6):
                record = record.model_copy(update={"output_text": f"The PARCEL {n} is late"})
            ledger.record_interaction(record)

        pages: list[list[str]] = []
        cursor: str | None = None
        while True:
            rows, cursor = queries.interactions(text="parcel", limit=5, cursor=cursor)
            pages.append([row.record.interaction_id for row in rows])
            if cursor is None:
                break
        # Windows of three, newest first: i-7..i-5 holds i-6, i-4..i-2 none, i-1..i-0 i-1.
        assert pages == [["i-6"], [], ["i-1"]]

    def test_the_work_state_of_a_queued_running_and_recorded_evaluation(
        self, ledger: Ledger
    ) -> None:
        queries = _console_queries(ledger)
        ledger.enqueue([make_unit("e-1"), make_unit("e-2", enqueued_at=time.time() + 1)])

        assert queries.work_state("e-1") == WorkState("queued", None, 0)
        claim = _claim_one(ledger, "w-1")
        assert queries.work_state("e-1") == WorkState("running", "w-1", 1)
        assert queries.work_state("e-2") == WorkState("queued", None, 1)
        ledger.complete(claim, make_evaluation("e-1"))
        assert queries.work_state("e-1") == WorkState("recorded", None, 0)
        assert queries.work_state("e-404") == WorkState("unknown", None, 0)

    def test_a_failed_evaluation_is_retried_once_with_its_agent_s_roles(
        self, ledger: Ledger
    ) -> None:
        queries = _console_queries(ledger)
        failed = [EvaluatorResult.failed("helpfulness", "timeout", "the judge timed out")]
        ledger.record_evaluation(make_evaluation("e-1", roles=("support",), results=failed))
        ledger.record_evaluation(make_evaluation("e-2"))

        assert queries.retry("e-1") == ("e-1:retry", True)
        assert queries.retry("e-1") == ("e-1:retry", False)
        assert queries.retry("e-2") is None
        assert queries.retry("e-404") is None
        [claim] = ledger.claim("w-1", limit=5, lease_seconds=30.0)
        assert (claim.unit.evaluation_id, claim.unit.roles) == ("e-1:retry", ("support",))


def _console_queries(ledger: Ledger, **options: Any) -> ConsoleQueries:
    """The console's queries on ``ledger``; skips a ledger that is not a ``SqlLedger``."""
    if not isinstance(ledger, SqlLedger):
        pytest.skip(f"{type(ledger).__name__} has no SQL tables for the console's queries")
    return ConsoleQueries(ledger, **options)
