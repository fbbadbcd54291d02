import type { Generated } from 'kysely'
/** Table types as Kysely sees them; both dialects share them (see migrations/<dialect>/). */
export interface Database {
  user_tags: { integration_id: string; user_id: string; key: string; value: string }
  conversation_tags: { integration_id: string; conversation_id: string; key: string; value: string }
  message_tags: { message_id: string; integration_id: string; key: string; value: string }
  workspaces: { id: string; name: string; created_at: number; updated_at: number }
  accounts: { id: string; email: string; display_name: string; created_at: number; updated_at: number }
  workspace_members: { workspace_id: string; account_id: string; role: string; created_at: number; updated_at: number }
  access_tokens: { id: string; account_id: string; token_hash: string; note: string; created_at: number }
  bots: {
    id: string
    workspace_id: string
    name: string
    description: string | null
    tags: string
    dev: number
    signing_secret: string
    code: string | null
    max_execution_time: number | null
    deployed_at: number | null
    url: string | null
    /** 0010: JSON object, the bot's webchat settings. */
    webchat: Generated<string | null>
    /** 0025: JSON object, the bot's declared actions. */
    actions: Generated<string | null>
    created_at: number
    updated_at: number
  }
  bot_tags: { bot_id: string; key: string; value: string }
  bot_api_keys: { id: string; bot_id: string; token_hash: string; note: string; created_at: number }
  settings: { key: string; value: string }
  bot_states: { bot_id: string; scope: string; scope_id: string; data: string; updated_at: number }
  bot_logs: { id: string; bot_id: string; at: number; level: string; message: string; conversation_id: string | null }
  integrations: {
    id: string
    bot_id: string
    name: string
    webhook_id: string
    encryption_key: string
    enabled: number
    configuration: string
    created_at: number
    updated_at: number
  }
  users: {
    integration_id: string
    id: string
    name: string | null
    picture_url: string | null
    profile: string | null
    is_bot: number
    created_at: number
    updated_at: number
    /** 0006: Runtime API fields (JSON objects of strings). */
    properties: Generated<string | null>
    attributes: Generated<string | null>
  }
  user_keys: { key_hash: string; integration_id: string; user_id: string; created_at: number }
  conversations: {
    integration_id: string
    id: string
    owner_id: string
    last_seq: number
    last_at: number
    bot_seq: number
    bot_lease_owner: string | null
    bot_lease_until: number
    created_at: number
    updated_at: number
    /** 0006: the Runtime API's channel ('channel' by default) and shared properties (JSON). */
    channel: Generated<string>
    properties: Generated<string | null>
  }
  participants: { integration_id: string; conversation_id: string; user_id: string; created_at: number }
  messages: {
    id: string
    integration_id: string
    conversation_id: string
    seq: number
    user_id: string
    is_bot: number
    payload: string
    metadata: string | null
    bot_skip: number
    created_at: number
    /** 0006: last updateMessage (null: never updated). */
    updated_at: Generated<number | null>
  }
  events: {
    id: string
    integration_id: string
    conversation_id: string
    seq: number
    user_id: string
    is_bot: number
    payload: string
    bot_skip: number
    created_at: number
  }
  conversation_signals: {
    integration_id: string
    conversation_id: string
    seq: number
    type: string
    data: string
    created_at: number
  }
  /** Files API (migrations/<dialect>/0002_files.sql): metadata rows; content lives in the BlobStore. */
  files: {
    id: string
    bot_id: string
    key: string
    content_type: string
    size: number | null
    /** What upsertFile declared (0021_file_declared_size.sql); NULL on older rows. */
    declared_size: number | null
    status: string
    failed_status_reason: string | null
    blob_name: string | null
    upload_nonce: string
    metadata: string
    access_policies: string
    indexed: number
    expires_at: number | null
    owner_type: string
    owner_id: string | null
    created_at: number
    updated_at: number
  }
  file_tags: { file_id: string; key: string; value: string }
}
