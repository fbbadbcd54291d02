import type { Connection } from './connection.js'
import { CliError, UsageError } from './errors.js'

/** An error answer of the Admin API (the Botpress error body), turned into a message that says what to do. */
export class AdminApiError extends CliError {
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
    hint?: string,
  ) {
    super(message, hint)
    this.name = 'AdminApiError'
  }
}

export interface BotSummary { id: string; name: string; createdAt: string; updatedAt: string; deployedAt?: string; tags: Record<string, string> }
export interface ChatIntegrationView { enabled: boolean; webhookId: string; webhookUrl: string; webchatUrl?: string; configuration?: { encryptionKey?: string } }
export interface BotView extends BotSummary { integrations: Record<string, ChatIntegrationView> }
export interface TokenView { id: string; createdAt: string; note: string }
export interface LogEntry { timestamp: string; level: string; message: string; conversationId?: string }

const HINTS: Record<number, string> = {
  401: 'Check the access token (--token, PARLEY_TOKEN or credentials.json) and the workspace (--workspace, PARLEY_WORKSPACE_ID).',
  403: 'Your role in this workspace does not allow this; ask an administrator of the workspace.',
  404: 'Check the id: `parley bots list` shows the bots of the workspace.',
  413: 'The request is larger than the server accepts (50 MB for the Admin API).',
}

/** The Admin API over fetch (`Authorization: Bearer`, `x-workspace-id`). */
export class AdminApi {
  constructor(readonly connection: Connection) {}

  private requireWorkspace(): string {
    if (!this.connection.workspaceId) {
      throw new UsageError('No workspace id', 'Pass --workspace ID or set PARLEY_WORKSPACE_ID (credentials.json has the first workspace).')
    }
    return this.connection.workspaceId
  }

  async call<T>(method: string, path: string, options: { body?: unknown; workspace?: boolean; query?: Record<string, string | undefined> } = {}): Promise<T> {
    const headers: Record<string, string> = { authorization: `Bearer ${this.connection.token}`, accept: 'application/json' }
    if (options.workspace !== false) headers['x-workspace-id'] = this.requireWorkspace()
    if (options.body !== undefined) headers['content-type'] = 'application/json'
    const query = Object.entries(options.query ?? {}).filter((e): e is [string, string] => e[1] !== undefined)
    const url = `${this.connection.apiUrl}${path}${query.length ? `?${new URLSearchParams(query).toString()}` : ''}`
    let response: Response
    try {
      response = await fetch(url, { method, headers, ...(options.body !== undefined && { body: JSON.stringify(options.body) }) })
    } catch (err) {
      const cause = (err as { cause?: { code?: string; message?: string } }).cause
      throw new CliError(
        `Cannot reach Parley at ${this.connection.apiUrl} (${cause?.code ?? cause?.message ?? (err as Error).message})`,
        'Is the server running (`parley serve`)? Check --api-url / PARLEY_API_URL.',
      )
    }
    const text = await response.text()
    let body: unknown
    try {
      body = text ? JSON.parse(text) : {}
    } catch {
      body = undefined
    }
    if (!response.ok) {
      const e = (body ?? {}) as { type?: unknown; message?: unknown }
      const type = typeof e.type === 'string' ? e.type : `HTTP ${response.status}`
      const message = typeof e.message === 'string' ? e.message : text.slice(0, 200) || response.statusText
      throw new AdminApiError(response.status, type, `${type}: ${message}`, HINTS[response.status])
    }
    if (body === undefined) throw new CliError(`${method} ${path} answered something that is not JSON`, `Is ${this.connection.apiUrl} a Parley server?`)
    return body as T
  }

  async listBots(): Promise<BotSummary[]> {
    const bots: BotSummary[] = []
    let nextToken: string | undefined
    do {
      const page = await this.call<{ bots: BotSummary[]; meta: { nextToken?: string } }>('GET', '/v1/admin/bots', { query: { nextToken, pageSize: '100' } })
      bots.push(...page.bots)
      nextToken = page.meta?.nextToken
    } while (nextToken)
    return bots
  }

  async getBot(id: string): Promise<BotView> {
    return (await this.call<{ bot: BotView }>('GET', `/v1/admin/bots/${encodeURIComponent(id)}`)).bot
  }

  async createBot(body: { name?: string; tags?: Record<string, string> }): Promise<BotView> {
    return (await this.call<{ bot: BotView }>('POST', '/v1/admin/bots', { body })).bot
  }

  async updateBot(id: string, body: { code?: string }): Promise<BotView> {
    return (await this.call<{ bot: BotView }>('PUT', `/v1/admin/bots/${encodeURIComponent(id)}`, { body })).bot
  }

  async deleteBot(id: string): Promise<void> {
    await this.call('DELETE', `/v1/admin/bots/${encodeURIComponent(id)}`, { body: {} })
  }

  async getBotLogs(id: string, query: { timeStart?: string; nextToken?: string }): Promise<{ logs: LogEntry[]; nextToken?: string }> {
    return this.call('GET', `/v1/admin/bots/${encodeURIComponent(id)}/logs`, { query })
  }

  async listTokens(): Promise<TokenView[]> {
    return (await this.call<{ pats: TokenView[] }>('GET', '/v1/admin/account/pats', { workspace: false })).pats
  }

  async createToken(note: string): Promise<TokenView & { value: string }> {
    return (await this.call<{ pat: TokenView & { value: string } }>('POST', '/v1/admin/account/pats', { body: { note }, workspace: false })).pat
  }

  /** A one-time console sign-in link for the calling account. */
  async createConsoleLink(): Promise<{ url: string; expiresAt: string }> {
    return this.call<{ url: string; expiresAt: string }>('POST', '/v1/admin/account/console-links', { body: {}, workspace: false })
  }

  async deleteToken(id: string): Promise<void> {
    await this.call('DELETE', `/v1/admin/account/pats/${encodeURIComponent(id)}`, { body: {}, workspace: false })
  }
}
