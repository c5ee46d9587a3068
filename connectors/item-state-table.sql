-- The table the Postgres sink (postgres-item-state-sink.properties) upserts llm.item-state into:
-- one row per turn and item, the latest state wins. The turn's lifecycle row has item_id = 'turn'.
CREATE TABLE IF NOT EXISTS turnstream_item_state (
    turn_id           TEXT        NOT NULL,
    item_id           TEXT        NOT NULL,
    tenant_id         TEXT,                  -- the turn's tenant; NULL for a gateway without API keys
    thread_id         TEXT,                  -- as the tenant named it: (tenant_id, thread_id) is the thread
    event_type        TEXT        NOT NULL,  -- item_upsert | turn_started | turn_completed | turn_error
    item_type         TEXT,                  -- message | reasoning | tool_call | tool_output | error
    change_type       TEXT,                  -- created | updated | completed
    version           BIGINT,                -- per item, increases by one per upsert
    content           TEXT,
    origin            TEXT,                  -- user | agent
    provider_id       TEXT,
    model_id          TEXT,
    tool_name         TEXT,
    tool_arguments    JSONB,
    call_id           TEXT,
    tool_output       JSONB,
    success           BOOLEAN,
    status            TEXT,                  -- turn status: complete | error | aborted
    prompt_tokens     BIGINT,
    completion_tokens BIGINT,
    total_tokens      BIGINT,
    error_code        TEXT,
    error_message     TEXT,
    seq               BIGINT      NOT NULL,  -- the envelope's position in its turn
    event_id          TEXT        NOT NULL,
    updated_at        TIMESTAMPTZ NOT NULL,  -- the envelope's emit time
    PRIMARY KEY (turn_id, item_id)
);

-- A table created before rows carried their tenant gets the column; its old index is replaced.
ALTER TABLE turnstream_item_state ADD COLUMN IF NOT EXISTS tenant_id TEXT;
DROP INDEX IF EXISTS turnstream_item_state_thread;
CREATE INDEX IF NOT EXISTS turnstream_item_state_tenant_thread ON turnstream_item_state (tenant_id, thread_id, turn_id);
