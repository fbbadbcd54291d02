/**
 * The bot-facing operations, each defined once (src/http/operations/operation.ts): the Runtime API's and the
 * Tables API's routes are registered from these definitions, and the sandboxed bot's client calls the same
 * ones (src/runtime/sandbox-client.ts, sandbox-tables.ts) with the routes' validation and errors. A Runtime or
 * Tables operation added to these lists reaches bot code with no second edit (the prelude passes the names of
 * PASSED_THROUGH_METHODS through to the host; test/unit/bot-operations.test.ts holds the two lists equal).
 */
import type { BotOperation, RuntimeContext, TablesContext } from './operation.js'
import createConversation from '../routes/runtime/conversations/create-conversation.js'
import getOrCreateConversation from '../routes/runtime/conversations/get-or-create-conversation.js'
import listConversations from '../routes/runtime/conversations/list-conversations.js'
import updateConversation from '../routes/runtime/conversations/update-conversation.js'
import deleteMessage from '../routes/runtime/messages/delete-message.js'
import updateMessage from '../routes/runtime/messages/update-message.js'
import addParticipant from '../routes/runtime/participants/add-participant.js'
import getParticipant from '../routes/runtime/participants/get-participant.js'
import listParticipants from '../routes/runtime/participants/list-participants.js'
import removeParticipant from '../routes/runtime/participants/remove-participant.js'
import listTagValues from '../routes/runtime/tags/list-tag-values.js'
import createUser from '../routes/runtime/users/create-user.js'
import getOrCreateUser from '../routes/runtime/users/get-or-create-user.js'
import listUsers from '../routes/runtime/users/list-users.js'
import updateUser from '../routes/runtime/users/update-user.js'
import createTableRows from '../routes/tables/create-table-rows.js'
import createTable from '../routes/tables/create-table.js'
import deleteTableRows from '../routes/tables/delete-table-rows.js'
import deleteTable from '../routes/tables/delete-table.js'
import duplicateTable from '../routes/tables/duplicate-table.js'
import exportTable from '../routes/tables/export-table.js'
import findTableRows from '../routes/tables/find-table-rows.js'
import getOrCreateTable from '../routes/tables/get-or-create-table.js'
import getTableJobs from '../routes/tables/get-table-jobs.js'
import getTableRow from '../routes/tables/get-table-row.js'
import getTable from '../routes/tables/get-table.js'
import importTable from '../routes/tables/import-table.js'
import listTables from '../routes/tables/list-tables.js'
import renameTableColumn from '../routes/tables/rename-table-column.js'
import updateTableRows from '../routes/tables/update-table-rows.js'
import updateTable from '../routes/tables/update-table.js'
import upsertTableRows from '../routes/tables/upsert-table-rows.js'

/** The Runtime API operations bot code calls as they are (the Runtime API's other routes are src/http/routes/runtime/index.ts's). */
export const RUNTIME_OPERATIONS: BotOperation<RuntimeContext>[] = [
  createUser, getOrCreateUser, updateUser, listUsers,
  createConversation, getOrCreateConversation, updateConversation, listConversations,
  listParticipants, addParticipant, getParticipant, removeParticipant,
  updateMessage, deleteMessage, listTagValues,
]

/** The Tables API: all of its operations (the `tables` part of @botpress/client). */
export const TABLES_OPERATIONS: BotOperation<TablesContext>[] = [
  listTables, getTable, getOrCreateTable, createTable, duplicateTable, exportTable, importTable, getTableJobs,
  updateTable, renameTableColumn, deleteTable,
  getTableRow, findTableRows, createTableRows, updateTableRows, upsertTableRows, deleteTableRows,
]

/** The names bot code's client passes through to these operations. */
export const SANDBOX_OPERATION_NAMES: readonly string[] = [...RUNTIME_OPERATIONS, ...TABLES_OPERATIONS].map((op) => op.id)

/**
 * The client methods the prelude passes to the host as they are (its RUNTIME_METHODS): the table's operations,
 * and callAction, which the host answers itself (HOST_OWNED_METHODS) but whose arguments the prelude passes unchanged.
 */
export const PASSED_THROUGH_METHODS: readonly string[] = [...RUNTIME_OPERATIONS.map((op) => op.id), 'callAction', ...TABLES_OPERATIONS.map((op) => op.id)]

/**
 * The client methods the sandbox host answers itself (src/runtime/bot-runtime.ts), because they need the turn's
 * context rather than only the bot:
 * - createMessage, createEvent: deterministic ids from the turn's source (a turn run again finds its replies),
 *   the outgoing hooks run around createMessage in the prelude, the turn's own conversation by default;
 * - getMessage, listMessages, getConversation, getUser: the chat-style objects (Chat API fields beside the Runtime
 *   API's) and, for listMessages/getConversation, the turn's integration's conversations only;
 * - callAction: an installed integration's action (`alias:action`) only, not the bot's own (no turn inside a turn);
 * - startTypingIndicator, stopTypingIndicator: the turn's conversation and typing signal;
 * - startHandoff, endHandoff: the handoff service, for the turn's conversation and user;
 * - searchKnowledge, composeKnowledgeAnswer, abortAnswerStream: the knowledge search and its recording under the
 *   turn's id; a knowledge card's answer by the configured model, streamed to the turn's conversation;
 * - agentStep: one step of an agent card (the model, the conversation's memory, the streaming), within the run's time;
 * - readWebhookBody: the body of the webhook event being handled;
 * - generateText, generateTextStream, readTextStream: the LLM gateway (the v2 cognitive API's input, validated by
 *   its route's schema, src/http/operations/cognitive.ts), for the turn's conversation and user, within the
 *   calling unit's budget; a stream's answer kept by the run's host between reads.
 */
export const HOST_OWNED_METHODS: readonly string[] = [
  'createMessage', 'createEvent', 'getMessage', 'listMessages', 'getConversation', 'getUser', 'callAction',
  'startTypingIndicator', 'stopTypingIndicator', 'startHandoff', 'endHandoff', 'searchKnowledge', 'composeKnowledgeAnswer', 'abortAnswerStream', 'agentStep', 'readWebhookBody',
  'generateText', 'generateTextStream', 'readTextStream',
]
