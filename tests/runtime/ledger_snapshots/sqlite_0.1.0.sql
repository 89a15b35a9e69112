-- A SqliteLedger file as langchain-evals-port 0.1.0 left it (schema version 1: tables
-- interactions, evaluations, work; the version in PRAGMA user_version), with records
-- that release wrote. Made with SqliteLedger at commit b3866ec and sqlite3's iterdump();
-- iterdump does not keep user_version, so it is set at the end. Loaded by
-- tests/runtime/test_ledger_migrations.py.
BEGIN TRANSACTION;
CREATE TABLE evaluations (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    evaluator_id TEXT NOT NULL,
    timestamp REAL NOT NULL,
    record TEXT NOT NULL
);
INSERT INTO "evaluations" VALUES('e-verdict','i-1','support-agent','reply-quality',1740821405.0,'{"evaluation_id":"e-verdict","evaluator_id":"reply-quality","control_id":"quality-control","trigger":"on_interaction","trigger_attributes":{"prompt":"v2"},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"verdict","evaluation":{"passed":true,"explanation":"answered the question","score":0.9,"label":"good","attributes":{"judge":"gpt-4o-mini"}}},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:05Z"}');
INSERT INTO "evaluations" VALUES('e-failing-verdict','i-1','support-agent','mentions-order',1740821406.0,'{"evaluation_id":"e-failing-verdict","evaluator_id":"mentions-order","control_id":null,"trigger":"on_interaction","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"verdict","evaluation":{"passed":false,"explanation":"no order number given","score":null,"label":null,"attributes":{}}},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:06Z"}');
INSERT INTO "evaluations" VALUES('e-inconclusive','i-1','support-agent','refund-policy',1740821407.0,'{"evaluation_id":"e-inconclusive","evaluator_id":"refund-policy","control_id":null,"trigger":"manual","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"inconclusive","reason":"nothing to judge: the agent asked a question back"},"attempts":1,"duration":0.25,"timestamp":"2025-03-01T09:30:07Z"}');
INSERT INTO "evaluations" VALUES('e-failed','i-1','support-agent','llm-judge',1740821408.0,'{"evaluation_id":"e-failed","evaluator_id":"llm-judge","control_id":null,"trigger":"on_interaction","trigger_attributes":{},"interaction_id":"i-1","agent_id":"support-agent","outcome":{"kind":"failed","error":{"type":"TimeoutError","message":"judge timed out after 30 s","code":"timeout"}},"attempts":3,"duration":0.25,"timestamp":"2025-03-01T09:30:08Z"}');
CREATE TABLE interactions (
    interaction_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    record TEXT NOT NULL
);
INSERT INTO "interactions" VALUES('i-1','support-agent',1740821400.0,'{"interaction_id":"i-1","agent_id":"support-agent","roles":["support"],"thread_id":"thread-7","flow_id":null,"status":"completed","system_message":"You answer questions about orders.","input_messages":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"}],"responses":[{"message":{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}},"model_name":"gpt-4o-mini","usage":{"input_tokens":120,"output_tokens":14,"total_tokens":134},"finish_reason":"stop","started_at":"2025-03-01T09:30:01Z","ended_at":"2025-03-01T09:30:02Z"}],"tool_calls":[{"id":"call-1","name":"lookup_order","args":{"order_id":"A-17"},"result":"shipped 2025-02-27","status":"success"}],"transcript":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"},{"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":"msg-ai-1","tool_calls":[{"name":"lookup_order","args":{"order_id":"A-17"},"id":"call-1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null},{"content":"shipped 2025-02-27","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"msg-tool","tool_call_id":"call-1","artifact":null,"status":"success"},{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}}],"output_text":"Your order A-17 shipped on 27 February.","failure":null,"started_at":"2025-03-01T09:30:00Z","ended_at":"2025-03-01T09:30:02Z","run_id":"run-i-1","evaluation_traffic":false,"metadata":{"channel":"chat"}}');
INSERT INTO "interactions" VALUES('i-2','billing-agent',1740821460.0,'{"interaction_id":"i-2","agent_id":"billing-agent","roles":["support"],"thread_id":"thread-7","flow_id":null,"status":"completed","system_message":"You answer questions about orders.","input_messages":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"}],"responses":[{"message":{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}},"model_name":"gpt-4o-mini","usage":{"input_tokens":120,"output_tokens":14,"total_tokens":134},"finish_reason":"stop","started_at":"2025-03-01T09:31:01Z","ended_at":"2025-03-01T09:31:02Z"}],"tool_calls":[{"id":"call-1","name":"lookup_order","args":{"order_id":"A-17"},"result":"shipped 2025-02-27","status":"success"}],"transcript":[{"content":"Where is my order A-17?","additional_kwargs":{},"response_metadata":{},"type":"human","name":null,"id":"msg-human"},{"content":"","additional_kwargs":{},"response_metadata":{},"type":"ai","name":null,"id":"msg-ai-1","tool_calls":[{"name":"lookup_order","args":{"order_id":"A-17"},"id":"call-1","type":"tool_call"}],"invalid_tool_calls":[],"usage_metadata":null},{"content":"shipped 2025-02-27","additional_kwargs":{},"response_metadata":{},"type":"tool","name":null,"id":"msg-tool","tool_call_id":"call-1","artifact":null,"status":"success"},{"content":"Your order A-17 shipped on 27 February.","additional_kwargs":{},"response_metadata":{"model_name":"gpt-4o-mini","finish_reason":"stop"},"type":"ai","name":null,"id":"msg-ai-2","tool_calls":[],"invalid_tool_calls":[],"usage_metadata":{"input_tokens":120,"output_tokens":14,"total_tokens":134}}],"output_text":"Your order A-17 shipped on 27 February.","failure":null,"started_at":"2025-03-01T09:31:00Z","ended_at":"2025-03-01T09:31:02Z","run_id":"run-i-2","evaluation_traffic":false,"metadata":{"channel":"chat"}}');
CREATE TABLE work (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    not_before REAL NOT NULL,
    worker TEXT,
    token INTEGER NOT NULL DEFAULT 0,
    lease_until REAL,
    unit TEXT NOT NULL
);
INSERT INTO "work" VALUES('e-claimed','i-1',1767225600.0,0.0,'w-1',1,1.79613506916551613802e+09,'{"evaluation_id":"e-claimed","evaluator_id":"tone","interaction_id":"i-1","agent_id":"support-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225600.0,"not_before":0.0,"waiting":false,"question":null,"resumed":false,"resume_value":null}');
INSERT INTO "work" VALUES('e-waiting','i-1',1767225601.0,2.11149500916585135452e+09,NULL,1,NULL,'{"evaluation_id":"e-waiting","evaluator_id":"human-review","interaction_id":"i-1","agent_id":"support-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225601.0,"not_before":2111495009.1658514,"waiting":true,"question":{"question":"Is this reply right?"},"resumed":false,"resume_value":null}');
INSERT INTO "work" VALUES('e-pending','i-2',1767225602.0,0.0,NULL,0,NULL,'{"evaluation_id":"e-pending","evaluator_id":"helpfulness","interaction_id":"i-2","agent_id":"billing-agent","roles":[],"flow_id":null,"trigger":"on_interaction","trigger_attributes":{},"attempts":0,"enqueued_at":1767225602.0,"not_before":0.0,"waiting":false,"question":null,"resumed":false,"resume_value":null}');
CREATE INDEX interactions_by_time ON interactions (started_at, interaction_id);
CREATE INDEX interactions_by_agent
    ON interactions (agent_id, started_at, interaction_id);
CREATE INDEX evaluations_by_interaction ON evaluations (interaction_id);
CREATE INDEX evaluations_by_time ON evaluations (timestamp, evaluation_id);
CREATE INDEX evaluations_by_agent
    ON evaluations (agent_id, timestamp, evaluation_id);
CREATE INDEX evaluations_by_evaluator
    ON evaluations (evaluator_id, timestamp, evaluation_id);
CREATE INDEX work_by_age ON work (enqueued_at, evaluation_id);
CREATE INDEX work_by_interaction ON work (interaction_id);
PRAGMA user_version = 1;
COMMIT;
