import dns from 'node:dns'
import type { LookupFunction } from 'node:net'
import { errors, type ApiError } from './errors.js'

/**
 * Where Parley may connect when it calls a url a workspace member set (a remote bot's or an integration's `url`):
 * the outbound policy (README "Outbound requests"; PARLEY_OUTBOUND_DENY / PARLEY_OUTBOUND_ALLOW in src/config.ts).
 *
 * An address is allowed when it is in an ALLOW range, or in no DENY range; DENY is the built-in list (link-local and
 * cloud metadata addresses, "this network", multicast, reserved) plus the operator's. Loopback and the private
 * ranges are allowed by default (a bot served on the same machine or network is the common self-hosted case);
 * an operator whose members do not all share the host denies them (`PARLEY_OUTBOUND_DENY=loopback,private`).
 *
 * It is checked on the address actually connected to: `lookup` is the resolver the HTTP agents use, so a name is
 * checked on what it resolves to at connect time (a name that resolved to an allowed address when the url was set
 * and to a denied one later — DNS rebinding — is refused), and `checkHost` covers IP-literal hosts (the resolver is
 * not called for them). Addresses are compared in one 128-bit space: an IPv4 address is its IPv4-mapped IPv6
 * address (::ffff:a.b.c.d), so `::ffff:169.254.169.254` is 169.254.169.254 for every rule.
 */

/** The message of every refusal (the same for every denied address: nothing about the target is told). */
export const OUTBOUND_REFUSED = 'address not allowed by the outbound policy'

/** A failure of an outbound request whose message is Parley's own (safe to show: nothing of the target's answer). */
export class OutboundError extends Error {}

/** A connection refused by the policy, before any packet was sent to the target. */
export class OutboundRefused extends OutboundError {
  readonly code = 'EOUTBOUNDPOLICY'
  constructor() {
    super(OUTBOUND_REFUSED)
  }
}

const MAPPED = 0xffffn << 32n
/** The NAT64 well-known prefix 64:ff9b::/96, shifted right by 32 bits. */
const NAT64 = 0x64ff9bn << 64n

/**
 * An IP address as a 128-bit number (IPv4 as IPv4-mapped IPv6); undefined when `text` is not one. IPv4 in every
 * form inet_aton reads (what URL parsers and resolvers accept): 1 to 4 parts, each decimal, 0x-hex or 0-octal
 * (`2130706433`, `0x7f000001`, `0177.0.0.1`, `127.1`); IPv6 with `::`, an embedded IPv4 tail, brackets and a
 * zone (`[fe80::1%eth0]`).
 */
export function parseAddress(text: string): bigint | undefined {
  let s = text.trim()
  if (s.startsWith('[') && s.endsWith(']')) s = s.slice(1, -1)
  if (s.includes(':')) return parseV6(s.replace(/%.*$/, ''))
  const v4 = parseV4(s)
  return v4 === undefined ? undefined : MAPPED | v4
}

function parseV4(s: string): bigint | undefined {
  const parts = s.split('.')
  if (parts.length > 4 || parts.some((p) => p === '')) return undefined
  const values: number[] = []
  for (const p of parts) {
    const n = /^0x[0-9a-f]*$/i.test(p) ? (p.length === 2 ? 0 : parseInt(p.slice(2), 16))
      : /^0[0-7]*$/.test(p) ? parseInt(p, 8)
      : /^[1-9][0-9]*$/.test(p) ? Number(p) : NaN
    if (!Number.isSafeInteger(n)) return undefined
    values.push(n)
  }
  const last = values.pop()!
  if (values.some((v) => v > 255) || last >= 256 ** (4 - values.length)) return undefined
  let out = 0n
  for (const v of values) out = (out << 8n) | BigInt(v)
  return (out << BigInt(8 * (4 - values.length))) | BigInt(last)
}

function parseV6(s: string): bigint | undefined {
  let tail: bigint | undefined
  const lastColon = s.lastIndexOf(':')
  if (s.slice(lastColon + 1).includes('.')) {
    // An embedded IPv4 address (::ffff:1.2.3.4): strict dotted quad only.
    const quad = s.slice(lastColon + 1).split('.')
    if (quad.length !== 4 || quad.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined
    tail = quad.reduce((acc, p) => (acc << 8n) | BigInt(Number(p)), 0n)
    s = `${s.slice(0, lastColon + 1)}0:0`
  }
  const halves = s.split('::')
  if (halves.length > 2) return undefined
  const groups = (h: string) => (h === '' ? [] : h.split(':'))
  const head = groups(halves[0]!)
  const rest = halves.length === 2 ? groups(halves[1]!) : []
  const missing = 8 - head.length - rest.length
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill('0'), ...rest]
  let out = 0n
  for (const g of all) {
    if (!/^[0-9a-f]{1,4}$/i.test(g)) return undefined
    out = (out << 16n) | BigInt(parseInt(g, 16))
  }
  if (tail !== undefined) out = (out & ~0xffffffffn) | tail
  return out
}

/** A range of addresses: the first `bits` bits of `base` (128-bit space). */
export interface AddressRange { text: string; base: bigint; bits: number }

/** `a.b.c.d/n`, `x::y/n`, or one address (a /32 or /128); undefined when `text` is neither. */
export function parseRange(text: string): AddressRange | undefined {
  const [addr, prefix, extra] = text.trim().split('/')
  if (extra !== undefined || addr === undefined) return undefined
  const base = parseAddress(addr)
  if (base === undefined) return undefined
  const v4 = !addr.includes(':')
  const max = v4 ? 32 : 128
  if (prefix !== undefined && !/^\d{1,3}$/.test(prefix)) return undefined
  const n = prefix === undefined ? max : Number(prefix)
  if (n > max) return undefined
  const bits = v4 ? 96 + n : n
  return { text: text.trim(), base: base & mask(bits), bits }
}

const mask = (bits: number) => (bits === 0 ? 0n : ((1n << 128n) - 1n) ^ ((1n << BigInt(128 - bits)) - 1n))
const inRange = (address: bigint, r: AddressRange) => (address & mask(r.bits)) === r.base

/** Names usable in the settings for groups of ranges. */
export const NAMED_RANGES: Readonly<Record<string, readonly string[]>> = {
  loopback: ['127.0.0.0/8', '::1/128'],
  private: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '100.64.0.0/10', 'fc00::/7'],
  'link-local': ['169.254.0.0/16', 'fe80::/10'],
  metadata: ['169.254.169.254/32', 'fd00:ec2::254/128', '100.100.100.200/32', '168.63.129.16/32'],
}

/**
 * Denied whatever the settings add (PARLEY_OUTBOUND_ALLOW can re-open one): link-local (169.254/16, fe80::/10: the
 * cloud metadata services of AWS, GCP, Azure, Oracle…), the other metadata addresses (AWS IPv6 fd00:ec2::254,
 * Alibaba 100.100.100.200, Azure WireServer 168.63.129.16), "this network" 0/8 (0.0.0.0 reaches the local host),
 * the unspecified ::, multicast, reserved 240/4 and broadcast.
 */
export const DEFAULT_DENY: readonly string[] = [
  '0.0.0.0/8', ...NAMED_RANGES['link-local']!, ...NAMED_RANGES.metadata!, '224.0.0.0/4', '240.0.0.0/4', '::/128', 'ff00::/8',
]

/** Ranges from a setting's text: CIDRs, addresses or NAMED_RANGES names, separated by commas or spaces. */
export function parseRanges(text: string, setting: string): AddressRange[] {
  const out: AddressRange[] = []
  for (const item of text.split(/[\s,]+/).filter(Boolean)) {
    const named = NAMED_RANGES[item.toLowerCase()]
    for (const one of named ?? [item]) {
      const range = parseRange(one)
      if (!range) throw new Error(`${setting}: "${item.slice(0, 100)}" is not an address range (expected a CIDR such as 10.0.0.0/8 or fd00::/8, an address, or one of ${Object.keys(NAMED_RANGES).join(', ')})`)
      out.push(range)
    }
  }
  return out
}

export class OutboundPolicy {
  readonly allow: readonly AddressRange[]
  readonly deny: readonly AddressRange[]

  /** `deny` is added to DEFAULT_DENY; `allow` overrides both. */
  constructor(options: { allow?: readonly AddressRange[]; deny?: readonly AddressRange[] } = {}) {
    this.allow = options.allow ?? []
    this.deny = [...DEFAULT_DENY.map((r) => parseRange(r)!), ...(options.deny ?? [])]
  }

  /** The policy of the settings' texts (throws a message naming the setting for a bad entry). */
  static fromSettings(allow: string | undefined, deny: string | undefined): OutboundPolicy {
    return new OutboundPolicy({ allow: parseRanges(allow ?? '', 'PARLEY_OUTBOUND_ALLOW'), deny: parseRanges(deny ?? '', 'PARLEY_OUTBOUND_DENY') })
  }

  /** Whether `address` (any form parseAddress reads) may be connected to; false for what is not an address. */
  allows(address: string): boolean {
    const a = parseAddress(address)
    if (a === undefined) return false
    // An address of the NAT64 prefix (64:ff9b::/96) reaches the IPv4 address in its last 32 bits: both must be allowed.
    const viaNat64 = a >> 32n === NAT64 ? MAPPED | (a & 0xffffffffn) : undefined
    return this.allowsOne(a) && (viaNat64 === undefined || this.allowsOne(viaNat64))
  }

  private allowsOne(a: bigint): boolean {
    return this.allow.some((r) => inRange(a, r)) || !this.deny.some((r) => inRange(a, r))
  }

  /**
   * The host of a URL (`new URL(..).hostname`): an IP literal is checked now (OutboundRefused), a name is left to
   * `lookup` at connect time. Whether it was an IP literal is the answer.
   */
  checkHost(hostname: string): 'address' | 'name' {
    if (parseAddress(hostname) === undefined) return 'name'
    if (!this.allows(hostname)) throw new OutboundRefused()
    return 'address'
  }

  /**
   * The resolver for node:net / node:http (the `lookup` option): dns.lookup, then only the allowed addresses;
   * OutboundRefused when none is. Called with `all` (Happy Eyeballs) or without, as node does.
   */
  readonly lookup: LookupFunction = (hostname, options, callback) => {
    dns.lookup(hostname, { ...options, all: true }, (err, addresses) => {
      if (err) return callback(err, '', 0)
      const allowed = addresses.filter((a) => this.allows(a.address))
      if (allowed.length === 0) return callback(new OutboundRefused() as NodeJS.ErrnoException, '', 0)
      if (options.all) return (callback as unknown as (e: null, all: dns.LookupAddress[]) => void)(null, allowed)
      callback(null, allowed[0]!.address, allowed[0]!.family)
    })
  }
}

/**
 * The short reason of a failed outbound request, for error messages and log lines a lower role can read: never the
 * target's answer body nor the address a name resolved to.
 */
export function outboundFailure(err: unknown): string {
  if (err instanceof OutboundError) return err.message
  const code = (err as { code?: unknown } | undefined)?.code
  switch (code) {
    // Hosted code that cannot take the request now (src/runtime/hosted/hosted-processes.ts): its message says why.
    case 'EHOSTEDCODE': return (err as Error).message
    case 'ECONNREFUSED': return 'connection refused'
    case 'ECONNRESET': case 'EPIPE': return 'connection closed before an answer'
    case 'ETIMEDOUT': case 'ESOCKETTIMEDOUT': return 'timed out'
    case 'ENOTFOUND': case 'EAI_AGAIN': case 'EAI_NODATA': case 'EAI_NONAME': return 'host not found'
    case 'EHOSTUNREACH': case 'ENETUNREACH': return 'host unreachable'
  }
  if (typeof code === 'string' && /^(ERR_TLS|CERT_|DEPTH_|UNABLE_TO|SELF_SIGNED|ERR_SSL)/.test(code)) return 'TLS handshake failed'
  return typeof code === 'string' ? `network error (${code.slice(0, 40)})` : 'network error'
}

/** The short outcome of an answer that was not 2xx: its status only (its body is the target's, never shown). */
export const answeredStatus = (status: number): string => `answered ${status}`

/**
 * The API error of a request that got no answer (`what`: "The integration did not answer …"): 400 Runtime when the
 * policy refused the target (it will not answer until the url or the policy changes), else 504; the short reason only.
 */
export function unansweredError(what: string, err: unknown): ApiError {
  const message = `${what}: ${outboundFailure(err)}`
  return err instanceof OutboundRefused ? errors.runtime(message) : errors.timeout(message)
}
