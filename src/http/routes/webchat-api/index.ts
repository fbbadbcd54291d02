import type { App } from '../../types.js'
import { registerChatUserScope } from '../../plugins/chat-user-scope.js'
import initialize from './initialize.js'
import perf from './perf.js'
import createUser from './users/create-user.js'
import createUserKey from './users/create-user-key.js'
import getMe from './users/get-me.js'
import updateMe from './users/update-me.js'
import deleteMe from './users/delete-me.js'
import createConversation from './conversations/create-conversation.js'
import listConversations from './conversations/list-conversations.js'
import getConversation from './conversations/get-conversation.js'
import deleteConversation from './conversations/delete-conversation.js'
import listConversationMessages from './conversations/list-messages.js'
import listenConversation from './conversations/listen-conversation.js'
import listParticipants from './participants/list-participants.js'
import addParticipant from './participants/add-participant.js'
import getParticipant from './participants/get-participant.js'
import removeParticipant from './participants/remove-participant.js'
import createMessage from './messages/create-message.js'
import getMessage from './messages/get-message.js'
import updateMessage from './messages/update-message.js'
import deleteMessage from './messages/delete-message.js'
import addMessageFeedback from './messages/add-feedback.js'
import removeMessageFeedback from './messages/remove-feedback.js'
import selectMessage from './messages/select-message.js'
import createEvent from './events/create-event.js'
import getEvent from './events/get-event.js'
import createFile from './files/create-file.js'

export { WEBCHAT_API_PREFIX } from '../../../webchat/urls.js'

/**
 * Botpress's webchat API (what `@botpress/webchat` and `@botpress/webchat-client` call, llm-wire.md §4) under
 * /webchat-api/{clientId}, the client id being the chat integration's webhook id (unknown or disabled → 404). Auth by
 * scope, as the Chat API (plugins/chat-user-scope.ts): /initialize, POST /users, /users/key and /p take no key (initialize creates the user when it
 * has none); every other route requires a valid x-user-key (→ 401). Every answer is JSON, `{}` when there is nothing
 * to say: the webchat's client parses every response body.
 */
export async function webchatApiRoutes(app: App): Promise<void> {
  await registerChatUserScope(app, 'clientId', {
    open: [initialize, createUser, createUserKey, perf],
    authenticated: [
      getMe, updateMe, deleteMe,
      createConversation, listConversations, getConversation, deleteConversation, listConversationMessages, listenConversation,
      listParticipants, addParticipant, getParticipant, removeParticipant,
      createMessage, getMessage, updateMessage, deleteMessage, addMessageFeedback, removeMessageFeedback, selectMessage,
      createEvent, getEvent, createFile,
    ],
  })
}
