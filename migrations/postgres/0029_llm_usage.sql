-- LLM usage and budgets (issue #28 item 5; docs/llm-usage.md). Keep this file in step with ../sqlite/0029_llm_usage.sql.
-- llm_calls: one row per call through the LLM gateway (src/domain/llm/llm-usage.ts LlmCallRecord), successful or not.
-- No foreign key to bots: a deleted bot's calls still count toward its workspace's spend of the day; the workspace's
-- deletion removes them. Costs are USD.
CREATE TABLE llm_calls (
  id TEXT PRIMARY KEY NOT NULL,
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id TEXT NOT NULL,
  conversation_id TEXT,
  user_id TEXT,
  provider TEXT NOT NULL,
  model TEXT NOT NULL,
  input_tokens BIGINT NOT NULL,
  output_tokens BIGINT NOT NULL,
  input_cost DOUBLE PRECISION NOT NULL,
  output_cost DOUBLE PRECISION NOT NULL,
  latency_ms BIGINT NOT NULL,
  ttft_ms BIGINT,
  stop_reason TEXT,
  error TEXT,
  prompt_source TEXT,
  prompt_category TEXT,
  integration_name TEXT,
  via TEXT NOT NULL,
  created_at BIGINT NOT NULL
);
-- getBotAnalytics().llm per bot and day; the workspace's calls per day.
CREATE INDEX llm_calls_bot_created ON llm_calls (bot_id, created_at);
CREATE INDEX llm_calls_workspace_created ON llm_calls (workspace_id, created_at);

-- llm_usage_daily: tokens and cost per UTC day (day = floor(ms / 86,400,000)) of each bot, and of the workspace as a
-- whole (bot_id ''), added to in the transaction that inserts the call: the budget check reads one row per scope.
CREATE TABLE llm_usage_daily (
  workspace_id TEXT NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  bot_id TEXT NOT NULL,
  day BIGINT NOT NULL,
  calls BIGINT NOT NULL,
  tokens BIGINT NOT NULL,
  cost DOUBLE PRECISION NOT NULL,
  PRIMARY KEY (workspace_id, bot_id, day)
);

-- Budgets set through the Admin API (updateBotLlmBudget / updateWorkspaceLlmBudget); a NULL limit takes the setting's
-- default (PARLEY_LLM_*_DAILY_TOKENS / _COST), 0 is unlimited.
CREATE TABLE llm_bot_budgets (
  bot_id TEXT PRIMARY KEY NOT NULL REFERENCES bots(id) ON DELETE CASCADE,
  daily_tokens BIGINT,
  daily_cost DOUBLE PRECISION,
  updated_at BIGINT NOT NULL
);
CREATE TABLE llm_workspace_budgets (
  workspace_id TEXT PRIMARY KEY NOT NULL REFERENCES workspaces(id) ON DELETE CASCADE,
  daily_tokens BIGINT,
  daily_cost DOUBLE PRECISION,
  updated_at BIGINT NOT NULL
);
