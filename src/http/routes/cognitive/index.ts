import { registerBotScope } from '../../plugins/bot-scope.js'
import type { App } from '../../types.js'
import generateText from './generate-text.js'
import generateTextStream from './generate-text-stream.js'
import listModels from './list-models.js'

/**
 * The v2 cognitive API under /v2/cognitive (`@botpress/cognitive`'s CognitiveBeta; docs/llm.md): the LLM gateway on the
 * operator's providers. Authenticated as the Runtime API (the bot's key, or a member's token with `x-bot-id`); body
 * limit PARLEY_LLM_BODY_LIMIT.
 */
export async function cognitiveRoutes(app: App): Promise<void> {
  registerBotScope(app, { key: 'cognitiveBot', bodyLimit: app.services.config.llm.bodyLimit, defaultPermission: 'runtime.write' })
  for (const route of [generateText, generateTextStream, listModels]) route(app)
}
