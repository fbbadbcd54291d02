import pg from 'pg'
import { checkNotifyMessage, pgChannelName } from './pg-notify.js'
import { callHandlers, deliverLocal, LOCAL_DELIVERY_WAIT_MS, type PubSub, type PubSubHandler } from './pubsub.js'

export interface PostgresPubSubOptions {
  url: string
  /** Connections used to publish (default 2); listening always uses one dedicated connection. */
  publishPoolSize?: number | undefined
  /** Reconnect backoff of the listening connection: doubles from `initialDelayMs` up to `maxDelayMs`. */
  reconnect?: { initialDelayMs?: number | undefined; maxDelayMs?: number | undefined } | undefined
  /** How long subscribe() waits for the listening connection before failing (default 10 s). */
  subscribeTimeoutMs?: number | undefined
  /** Connection problems (each failed attempt, each drop); the pub/sub keeps retrying by itself. */
  onError?: ((err: Error) => void) | undefined
  /** deliverLocally's wait for this process's subscribers, at most (default LOCAL_DELIVERY_WAIT_MS). */
  deliveryWaitMs?: number | undefined
}

interface Subscription {
  handler: PubSubHandler
}

interface PendingPublish {
  channel: string
  message: string
  resolve: () => void
  reject: (err: unknown) => void
}

/** Messages delivered locally whose copy through the database is still to come (and be skipped); oldest dropped beyond. */
const MAX_PENDING_ECHOES = 10_000
/** Most notifications sent by one publishing statement. */
const MAX_PUBLISH_BATCH = 200
/** unnest yields the rows in array order: the notifications are sent, and delivered, in publish order. */
const NOTIFY_BATCH = 'SELECT pg_notify(c, m) FROM unnest($1::text[], $2::text[]) AS t(c, m)'

/**
 * PubSub over PostgreSQL LISTEN/NOTIFY, so that every Parley instance on one database hears what
 * any of them publishes. One dedicated connection LISTENs to the channels that have local
 * subscribers; a small pool publishes with `pg_notify`. Publishes that arrive while every publishing connection
 * is busy go out together in the next statement (one round trip and one transaction for many
 * notifications, delivered in publish order); a publish resolves once the statement carrying it has
 * committed, so sequential publishes are delivered in order. When the listening connection drops it reconnects
 * with exponential backoff and LISTENs to every channel again; notifications sent while it was
 * down are lost, which is why messages are only pokes and `onReconnect` lets subscribers re-read
 * what they may have missed from the store.
 */
export class PostgresPubSub implements PubSub {
  private readonly channels = new Map<string, Set<Subscription>>()
  private readonly pool: pg.Pool
  private readonly publishConnections: number
  private queue: PendingPublish[] = []
  private publishing = 0
  private readonly initialDelayMs: number
  private readonly maxDelayMs: number
  private readonly subscribeTimeoutMs: number
  private readonly deliveryWaitMs: number
  private readonly reconnectListeners = new Set<() => void>()
  private client: pg.Client | undefined
  private connecting: Promise<pg.Client> | undefined
  private everConnected = false
  private closed = false
  private wake: (() => void) | undefined
  /** `name\0message` of what deliverLocally handed to this process's subscribers: the database's copy is skipped once. */
  private readonly echoes = new Set<string>()

  constructor(private readonly options: PostgresPubSubOptions) {
    this.initialDelayMs = options.reconnect?.initialDelayMs ?? 100
    this.maxDelayMs = options.reconnect?.maxDelayMs ?? 5_000
    this.subscribeTimeoutMs = options.subscribeTimeoutMs ?? 10_000
    this.deliveryWaitMs = options.deliveryWaitMs ?? LOCAL_DELIVERY_WAIT_MS
    this.publishConnections = options.publishPoolSize ?? 2
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: this.publishConnections,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 10_000,
      keepAlive: true,
      application_name: 'parley-publish',
    })
    this.pool.on('error', (err) => this.options.onError?.(err))
    // A connection checked out when the server terminates it would otherwise emit an unhandled
    // 'error' (process crash); the publish fails instead and the pool drops the connection.
    this.pool.on('connect', (client) => client.on('error', () => {}))
  }

  /** Whether the listening connection is up right now. */
  get connected(): boolean {
    return this.client !== undefined
  }

  /** Called after the listening connection came back (not on the first connect). */
  onReconnect(listener: () => void): () => void {
    this.reconnectListeners.add(listener)
    return () => void this.reconnectListeners.delete(listener)
  }

  /** Opens the listening connection now instead of at the first subscribe. */
  async start(): Promise<void> {
    await this.connection()
  }

  async publish(channel: string, message: string): Promise<void> {
    if (this.closed) throw new Error('PostgresPubSub is closed')
    checkNotifyMessage(message)
    await new Promise<void>((resolve, reject) => {
      this.queue.push({ channel: pgChannelName(channel), message, resolve, reject })
      this.sendBatches()
    })
  }

  /**
   * Sends what is queued, one statement per free publishing connection. A batch stops before a
   * repeated channel and message: PostgreSQL folds identical notifications of one transaction into one.
   */
  private sendBatches(): void {
    while (this.publishing < this.publishConnections && this.queue.length > 0) {
      const seen = new Set<string>()
      let n = 0
      for (const p of this.queue) {
        const key = `${p.channel}\u0000${p.message}`
        if (n === MAX_PUBLISH_BATCH || seen.has(key)) break
        seen.add(key)
        n++
      }
      const batch = this.queue.splice(0, n)
      this.publishing++
      // A named (prepared) statement: parsed and planned once per connection.
      this.pool.query({ name: 'parley_notify', text: NOTIFY_BATCH, values: [batch.map((p) => p.channel), batch.map((p) => p.message)] })
        .then(() => batch.forEach((p) => p.resolve()), (err: unknown) => batch.forEach((p) => p.reject(err)))
        .finally(() => {
          this.publishing--
          this.sendBatches()
        })
    }
  }

  /**
   * Across instances a notification stays asynchronous (LISTEN/NOTIFY); this instance's own subscribers of an
   * append's notification are served here, right after the commit, so the write answers after its local streams
   * have sent the signal, as on MemoryPubSub.
   */
  async deliverLocally(channel: string, message: string): Promise<void> {
    const name = pgChannelName(channel)
    const set = this.channels.get(name)
    if (!set || this.closed) return
    if (this.echoes.size >= MAX_PENDING_ECHOES) this.echoes.delete(this.echoes.values().next().value!)
    this.echoes.add(`${name}\u0000${message}`)
    await deliverLocal([...set].map((s) => s.handler), message, this.deliveryWaitMs)
  }

  async subscribe(channel: string, handler: PubSubHandler): Promise<() => Promise<void>> {
    if (this.closed) throw new Error('PostgresPubSub is closed')
    const name = pgChannelName(channel)
    const subscription: Subscription = { handler }
    let set = this.channels.get(name)
    if (!set) this.channels.set(name, (set = new Set()))
    set.add(subscription)
    const unsubscribe = async () => {
      const current = this.channels.get(name)
      if (!current?.delete(subscription)) return
      if (current.size > 0) return
      this.channels.delete(name)
      const client = this.client
      if (client && !this.closed) await this.command(client, `UNLISTEN ${quote(name)}`).catch(() => {})
    }
    try {
      await this.listen(name)
    } catch (err) {
      await unsubscribe()
      throw err
    }
    return unsubscribe
  }

  /** Number of live subscriptions, for tests and metrics. */
  subscriptionCount(): number {
    let n = 0
    for (const set of this.channels.values()) n += set.size
    return n
  }

  /** The channels the listening connection LISTENs to right now, as PostgreSQL reports them (diagnostics). */
  async listeningChannels(): Promise<string[]> {
    const client = await this.connection()
    const { rows } = await this.command<{ name: string }>(client, 'SELECT pg_listening_channels() AS name')
    return rows.map((r) => r.name).sort()
  }

  async close(): Promise<void> {
    if (this.closed) return
    this.closed = true
    for (const p of this.queue.splice(0)) p.reject(new Error('PostgresPubSub is closed'))
    this.channels.clear()
    this.reconnectListeners.clear()
    this.wake?.()
    const client = this.client
    this.client = undefined
    await Promise.all([client?.end().catch(() => {}), this.pool.end().catch(() => {})])
  }

  /** The listening connection's commands, one after the other: pg deprecates a query sent while the client runs another. */
  private commands: Promise<unknown> = Promise.resolve()

  private command<R extends pg.QueryResultRow>(client: pg.Client, text: string): Promise<pg.QueryResult<R>> {
    const run = () => client.query<R>(text)
    const result = this.commands.then(run, run)
    this.commands = result.catch(() => {})
    return result
  }

  /** Makes sure the listening connection LISTENs to `name` before subscribe() resolves. */
  private async listen(name: string): Promise<void> {
    const deadline = Date.now() + this.subscribeTimeoutMs
    for (;;) {
      const client = await this.withDeadline(this.connection(), deadline)
      // Commands on the connection run in order, so a second subscriber of the channel waits
      // behind the first one's LISTEN; repeating LISTEN is a no-op for PostgreSQL.
      try {
        await this.command(client, `LISTEN ${quote(name)}`)
        return
      } catch (err) {
        if (this.closed) throw new Error('PostgresPubSub is closed')
        if (Date.now() > deadline) throw err
        // The connection died under us: the next one LISTENs to every registered channel.
        this.lost(client, err instanceof Error ? err : new Error(String(err)))
      }
    }
  }

  private async withDeadline<T>(promise: Promise<T>, deadline: number): Promise<T> {
    let timer: NodeJS.Timeout | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error('PostgreSQL pub/sub is not connected (LISTEN connection down)')), Math.max(0, deadline - Date.now()))
    })
    try {
      return await Promise.race([promise, timeout])
    } finally {
      clearTimeout(timer)
    }
  }

  private connection(): Promise<pg.Client> {
    if (this.closed) return Promise.reject(new Error('PostgresPubSub is closed'))
    if (this.client) return Promise.resolve(this.client)
    this.connecting ??= this.connectLoop().finally(() => {
      this.connecting = undefined
    })
    return this.connecting
  }

  private async connectLoop(): Promise<pg.Client> {
    let delay = this.initialDelayMs
    for (;;) {
      if (this.closed) throw new Error('PostgresPubSub is closed')
      const client = new pg.Client({ connectionString: this.options.url, keepAlive: true, application_name: 'parley-listen' })
      let failed: Error | undefined
      client.on('error', (err) => {
        failed = err
        this.lost(client, err)
      })
      client.on('end', () => this.lost(client, new Error('PostgreSQL pub/sub connection ended')))
      client.on('notification', (n) => this.deliver(n.channel, n.payload ?? ''))
      try {
        await client.connect()
        const names = [...this.channels.keys()]
        if (names.length > 0) await client.query(names.map((name) => `LISTEN ${quote(name)}`).join('; '))
        if (failed) throw failed
        if (this.closed) {
          await client.end().catch(() => {})
          throw new Error('PostgresPubSub is closed')
        }
        this.client = client
        const reconnected = this.everConnected
        this.everConnected = true
        if (reconnected) {
          for (const listener of [...this.reconnectListeners]) {
            try {
              listener()
            } catch {
              // a failing listener must not stop the others
            }
          }
        }
        return client
      } catch (err) {
        await client.end().catch(() => {})
        if (this.closed) throw new Error('PostgresPubSub is closed')
        this.options.onError?.(err instanceof Error ? err : new Error(String(err)))
        await this.sleep(delay + Math.floor(Math.random() * delay * 0.2))
        delay = Math.min(delay * 2, this.maxDelayMs)
      }
    }
  }

  /** The listening connection failed or ended: forget it and reconnect (in the background). */
  private lost(client: pg.Client, err: Error): void {
    if (this.client !== client) return
    this.client = undefined
    if (this.closed) return
    this.options.onError?.(err)
    client.end().catch(() => {})
    void this.connection().catch(() => {})
  }

  private deliver(name: string, payload: string): void {
    if (this.echoes.size > 0 && this.echoes.delete(`${name}\u0000${payload}`)) return
    const set = this.channels.get(name)
    if (!set) return
    // Nobody waits here (the writer may be another instance or already answered).
    callHandlers([...set].map((s) => s.handler), payload)
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms)
      function done() {
        clearTimeout(timer)
        resolve()
      }
      this.wake = done
    })
  }
}

/** Channel names are our own hex digests; quoting keeps them exact anyway. */
function quote(identifier: string): string {
  return `"${identifier.replaceAll('"', '""')}"`
}
