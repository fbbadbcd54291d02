// Exports a conversation's transcript through the Runtime API, oldest message first.
// PARLEY_URL=http://localhost:3000 BOT_ID=… BOT_KEY=bak_… node examples/export-transcript.mjs <conversationId>
import { Client } from '@botpress/client'

const client = new Client({ apiUrl: process.env.PARLEY_URL, token: process.env.BOT_KEY, botId: process.env.BOT_ID })
const conversationId = process.argv[2]

const messages = []
let nextToken
do {
  const page = await client.listMessages({ conversationId, nextToken }) // newest first, 20 per page
  messages.push(...page.messages)
  nextToken = page.meta.nextToken
} while (nextToken)

for (const m of messages.reverse()) {
  const who = m.direction === 'outgoing' ? 'bot' : m.userId
  console.log(`${m.createdAt} ${who}: ${m.type === 'text' ? m.payload.text : `[${m.type}]`}`)
}
