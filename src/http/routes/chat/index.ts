import type { App } from '../../types.js'
import { registerChatUserScope } from '../../plugins/chat-user-scope.js'
import hello from './hello.js'
import getWebchatSettings from './get-webchat-settings.js'
import createUser from './users/create-user.js'
import getOrCreateUser from './users/get-or-create-user.js'
import getUser from './users/get-user.js'
import updateUser from './users/update-user.js'
import deleteUser from './users/delete-user.js'
import createConversation from './conversations/create-conversation.js'
import getOrCreateConversation from './conversations/get-or-create-conversation.js'
import getConversation from './conversations/get-conversation.js'
import deleteConversation from './conversations/delete-conversation.js'
import listConversations from './conversations/list-conversations.js'
import listenConversation from './conversations/listen-conversation.js'
import addParticipant from './participants/add-participant.js'
import getParticipant from './participants/get-participant.js'
import removeParticipant from './participants/remove-participant.js'
import listParticipants from './participants/list-participants.js'
import createMessage from './messages/create-message.js'
import getMessage from './messages/get-message.js'
import deleteMessage from './messages/delete-message.js'
import listMessages from './messages/list-messages.js'
import setMessageFeedback from './messages/set-message-feedback.js'
import createFileUpload from './files/create-file-upload.js'
import createEvent from './events/create-event.js'
import getEvent from './events/get-event.js'

/**
 * The Chat API under /{webhookId}. Auth is decided by scope: every route resolves the webhook
 * (unknown → 404); routes in the inner scope also require a valid x-user-key (→ 401).
 */
export async function chatRoutes(app: App): Promise<void> {
  await registerChatUserScope(app, 'webhookId', {
    // Open to anyone who knows the webhook id.
    open: [hello, createUser, getWebchatSettings],
    authenticated: [
      getUser, updateUser, deleteUser,
      createConversation, getOrCreateConversation, getConversation, deleteConversation, listConversations, listenConversation,
      addParticipant, getParticipant, removeParticipant, listParticipants,
      createMessage, getMessage, deleteMessage, listMessages, setMessageFeedback, createFileUpload,
      createEvent, getEvent,
    ],
  })

  // get-or-create authenticates itself: a verified JWT may name a user that does not exist yet.
  getOrCreateUser(app)
}
