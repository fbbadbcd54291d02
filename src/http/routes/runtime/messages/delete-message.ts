import { runtimeOperation } from '../../../operations/operation.js'
import { EmptyObject } from '../../../schemas/common.js'
import { IdParams } from '../common.js'

export default runtimeOperation({
  id: 'deleteMessage', api: 'runtime', method: 'DELETE', path: '/messages/:id', permission: 'runtime.write', installation: { params: { id: 'message' } },
  summary: 'Delete a message (a message_deleted signal on its conversation\'s stream)',
  params: IdParams,
  response: EmptyObject,
  run: async ({ bot, botChat }, { params }) => {
    await botChat.deleteMessage(bot, params.id)
    return {}
  },
})
