import { errors } from '../lib/errors.js'
import { OutboundPolicy, OutboundRefused } from '../lib/outbound-policy.js'

/**
 * The url of a service Parley calls: a remote bot (BotService) or an integration served elsewhere
 * (IntegrationService). Its own module so that neither service imports the other for it.
 */
export const MAX_SERVICE_URL_LENGTH = 2048

/** The built-in outbound policy, for a service built without one (the composition root passes the configured one). */
export const DEFAULT_OUTBOUND = new OutboundPolicy()

/**
 * A remote bot's or an integration's url: an absolute http: or https: URL without credentials, at most
 * MAX_SERVICE_URL_LENGTH characters, whose host, when it is an IP address (in any form), is allowed by `outbound`.
 * A host name is checked on the address it resolves to, each time Parley connects (src/lib/outbound-policy.ts).
 */
export function checkServiceUrl(url: string | null | undefined, outbound: OutboundPolicy = DEFAULT_OUTBOUND): string | null | undefined {
  if (url === undefined || url === null) return url
  if (typeof url !== 'string' || url.length === 0) throw errors.invalidPayload('url must be an http: or https: URL, or null')
  if (url.length > MAX_SERVICE_URL_LENGTH) throw errors.invalidPayload(`url is longer than ${MAX_SERVICE_URL_LENGTH} characters`)
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    throw errors.invalidPayload('url is not a valid absolute URL (expected http://host[:port]/path or https://…)')
  }
  if (parsed.protocol !== 'http:' && parsed.protocol !== 'https:') throw errors.invalidPayload(`url must use http: or https:, not ${parsed.protocol}`)
  if (parsed.username || parsed.password) throw errors.invalidPayload('url must not carry credentials (user:password@); requests are signed with the bot\'s signingSecret instead')
  if (parsed.hash) throw errors.invalidPayload('url must not have a #fragment')
  try {
    outbound.checkHost(parsed.hostname)
  } catch (err) {
    if (!(err instanceof OutboundRefused)) throw err
    throw errors.invalidPayload(`url: the address ${parsed.hostname} is not allowed by this server's outbound policy (link-local and cloud metadata addresses are refused; the operator sets the rest with PARLEY_OUTBOUND_DENY and PARLEY_OUTBOUND_ALLOW)`)
  }
  return parsed.href
}
