import { setMaxListeners } from 'node:events'
import http from 'node:http'
import https from 'node:https'
import { isHostedUrl } from '../domain/hosted-code.js'
import { OutboundError, type OutboundPolicy } from '../lib/outbound-policy.js'
import { AnswerCut, AnswerTimeout } from './delivery-policy.js'
import type { HostedResolver } from './hosted/hosted-processes.js'

/**
 * The HTTP requests of deliveries (to bots and integrations served elsewhere, and to hosted code) and the waits
 * between their attempts, all ended together when the instance stops (DeliveryStopped). A request goes only where the
 * outbound policy allows, is never redirected, and reads at most MAX_ANSWER_BYTES of answer; a `parley-hosted:` url
 * is a hosted code process on loopback (src/runtime/hosted/).
 */

/** Largest answer read from a remote bot (an action's output): the Runtime API's 1 MB. */
export const MAX_ANSWER_BYTES = 1024 * 1024

export interface RemoteAnswer { status: number; body: string; headers?: Record<string, string> }

/** The run was stopped (the instance shuts down): nothing is recorded, the event is delivered again after the restart. */
export class DeliveryStopped extends Error {
  constructor() {
    super('The instance is stopping')
  }
}

export class OutboundHttp {
  private readonly stopping = new AbortController()
  private readonly agents: { 'http:': http.Agent; 'https:': https.Agent }

  /**
   * `outbound`: where requests may connect (config.outbound), checked on IP-literal hosts in send, on resolved names by
   * the agents' lookup. `hosted`: the processes of deployed bundles (a `parley-hosted:` url is theirs).
   */
  constructor(private readonly outbound: OutboundPolicy, private readonly hosted: HostedResolver | undefined) {
    // The checked resolver on the agents: every new connection is made to an address the policy allows (at connect
    // time, so a name that resolves elsewhere later is checked again). Answers are never followed (no redirects).
    const { lookup } = this.outbound
    this.agents = { 'http:': new http.Agent({ keepAlive: true, lookup }), 'https:': new https.Agent({ keepAlive: true, lookup }) }
    // One listener per request or wait in progress (bounded by the slot settings).
    setMaxListeners(0, this.stopping.signal)
  }

  /** Ends waits and requests in progress. */
  stop(): void {
    this.stopping.abort()
    this.agents['http:'].destroy()
    this.agents['https:'].destroy()
  }

  /**
   * One request (the answer's headers included); rejects on a network error, the timeout or a target the outbound
   * policy refuses (OutboundRefused, before connecting), resolves with any status (a redirect is not followed).
   * Tell a rejection with outboundFailure(err) and an answer with its status: never with the target's body.
   */
  send(method: string, url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<RemoteAnswer> {
    return isHostedUrl(url) ? this.sendHosted(method, url, headers, body, timeoutMs) : this.sendTo(method, url, headers, body, timeoutMs, true)
  }

  /** A request to hosted code: its process (started if need be, before the request's own time starts) on loopback. */
  private async sendHosted(method: string, url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<RemoteAnswer> {
    if (!this.hosted) throw new OutboundError('hosted code is not run by this instance')
    if (this.stopping.signal.aborted) throw new DeliveryStopped()
    const target = await this.hosted.resolve(url)
    try {
      return await this.sendTo(method, target.url, { ...headers, ...target.headers }, body, timeoutMs, false)
    } catch (err) {
      // The process ended during the request (a crash, a limit): its code had the request, so it is not sent again
      // (sent again, a message that crashes its bot would crash it on every attempt).
      if (!(err instanceof OutboundError) && !(err instanceof DeliveryStopped) && await target.ended()) {
        throw new OutboundError('its hosted process ended while handling the request (its logs say why)')
      }
      throw err
    } finally {
      target.release()
    }
  }

  private sendTo(method: string, url: string, headers: Record<string, string>, body: string, timeoutMs: number, checked: boolean): Promise<RemoteAnswer> {
    return new Promise((resolve, reject) => {
      if (this.stopping.signal.aborted) return reject(new DeliveryStopped())
      const target = new URL(url)
      try {
        // An IP-literal host is connected to without a lookup: checked here (a name is checked by the agent's lookup).
        if (checked) this.outbound.checkHost(target.hostname)
      } catch (err) {
        return reject(err)
      }
      const transport = target.protocol === 'https:' ? https : http
      let settled = false
      let answering = false
      const done = (fn: () => void) => {
        if (settled) return
        settled = true
        clearTimeout(timer)
        this.stopping.signal.removeEventListener('abort', onStop)
        fn()
      }
      const req = transport.request(target, {
        method,
        agent: this.agents[target.protocol as 'http:' | 'https:'],
        ...(checked && { lookup: this.outbound.lookup }),
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
      }, (res) => {
        answering = true
        const chunks: Buffer[] = []
        let size = 0
        res.on('data', (chunk: Buffer) => {
          size += chunk.length
          if (size <= MAX_ANSWER_BYTES) chunks.push(chunk)
          else {
            req.destroy()
            done(() => reject(new OutboundError(`the answer is larger than ${MAX_ANSWER_BYTES} bytes`)))
          }
        })
        res.on('end', () => done(() => resolve({
          status: res.statusCode ?? 0,
          body: Buffer.concat(chunks).toString('utf8'),
          headers: Object.fromEntries(Object.entries(res.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(', ') : v ?? ''])),
        })))
        // Cut during the answer: the bot's code got the request (not retried).
        res.on('error', () => done(() => reject(new AnswerCut())))
      })
      const timer = setTimeout(() => {
        req.destroy()
        done(() => reject(new AnswerTimeout(timeoutMs)))
      }, timeoutMs)
      const onStop = () => {
        req.destroy()
        done(() => reject(new DeliveryStopped()))
      }
      this.stopping.signal.addEventListener('abort', onStop, { once: true })
      req.on('error', (err) => done(() => reject(answering ? new AnswerCut() : err)))
      req.end(body)
    })
  }

  /** Waits `ms`; rejects with DeliveryStopped when the instance stops. */
  wait(ms: number): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.stopping.signal.aborted) return reject(new DeliveryStopped())
      const onStop = () => {
        clearTimeout(timer)
        reject(new DeliveryStopped())
      }
      const timer = setTimeout(() => {
        this.stopping.signal.removeEventListener('abort', onStop)
        resolve()
      }, ms)
      this.stopping.signal.addEventListener('abort', onStop, { once: true })
    })
  }

}
