-- A SqliteLedger file at schema version 6, as the release before annotation runs had
-- columns left it: three experiments whose joined run ids collide ('a' / 'b:c' and 'a:b' / 'c'
-- are both 'a:b:c:0'), case annotations stored under the joined subject id alone, and an
-- interaction's annotation. Made with SqliteLedger at commit e0b8d87 and sqlite3's
-- iterdump() (user_version set at the end). Loaded by tests/runtime/test_annotations.py.
BEGIN TRANSACTION;
CREATE TABLE ledger_annotations (
    annotation_id text PRIMARY KEY,
    subject_kind text NOT NULL,
    subject_id text NOT NULL,
    feedback_key text NOT NULL,
    label text,
    score double precision,
    note text,
    annotator text,
    created_at double precision NOT NULL,
    record json NOT NULL
);
INSERT INTO "ledger_annotations" VALUES('n-1','case','exp:c-1:0','correctness',NULL,1.0,NULL,'ana',1772355600.0,'{"annotation_id":"n-1","subject_kind":"case","subject_id":"exp:c-1:0","key":"correctness","score":true,"label":null,"note":null,"annotator":"ana","created_at":"2026-03-01T09:00:00Z"}');
INSERT INTO "ledger_annotations" VALUES('n-2','case','a:b:c:0','correctness',NULL,0.0,NULL,NULL,1772355600.0,'{"annotation_id":"n-2","subject_kind":"case","subject_id":"a:b:c:0","key":"correctness","score":false,"label":null,"note":null,"annotator":null,"created_at":"2026-03-01T09:00:00Z"}');
INSERT INTO "ledger_annotations" VALUES('n-3','case','gone:c-9:0','correctness','unclear',NULL,NULL,NULL,1772355600.0,'{"annotation_id":"n-3","subject_kind":"case","subject_id":"gone:c-9:0","key":"correctness","score":null,"label":"unclear","note":null,"annotator":null,"created_at":"2026-03-01T09:00:00Z"}');
INSERT INTO "ledger_annotations" VALUES('n-4','interaction','i-1','correctness',NULL,0.0,'wrong date',NULL,1772355600.0,'{"annotation_id":"n-4","subject_kind":"interaction","subject_id":"i-1","key":"correctness","score":false,"label":null,"note":"wrong date","annotator":null,"created_at":"2026-03-01T09:00:00Z"}');
CREATE TABLE "ledger_evaluations" (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    agent_id TEXT NOT NULL,
    evaluator_id TEXT NOT NULL,
    evaluated_at REAL NOT NULL,
    record TEXT NOT NULL
, outcome text, passed integer, score double precision);
CREATE TABLE ledger_experiment_runs (
    experiment text NOT NULL,
    case_id text NOT NULL,
    trial integer NOT NULL,
    position integer NOT NULL,
    work json NOT NULL,
    worker text,
    token bigint NOT NULL DEFAULT 0,
    lease_until double precision,
    finished_at double precision,
    record json,
    PRIMARY KEY (experiment, case_id, trial)
);
INSERT INTO "ledger_experiment_runs" VALUES('exp','c-1',0,0,'{}',NULL,0,NULL,NULL,NULL);
INSERT INTO "ledger_experiment_runs" VALUES('a','b:c',0,0,'{}',NULL,0,NULL,NULL,NULL);
INSERT INTO "ledger_experiment_runs" VALUES('a:b','c',0,0,'{}',NULL,0,NULL,NULL,NULL);
CREATE TABLE ledger_experiments (
    name text PRIMARY KEY,
    created_at double precision NOT NULL,
    record json NOT NULL
);
INSERT INTO "ledger_experiments" VALUES('exp',1.79617416743767213823e+09,'{"name": "exp"}');
INSERT INTO "ledger_experiments" VALUES('a',1.79617416743802452085e+09,'{"name": "a"}');
INSERT INTO "ledger_experiments" VALUES('a:b',1.79617416743819642067e+09,'{"name": "a:b"}');
CREATE TABLE "ledger_interactions" (
    interaction_id TEXT PRIMARY KEY,
    agent_id TEXT NOT NULL,
    started_at REAL NOT NULL,
    record TEXT NOT NULL
);
INSERT INTO "ledger_interactions" VALUES('i-1','support-agent',1772355600.0,'{"interaction_id":"i-1","agent_id":"support-agent","roles":[],"thread_id":null,"flow_id":null,"status":"completed","system_message":null,"input_messages":[],"responses":[],"tool_calls":[],"transcript":[],"output_text":null,"failure":null,"started_at":"2026-03-01T09:00:00Z","ended_at":"2026-12-02T01:16:07.436284Z","run_id":null,"evaluation_traffic":false,"metadata":{}}');
CREATE TABLE ledger_schema (version integer NOT NULL);
INSERT INTO "ledger_schema" VALUES(0);
INSERT INTO "ledger_schema" VALUES(1);
INSERT INTO "ledger_schema" VALUES(2);
INSERT INTO "ledger_schema" VALUES(3);
INSERT INTO "ledger_schema" VALUES(4);
INSERT INTO "ledger_schema" VALUES(5);
INSERT INTO "ledger_schema" VALUES(6);
CREATE TABLE "ledger_work" (
    evaluation_id TEXT PRIMARY KEY,
    interaction_id TEXT NOT NULL,
    enqueued_at REAL NOT NULL,
    not_before REAL NOT NULL,
    worker TEXT,
    token INTEGER NOT NULL DEFAULT 0,
    lease_until REAL,
    unit TEXT NOT NULL
);
CREATE INDEX interactions_by_time ON "ledger_interactions" (started_at, interaction_id);
CREATE INDEX interactions_by_agent
    ON "ledger_interactions" (agent_id, started_at, interaction_id);
CREATE INDEX evaluations_by_interaction ON "ledger_evaluations" (interaction_id);
CREATE INDEX evaluations_by_time ON "ledger_evaluations" (evaluated_at, evaluation_id);
CREATE INDEX evaluations_by_agent
    ON "ledger_evaluations" (agent_id, evaluated_at, evaluation_id);
CREATE INDEX evaluations_by_evaluator
    ON "ledger_evaluations" (evaluator_id, evaluated_at, evaluation_id);
CREATE INDEX work_by_age ON "ledger_work" (enqueued_at, evaluation_id);
CREATE INDEX work_by_interaction ON "ledger_work" (interaction_id);
CREATE INDEX ledger_experiment_runs_in_order
    ON ledger_experiment_runs (experiment, position, trial);
CREATE INDEX ledger_experiment_runs_unfinished
    ON ledger_experiment_runs (experiment, position, trial) WHERE finished_at IS NULL;
CREATE INDEX ledger_evaluations_by_agent_evaluator
    ON ledger_evaluations (agent_id, evaluator_id, evaluated_at);
CREATE INDEX ledger_evaluations_summary_by_time
    ON ledger_evaluations (evaluated_at, agent_id, evaluator_id, outcome, passed, score);
CREATE INDEX ledger_evaluations_by_outcome
    ON ledger_evaluations (outcome, evaluated_at, evaluation_id);
CREATE INDEX ledger_annotations_by_subject
    ON ledger_annotations (subject_kind, subject_id, feedback_key);
CREATE INDEX ledger_annotations_by_key
    ON ledger_annotations (feedback_key, created_at, annotation_id);
CREATE INDEX ledger_annotations_by_time
    ON ledger_annotations (created_at, annotation_id);
COMMIT;
PRAGMA user_version = 6;
