import { Type } from 'typebox'
import type { App } from '../../types.js'
import { chatParams, chatSchema } from './common.js'

/** The official client probes GET /{webhookId}/hello/ (no key) before its first call. */
export default function hello(app: App): void {
  app.get('/hello/', {
    schema: chatSchema('hello', 'Connection probe used by @botpress/chat', { params: chatParams() }, { 200: Type.Object({}) }, { authenticated: false }),
  }, async () => ({}))
}
