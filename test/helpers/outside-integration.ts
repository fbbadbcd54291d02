/**
 * An integration served by an outside party: an in-process HTTP server on loopback that speaks the integration
 * protocol Parley sends (a POST per operation, `x-bp-operation`), answers `register`/`unregister` with 200 and every
 * `webhook_received` with `answer` (status, headers, body: what Parley relays on {webhookUrl}), and records what
 * Parley sent it. It stands in for a workspace developer's own server, which Parley does not control: the hostile
 * integration of issue #24 item 1 is one.
 */
import { randomUUID } from 'node:crypto'
import http from 'node:http'
import type { AddressInfo } from 'node:net'
import { expect } from 'vitest'
import { adminClient } from './admin-client.js'
import type { Harness } from './harness.js'

export interface IntegrationAnswer { status: number; headers: Record<string, string | string[]>; body: string }

export interface OutsideIntegration {
  url: string
  /** The webhookUrl of each `register` Parley sent (an installation enabled). */
  registered: string[]
  /** What Parley sent for webhook_received: the caller's request as the integration sees it. */
  webhooks: { method: string; path: string; query: string; headers: Record<string, string>; body?: string }[]
  /** The answer to the next webhook_received requests (change it between requests). */
  answer: IntegrationAnswer
  close(): Promise<void>
}

export async function startOutsideIntegration(answer: IntegrationAnswer): Promise<OutsideIntegration> {
  const server = http.createServer((req, res) => {
    let raw = ''
    req.on('data', (c) => (raw += c))
    req.on('end', () => {
      if (req.headers['x-bp-operation'] === 'webhook_received') {
        outside.webhooks.push((JSON.parse(raw) as { req: OutsideIntegration['webhooks'][number] }).req)
        res.writeHead(outside.answer.status, outside.answer.headers).end(outside.answer.body)
        return
      }
      if (req.headers['x-bp-operation'] === 'register') outside.registered.push((JSON.parse(raw) as { webhookUrl: string }).webhookUrl)
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}')
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const outside: OutsideIntegration = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    registered: [],
    webhooks: [],
    answer,
    close: () => new Promise<void>((resolve) => {
      server.closeAllConnections()
      server.close(() => resolve())
    }),
  }
  return outside
}

/**
 * Defines an integration served at `url` (createIntegration, as a workspace developer would) and installs it on
 * `botId` as `alias`, with `token` (the owner's by default); its id and webhookUrl.
 */
export async function installOutsideIntegration(h: Harness, botId: string, url: string, options: { alias?: string; token?: string } = {}): Promise<{ integrationId: string; webhookUrl: string }> {
  const call = adminClient(h)
  const alias = options.alias ?? 'outside'
  const token = options.token
  const created = await call('POST', '/integrations', { token, body: { name: `outside-${randomUUID().slice(0, 8)}`, version: '1.0.0', url } })
  expect(created.status, created.text).toBe(201)
  const integrationId = created.body.integration.id as string
  const installed = await call('PUT', `/bots/${botId}`, { token, body: { integrations: { [alias]: { integrationId, enabled: true } } } })
  expect(installed.status, installed.text).toBe(200)
  return { integrationId, webhookUrl: installed.body.bot.integrations[alias].webhookUrl as string }
}
