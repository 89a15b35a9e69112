-- A PostgresLedger database as langchain-evals-port 0.1.0 left it (schema version 1,
-- kept in ledger_schema), with records that release wrote: its DDL as it ran it, then
-- the rows PostgresLedger wrote at commit b3866ec. Loaded into a fresh schema by
-- tests/runtime/test_ledger_migrations.py.
CREATE TABLE IF NOT EXISTS ledger_schema (version integer NOT NULL);
CREATE TABLE IF NOT EXISTS ledger_interactions (
    interaction_id text COLLATE "C" PRIMARY KEY,
    agent_id text COLLATE "C" NOT NULL,
    started_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_time
    ON ledger_interactions (started_at, interaction_id);
CREATE INDEX IF NOT EXISTS ledger_interactions_by_agent
    ON ledger_interactions (agent_id, started_at, interaction_id);

CREATE TABLE IF NOT EXISTS ledger_evaluations (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    agent_id text COLLATE "C" NOT NULL,
    evaluator_id text COLLATE "C" NOT NULL,
    evaluated_at double precision NOT NULL,
    record json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_interaction
    ON ledger_evaluations (interaction_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_time
    ON ledger_evaluations (evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_agent
    ON ledger_evaluations (agent_id, evaluated_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_evaluations_by_evaluator
    ON ledger_evaluations (evaluator_id, evaluated_at, evaluation_id);

CREATE TABLE IF NOT EXISTS ledger_work (
    evaluation_id text COLLATE "C" PRIMARY KEY,
    interaction_id text COLLATE "C" NOT NULL,
    enqueued_at double precision NOT NULL,
    not_before double precision NOT NULL,
    worker text,
    token bigint NOT NULL DEFAULT 0,
    lease_until double precision,
    unit json NOT NULL
);
CREATE INDEX IF NOT EXISTS ledger_work_by_age ON ledger_work (enqueued_at, evaluation_id);
CREATE INDEX IF NOT EXISTS ledger_work_by_interaction ON ledger_work (interaction_id);
INSERT INTO "ledger_schema" ("version") VALUES ('1');
INSERT INTO "ledger_interactions" ("interaction_id", "agent_id", "started_at", "record") VALUES ('i-1', 'support-agent', '1740821400', '{"interaction_id":"i-1","agent_id":"support-agent","roles":["support"],"thread_id":"thread-7","flow_id":null,"status":"completed","system_message":"You answer questions about orders.","input_messages":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"}],"responses":[{"message":{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}},"model_name":"gpt-4o-mini","usage":{"input_tokens":120,"output_tokens":14,"total_tokens":134},"finish_reason":"stop","started_at":"2025-03-01T09:30:01Z","ended_at":"2025-03-01T09:30:02Z"}],"tool_calls":[{"id":"call-1","name":"lookup_order","args":{"order_id":"A-17"},"result":"shipped 2025-02-27","status":"success"}],"transcript":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"},{"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":"msg-ai-1","tool_calls":[{"name":"lookup_order","args":{"order_id":"A-17"},"id":"call-1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null},{"content":"shipped 2025-02-27","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"msg-tool","tool_call_id":"call-1","artifact":null,"status":"success"},{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}}],"output_text":"Your order A-17 shipped on 27 February.","failure":null,"started_at":"2025-03-01T09:30:00Z","ended_at":"2025-03-01T09:30:02Z","run_id":"run-i-1","evaluation_traffic":false,"metadata":{"channel":"chat"}}');
INSERT INTO "ledger_interactions" ("interaction_id", "agent_id", "started_at", "record") VALUES ('i-2', 'billing-agent', '1740821460', '{"interaction_id":"i-2","agent_id":"billing-agent","roles":["support"],"thread_id":"thread-7","flow_id":null,"status":"completed","system_message":"You answer questions about orders.","input_messages":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"}],"responses":[{"message":{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}},"model_name":"gpt-4o-mini","usage":{"input_tokens":120,"output_tokens":14,"total_tokens":134},"finish_reason":"stop","started_at":"2025-03-01T09:31:01Z","ended_at":"2025-03-01T09:31:02Z"}],"tool_calls":[{"id":"call-1","name":"lookup_order","args":{"order_id":"A-17"},"result":"shipped 2025-02-27","status":"success"}],"transcript":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"},{"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":"msg-ai-1","tool_calls":[{"name":"lookup_order","args":{"order_id":"A-17"},"id":"call-1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null},{"content":"shipped 2025-02-27","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"msg-tool","tool_call_id":"call-1","artifact":null,"status":"success"},{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}}],"output_text":"Your order A-17 shipped on 27 February.","failure":null,"started_at":"2025-03-01T09:31:00Z","ended_at":"2025-03-01T09:31:02Z","run_id":"run-i-2","evaluation_traffic":false,"metadata":{"channel":"chat"}}');
INSERT INTO "ledger_evaluations" ("evaluation_id", "interaction_id", "agent_id", "evaluator_id", "evaluated_at", "record") VALUES ('e-failed', 'i-1', 'support-agent', 'llm-judge', '1740821408', '{"evaluation_id":"e-failed","evaluator_id":"llm-judge","control_id":null,"trigger":"on_interaction","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"failed","error":{"type":"TimeoutError","message":"judge timed out after 30 s","code":"timeout"}},"attempts":3,"duration":0.25,"timestamp":"2025-03-01T09:30:08Z"}');
INSERT INTO "ledger_evaluations" ("evaluation_id", "interaction_id", "agent_id", "evaluator_id", "evaluated_at", "record") VALUES ('e-failing-verdict', 'i-1', 'support-agent', 'mentions-order', '1740821406', '{"evaluation_id":"e-failing-verdict","evaluator_id":"mentions-order","control_id":null,"trigger":"on_interaction","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"verdict","evaluation":{"passed":false,"explanation":"no order number given","score":null,"label":null,"attributes":{}}},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:06Z"}');
INSERT INTO "ledger_evaluations" ("evaluation_id", "interaction_id", "agent_id", "evaluator_id", "evaluated_at", "record") VALUES ('e-inconclusive', 'i-1', 'support-agent', 'refund-policy', '1740821407', '{"evaluation_id":"e-inconclusive","evaluator_id":"refund-policy","control_id":null,"trigger":"manual","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"inconclusive","reason":"nothing to judge: the agent asked a question back"},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:07Z"}');
INSERT INTO "ledger_evaluations" ("evaluation_id", "interaction_id", "agent_id", "evaluator_id", "evaluated_at", "record") VALUES ('e-verdict', 'i-1', 'support-agent', 'reply-quality', '1740821405', '{"evaluation_id":"e-verdict","evaluator_id":"reply-quality","control_id":"quality-control","trigger":"on_interaction","trigger_attributes":{"prompt":"v2"},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"verdict","evaluation":{"passed":true,"explanation":"answered the question","score":0.9,"label":"good","attributes":{"judge":"gpt-4o-mini"}}},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:05Z"}');
INSERT INTO "ledger_work" ("evaluation_id", "interaction_id", "enqueued_at", "not_before", "worker", "token", "lease_until", "unit") VALUES ('e-claimed', 'i-1', '1767225600', '0', 'w-1', '1', '1796135069.3343887', '{"evaluation_id":"e-claimed","evaluator_id":"tone","interaction_id":"i-1","agent_id":"support-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225600.0,"not_before":0.0,"waiting":false,"question":null,"resumed":false,"resume_value":null}');
INSERT INTO "ledger_work" ("evaluation_id", "interaction_id", "enqueued_at", "not_before", "worker", "token", "lease_until", "unit") VALUES ('e-pending', 'i-2', '1767225602', '0', NULL, '0', NULL, '{"evaluation_id":"e-pending","evaluator_id":"helpfulness","interaction_id":"i-2","agent_id":"billing-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225602.0,"not_before":0.0,"waiting":false,"question":null,"resumed":false,"resume_value":null}');
INSERT INTO "ledger_work" ("evaluation_id", "interaction_id", "enqueued_at", "not_before", "worker", "token", "lease_until", "unit") VALUES ('e-waiting', 'i-1', '1767225601', '2111495009.3351555', NULL, '1', NULL, '{"evaluation_id":"e-waiting","evaluator_id":"human-review","interaction_id":"i-1","agent_id":"support-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225601.0,"not_before":2111495009.3351555,"waiting":true,"question":{"question":"Is this reply right?"},"resumed":false,"resume_value":null}');
