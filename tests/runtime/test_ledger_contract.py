"""The contract every ``Ledger`` follows: records, queries, export and the work queue.

Each test runs against every implementation in ``FACTORIES``; a new ledger joins by adding
one factory (it may call ``pytest.skip`` when its server is not available).
"""

from __future__ import annotations

import io
import json
import time
from collections.abc import Callable, Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from _factories import BASE_TIME, make_evaluation, make_interaction, make_unit
from _postgres_server import open_postgres_ledger
from langchain_core.messages import AIMessage, HumanMessage

from langchain_evals_port.runtime import (
    EvaluationRecord,
    InteractionNotFoundError,
    Ledger,
    export_jsonl,
)
from langchain_evals_port.runtime.ledger._memory import InMemoryLedger
from langchain_evals_port.runtime.ledger._sqlite import SqliteLedger

FACTORIES: dict[str, Callable[[Path], Ledger]] = {
    "memory": lambda folder: InMemoryLedger(),
    "sqlite": lambda folder: SqliteLedger(folder / "ledger.db"),
    # A fresh schema per test on LANGCHAIN_EVALS_PG_DSN; skips (fails under CI) without one.
    "postgres": open_postgres_ledger,
}

LEASE = 0.1
"""Seconds of a short lease; tests sleep past it to let it expire."""


@pytest.fixture(params=list(FACTORIES))
def ledger(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Ledger]:
    ledger = FACTORIES[request.param](tmp_path)
    yield ledger
    ledger.close()


def at(minutes: float):
    return BASE_TIME + timedelta(minutes=minutes)


def claim_one(ledger: Ledger, worker_id: str = "w-1", lease_seconds: float = 30.0):
    [claim] = ledger.claim(worker_id, limit=1, lease_seconds=lease_seconds)
    return claim


# --- records -------------------------------------------------------------------------------


def test_is_a_ledger(ledger):
    assert isinstance(ledger, Ledger)


def test_interaction_round_trips_with_langchain_messages(ledger):
    record = make_interaction("i-1")
    ledger.record_interaction(record)

    stored = ledger.get_interaction("i-1")

    assert stored == record
    assert isinstance(stored.input_messages[0], HumanMessage)
    assert isinstance(stored.responses[0].message, AIMessage)
    assert stored.transcript == record.transcript
    assert stored.transcript[1].tool_calls[0]["name"] == "lookup_order"
    assert stored.responses[0].message.usage_metadata["total_tokens"] == 134
    assert stored.started_at.tzinfo is not None
    assert stored.responses[0].started_at.utcoffset() == timedelta(0)
    assert stored.final_response_text == "Your order A-17 shipped on 27 February."


def test_a_repeated_interaction_is_kept_once(ledger):
    ledger.record_interaction(make_interaction("i-1"))
    ledger.record_interaction(make_interaction("i-1"))

    assert len(ledger.query_interactions().items) == 1


def test_missing_interaction_raises_a_key_error(ledger):
    with pytest.raises(InteractionNotFoundError, match="i-404") as raised:
        ledger.get_interaction("i-404")
    assert isinstance(raised.value, KeyError)
    assert raised.value.interaction_id == "i-404"


def test_record_evaluation_first_writer_wins(ledger):
    first = make_evaluation("e-1", duration=1.0)

    assert ledger.record_evaluation(first) is True
    assert ledger.record_evaluation(make_evaluation("e-1", duration=2.0)) is False
    assert ledger.get_evaluation("e-1") == first
    assert ledger.get_evaluation("e-404") is None


def test_get_evaluations_of_one_interaction_oldest_first(ledger):
    later = make_evaluation("e-a", timestamp=at(2))
    earlier = make_evaluation("e-b", timestamp=at(1))
    other = make_evaluation("e-c", interaction_id="i-2")
    for record in (later, earlier, other):
        ledger.record_evaluation(record)

    assert ledger.get_evaluations("i-1") == [earlier, later]
    assert ledger.get_evaluations("i-404") == []


# --- queries -------------------------------------------------------------------------------


def test_query_interactions_by_agent_and_time_range(ledger):
    for minute, agent in enumerate(["a", "b", "a", "a", "b"]):
        ledger.record_interaction(make_interaction(f"i-{minute}", agent, started_at=at(minute)))

    def ids(**filters):
        return [r.interaction_id for r in ledger.query_interactions(**filters).items]

    assert ids() == ["i-0", "i-1", "i-2", "i-3", "i-4"]
    assert ids(agent_id="a") == ["i-0", "i-2", "i-3"]
    assert ids(since=at(1), until=at(3)) == ["i-1", "i-2"]
    assert ids(agent_id="b", since=at(2)) == ["i-4"]
    assert ids(agent_id="nobody") == []


def test_query_evaluations_by_agent_evaluator_and_time_range(ledger):
    specs = [("a", "helpfulness"), ("a", "safety"), ("b", "helpfulness"), ("a", "helpfulness")]
    for minute, (agent, evaluator) in enumerate(specs):
        ledger.record_evaluation(
            make_evaluation(
                f"e-{minute}", agent_id=agent, evaluator_id=evaluator, timestamp=at(minute)
            )
        )

    def ids(**filters):
        return [r.evaluation_id for r in ledger.query_evaluations(**filters).items]

    assert ids() == ["e-0", "e-1", "e-2", "e-3"]
    assert ids(agent_id="a") == ["e-0", "e-1", "e-3"]
    assert ids(evaluator_id="helpfulness") == ["e-0", "e-2", "e-3"]
    assert ids(agent_id="a", evaluator_id="helpfulness", since=at(1)) == ["e-3"]
    assert ids(since=at(1), until=at(3)) == ["e-1", "e-2"]


@pytest.mark.parametrize("what", ["interactions", "evaluations"])
def test_pages_cover_everything_once_in_order(ledger, what):
    # Several records share a timestamp, so the id must break ties across page boundaries.
    for n in range(23):
        moment = at(n // 4)
        if what == "interactions":
            ledger.record_interaction(make_interaction(f"x-{n:02d}", started_at=moment))
        else:
            ledger.record_evaluation(make_evaluation(f"x-{n:02d}", timestamp=moment))
    query = ledger.query_interactions if what == "interactions" else ledger.query_evaluations
    key = "interaction_id" if what == "interactions" else "evaluation_id"

    seen, cursor, pages = [], None, 0
    while True:
        page = query(limit=5, cursor=cursor)
        seen.extend(getattr(record, key) for record in page.items)
        pages += 1
        if page.next_cursor is None:
            break
        cursor = page.next_cursor

    assert seen == [f"x-{n:02d}" for n in range(23)]
    assert pages == 5


def test_a_full_last_page_has_no_cursor(ledger):
    for n in range(4):
        ledger.record_interaction(make_interaction(f"i-{n}", started_at=at(n)))

    first = ledger.query_interactions(limit=2)
    second = ledger.query_interactions(limit=2, cursor=first.next_cursor)

    assert [r.interaction_id for r in second.items] == ["i-2", "i-3"]
    assert second.next_cursor is None


@pytest.mark.parametrize("cursor", ["not-a-cursor", "W10=", "e30="])
def test_a_bad_cursor_is_refused(ledger, cursor):
    with pytest.raises(ValueError, match="cursor"):
        ledger.query_interactions(cursor=cursor)
    with pytest.raises(ValueError, match="cursor"):
        ledger.query_evaluations(cursor=cursor)


@pytest.mark.parametrize("limit", [0, -1, True, 2.5])
def test_a_bad_limit_is_refused(ledger, limit):
    with pytest.raises(ValueError, match="limit"):
        ledger.query_interactions(limit=limit)
    with pytest.raises(ValueError, match="limit"):
        ledger.query_evaluations(limit=limit)
    with pytest.raises(ValueError, match="limit"):
        ledger.claim("w-1", limit=limit, lease_seconds=1.0)


# --- export --------------------------------------------------------------------------------


def test_export_evaluations_to_a_path(ledger, tmp_path):
    records = [make_evaluation(f"e-{n}", timestamp=at(n)) for n in range(3)]
    for record in records:
        ledger.record_evaluation(record)
    destination = tmp_path / "evaluations.jsonl"

    assert export_jsonl(ledger, destination) == 3

    lines = destination.read_text(encoding="utf-8").splitlines()
    assert [EvaluationRecord.model_validate_json(line) for line in lines] == records


def test_export_interactions_of_one_agent_to_a_stream(ledger):
    ledger.record_interaction(make_interaction("i-1", "a", started_at=at(0)))
    ledger.record_interaction(make_interaction("i-2", "b", started_at=at(1)))
    ledger.record_interaction(make_interaction("i-3", "a", started_at=at(2)))
    out = io.StringIO()

    assert export_jsonl(ledger, out, what="interactions", agent_id="a", until=at(2)) == 1

    assert [json.loads(line)["interaction_id"] for line in out.getvalue().splitlines()] == ["i-1"]


# --- work queue ----------------------------------------------------------------------------


def test_enqueue_ignores_ids_already_queued_claimed_or_recorded(ledger):
    assert ledger.enqueue([make_unit("e-1"), make_unit("e-2"), make_unit("e-1")]) == 2
    assert ledger.enqueue([make_unit("e-2"), make_unit("e-3")]) == 1
    claim_one(ledger)
    assert ledger.enqueue([make_unit("e-1")]) == 0
    ledger.record_evaluation(make_evaluation("e-9"))
    assert ledger.enqueue([make_unit("e-9")]) == 0
    assert ledger.pending_work() == 3


def test_record_interaction_enqueues_its_work(ledger):
    ledger.record_evaluation(make_evaluation("e-done"))
    work = [make_unit("e-1"), make_unit("e-2"), make_unit("e-done")]

    ledger.record_interaction(make_interaction("i-1"), work)

    assert ledger.pending_work("i-1") == 2
    assert ledger.get_interaction("i-1").interaction_id == "i-1"
    ledger.record_interaction(make_interaction("i-1"), work)
    assert ledger.pending_work("i-1") == 2


def test_claim_respects_limit_and_hands_out_oldest_first(ledger):
    now = time.time()
    ledger.enqueue([make_unit(f"e-{n}", enqueued_at=now - n) for n in range(5)])

    first = ledger.claim("w-1", limit=2, lease_seconds=30.0)
    second = ledger.claim("w-2", limit=10, lease_seconds=30.0)

    assert [c.unit.evaluation_id for c in first] == ["e-4", "e-3"]
    assert [c.unit.evaluation_id for c in second] == ["e-2", "e-1", "e-0"]
    assert {c.worker_id for c in second} == {"w-2"}
    assert all(c.lease_expires_at > now + 29 for c in first + second)


def test_claim_waits_for_not_before(ledger):
    ledger.enqueue([make_unit("e-later", not_before=time.time() + LEASE)])

    assert ledger.claim("w-1", limit=1, lease_seconds=30.0) == []
    time.sleep(LEASE * 1.5)
    assert [c.unit.evaluation_id for c in ledger.claim("w-1", limit=1, lease_seconds=30.0)] == [
        "e-later"
    ]


def test_a_leased_unit_is_not_claimed_twice(ledger):
    ledger.enqueue([make_unit("e-1")])
    claim_one(ledger, "w-1")

    assert ledger.claim("w-2", limit=5, lease_seconds=30.0) == []
    assert ledger.pending_work() == 1


def test_claim_refuses_a_bad_lease(ledger):
    with pytest.raises(ValueError, match="lease_seconds"):
        ledger.claim("w-1", limit=1, lease_seconds=0)


def test_heartbeat_extends_the_lease(ledger):
    ledger.enqueue([make_unit("e-1")])
    claim = claim_one(ledger, lease_seconds=LEASE)

    renewed = ledger.heartbeat(claim, lease_seconds=30.0)
    time.sleep(LEASE * 1.5)

    assert renewed is not None
    assert renewed.token == claim.token
    assert renewed.lease_expires_at > claim.lease_expires_at
    assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []


def test_an_expired_lease_is_taken_over_and_the_stale_claim_changes_nothing(ledger):
    ledger.enqueue([make_unit("e-1")])
    stale = claim_one(ledger, "w-1", lease_seconds=LEASE)
    time.sleep(LEASE * 1.5)

    current = claim_one(ledger, "w-2")

    assert current.token > stale.token
    assert ledger.heartbeat(stale, lease_seconds=30.0) is None
    assert ledger.complete(stale, make_evaluation("e-1")) is False
    assert ledger.release(stale, delay=60.0) is False
    assert ledger.get_evaluation("e-1") is None
    assert ledger.pending_work() == 1
    # The current claim is untouched: it still completes.
    assert ledger.complete(current, make_evaluation("e-1", duration=7.0)) is True
    assert ledger.get_evaluation("e-1").duration == 7.0


def test_release_puts_the_unit_back_after_a_delay_with_attempts(ledger):
    ledger.enqueue([make_unit("e-1")])
    claim = claim_one(ledger)

    assert ledger.release(claim, delay=LEASE, attempts=2) is True
    assert ledger.release(claim) is False  # released once; the claim is gone
    assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []
    time.sleep(LEASE * 1.5)

    again = claim_one(ledger, "w-2")
    assert again.unit.attempts == 2
    assert again.unit.not_before > claim.unit.not_before
    assert again.token > claim.token


def test_release_without_attempts_keeps_the_count(ledger):
    ledger.enqueue([make_unit("e-1", attempts=1)])
    assert ledger.release(claim_one(ledger)) is True

    assert claim_one(ledger).unit.attempts == 1


def test_complete_records_the_outcome_and_removes_the_unit(ledger):
    ledger.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
    claim = claim_one(ledger)
    record = make_evaluation(claim.unit.evaluation_id)

    assert ledger.complete(claim, record) is True

    assert ledger.get_evaluation(record.evaluation_id) == record
    assert ledger.pending_work("i-1") == 1
    assert ledger.complete(claim, record) is False
    assert ledger.enqueue([claim.unit]) == 0


def test_complete_keeps_an_outcome_recorded_earlier(ledger):
    ledger.enqueue([make_unit("e-1")])
    claim = claim_one(ledger)
    earlier = make_evaluation("e-1", duration=1.0)
    ledger.record_evaluation(earlier)

    assert ledger.complete(claim, make_evaluation("e-1", duration=2.0)) is True
    assert ledger.get_evaluation("e-1") == earlier
    assert ledger.pending_work() == 0


def test_complete_refuses_the_record_of_another_unit(ledger):
    ledger.enqueue([make_unit("e-1")])

    with pytest.raises(ValueError, match="e-2"):
        ledger.complete(claim_one(ledger), make_evaluation("e-2"))
    assert ledger.pending_work() == 1


def test_reclaim_expired_frees_only_expired_leases(ledger):
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


def test_pending_work_counts_queued_and_claimed_units_per_interaction(ledger):
    ledger.record_interaction(make_interaction("i-1"), [make_unit("e-1"), make_unit("e-2")])
    ledger.record_interaction(make_interaction("i-2"), [make_unit("e-3", interaction_id="i-2")])
    claim_one(ledger)

    assert ledger.pending_work() == 3
    assert ledger.pending_work("i-1") == 2
    assert ledger.pending_work("i-2") == 1
    assert ledger.pending_work("i-404") == 0


def test_a_waiting_unit_is_due_again_on_resume_with_the_value(ledger):
    ledger.enqueue([make_unit("e-1")])
    claim = claim_one(ledger)
    assert ledger.resume("e-1", "too early") is False  # claimed, not waiting

    assert ledger.release(claim, delay=3600.0, waiting=True) is True
    assert ledger.claim("w-2", limit=1, lease_seconds=30.0) == []
    assert ledger.pending_work() == 1

    assert ledger.resume("e-1", {"approved": True}) is True
    assert ledger.resume("e-1", "twice") is False  # no longer waiting
    resumed = claim_one(ledger, "w-2")
    assert resumed.unit.resumed is True
    assert resumed.unit.resume_value == {"approved": True}
    assert resumed.unit.waiting is False
    assert ledger.resume("e-404", None) is False


def test_a_waiting_unit_is_due_at_its_deadline_and_releasing_uses_up_the_value(ledger):
    ledger.enqueue([make_unit("e-1")])
    ledger.release(claim_one(ledger), delay=LEASE, waiting=True)
    time.sleep(LEASE * 1.5)
    at_deadline = claim_one(ledger, "w-2")
    assert at_deadline.unit.waiting is True  # the worker sees it came back unresumed

    ledger.release(at_deadline, delay=3600.0, waiting=True)
    ledger.resume("e-1", "yes")
    again = claim_one(ledger, "w-3")
    ledger.release(again)  # e.g. a retry after a failure: the value is used up
    plain = claim_one(ledger, "w-4")
    assert (plain.unit.resumed, plain.unit.resume_value) == (False, None)


def test_waiting_work_lists_the_parked_units_with_their_question(ledger):
    ledger.enqueue([make_unit("e-1", interaction_id="i-1"), make_unit("e-2", interaction_id="i-2")])
    first, second = ledger.claim("w-1", limit=2, lease_seconds=30.0)
    ledger.release(first, delay=3600.0, waiting=True, question={"ask": "approve?"})
    assert [unit.evaluation_id for unit in ledger.waiting_work()] == [first.unit.evaluation_id]
    [parked] = ledger.waiting_work(first.unit.interaction_id)
    assert parked.question == {"ask": "approve?"}
    assert ledger.waiting_work(second.unit.interaction_id) == []  # claimed, not waiting
    ledger.resume(parked.evaluation_id, "yes")
    assert ledger.waiting_work() == []
