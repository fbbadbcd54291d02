// The remote-bot benchmark's bot: an unchanged @botpress/sdk program that sends each text back (the
// same work as bench/turns.ts's sandboxed ECHO_BOT: no state, one createMessage).
import * as sdk from '@botpress/sdk'

const bot = new sdk.Bot({ actions: {}, plugins: {} })

bot.on.message('*', async ({ message, conversation, client, ctx }) => {
  if (message.type !== 'text') return
  await client.createMessage({ conversationId: conversation.id, userId: ctx.botId, tags: {}, type: 'text', payload: { text: message.payload.text } })
})

bot.start(Number(process.env.PORT))
