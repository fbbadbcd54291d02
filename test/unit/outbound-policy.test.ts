/**
 * The outbound policy (src/lib/outbound-policy.ts): address forms, ranges, allow over deny, the defaults, and the
 * checked resolver. The end-to-end cases (a bot's and an integration's url) are in test/security/outbound-*.test.ts.
 */
import { isIP } from 'node:net'
import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'
import { OutboundPolicy, OutboundRefused, outboundFailure, parseAddress, parseRange, parseRanges } from '../../src/lib/outbound-policy.js'

const v4 = (a: number, b: number, c: number, d: number) => (0xffffn << 32n) | BigInt(((a << 24) >>> 0) + (b << 16) + (c << 8) + d)

describe('outbound policy: addresses', () => {
  it('reads every IPv4 form a URL parser or resolver accepts as the same address', () => {
    const loopback = v4(127, 0, 0, 1)
    for (const form of ['127.0.0.1', '2130706433', '0x7f000001', '0X7F000001', '0177.0.0.1', '0x7f.0.0.1', '127.1', '127.0.1', '[::ffff:127.0.0.1]', '::ffff:7f00:1']) {
      expect(parseAddress(form), form).toBe(loopback)
    }
    expect(parseAddress('169.254.169.254')).toBe(v4(169, 254, 169, 254))
    expect(parseAddress('::ffff:169.254.169.254')).toBe(v4(169, 254, 169, 254))
  })

  it('reads IPv6 with ::, zones and brackets; refuses what is not an address', () => {
    expect(parseAddress('::1')).toBe(1n)
    expect(parseAddress('[fe80::1%eth0]')).toBe((0xfe80n << 112n) | 1n)
    expect(parseAddress('fd00::')).toBe(0xfd00n << 112n)
    for (const bad of ['localhost', 'example.com', '256.0.0.1', '1.2.3.4.5', '1..2', '0x1g', '08.0.0.1', ':::', '1::2::3', '12345::', '1:2:3:4:5:6:7:8:9', '::ffff:1.2.3.256', '']) {
      expect(parseAddress(bad), bad).toBeUndefined()
    }
  })

  it('agrees with node on every dotted IPv4 and canonical IPv6 (property)', () => {
    fc.assert(fc.property(fc.ipV4(), (ip) => {
      const [a, b, c, d] = ip.split('.').map(Number) as [number, number, number, number]
      expect(parseAddress(ip)).toBe(v4(a, b, c, d))
      // The decimal and hex forms of the same address.
      const n = ((a << 24) >>> 0) + (b << 16) + (c << 8) + d
      expect(parseAddress(String(n))).toBe(v4(a, b, c, d))
      expect(parseAddress(`0x${n.toString(16)}`)).toBe(v4(a, b, c, d))
    }))
    // Every inet_aton form (decimal, hex, octal, 1 to 4 parts) is the address the URL parser makes of it.
    fc.assert(fc.property(fc.ipV4Extended(), (ip) => {
      expect(parseAddress(ip)).toBe(parseAddress(new URL(`http://${ip}/`).hostname))
    }))
    fc.assert(fc.property(fc.ipV6(), (ip) => {
      expect(isIP(ip)).toBe(6)
      expect(parseAddress(ip)).not.toBeUndefined()
    }))
  })

  it('reads ranges: CIDRs of both families, one address, and named groups', () => {
    expect(parseRange('10.0.0.0/8')?.bits).toBe(104)
    expect(parseRange('fd00::/8')?.bits).toBe(8)
    expect(parseRange('192.0.2.7')?.bits).toBe(128)
    for (const bad of ['10.0.0.0/33', '::/129', '10.0.0.0/', '10/8/1', 'x/8', '10.0.0.0/-1']) expect(parseRange(bad), bad).toBeUndefined()
    expect(parseRanges('loopback, 10.0.0.0/8  fd00::/8', 'S').length).toBe(4)
    expect(() => parseRanges('10.0.0.0/8,nope', 'PARLEY_OUTBOUND_DENY')).toThrow(/PARLEY_OUTBOUND_DENY: "nope" is not an address range/)
  })
})

describe('outbound policy: evaluation', () => {
  const defaults = new OutboundPolicy()

  it('denies link-local, metadata, this-network, multicast and reserved by default, in every form', () => {
    for (const denied of ['169.254.169.254', '2852039166', '0xa9fea9fe', '::ffff:169.254.169.254', '::ffff:a9fe:a9fe', 'fe80::1', 'fd00:ec2::254', '100.100.100.200', '168.63.129.16', '0.0.0.0', '0', '224.0.0.1', '255.255.255.255', '::', 'ff02::1', '64:ff9b::169.254.169.254', '64:ff9b::a9fe:a9fe']) {
      expect(defaults.allows(denied), denied).toBe(false)
    }
  })

  it('allows loopback, the private ranges and public addresses by default', () => {
    for (const allowed of ['127.0.0.1', '2130706433', '0x7f000001', '::1', '10.1.2.3', '172.16.0.1', '192.168.1.1', 'fd00::', '8.8.8.8', '2606:4700::1111', '64:ff9b::808:808']) {
      expect(defaults.allows(allowed), allowed).toBe(true)
    }
  })

  it('the setting adds to the defaults, and allow overrides deny', () => {
    const config = loadConfig({ PARLEY_OUTBOUND_DENY: 'loopback,private', PARLEY_OUTBOUND_ALLOW: '127.0.0.2/32 169.254.169.254' })
    const policy = config.outbound
    for (const denied of ['127.0.0.1', '2130706433', '0x7f000001', '::1', '::ffff:127.0.0.1', '10.0.0.1', '172.31.255.255', '192.168.0.1', 'fd00::', 'fc00::1', '169.254.1.1']) {
      expect(policy.allows(denied), denied).toBe(false)
    }
    for (const allowed of ['127.0.0.2', '169.254.169.254', '::ffff:169.254.169.254', '172.32.0.1', '8.8.8.8']) expect(policy.allows(allowed), allowed).toBe(true)
  })

  it('a bad setting stops the start with a message naming it', () => {
    expect(() => loadConfig({ PARLEY_OUTBOUND_ALLOW: '10.0.0.0/99' })).toThrow(/PARLEY_OUTBOUND_ALLOW: "10.0.0.0\/99"/)
  })

  it('checkHost refuses denied IP literals and leaves names to the resolver', () => {
    expect(() => defaults.checkHost('169.254.169.254')).toThrow(OutboundRefused)
    expect(() => defaults.checkHost('[::ffff:a9fe:a9fe]')).toThrow(OutboundRefused)
    expect(defaults.checkHost('127.0.0.1')).toBe('address')
    expect(defaults.checkHost('metadata.google.internal')).toBe('name')
  })

  it('the checked resolver drops denied addresses and refuses a name with none left', async () => {
    const noLoopback = OutboundPolicy.fromSettings(undefined, 'loopback')
    const resolve = (policy: OutboundPolicy, all: boolean) => new Promise<unknown>((ok, fail) => {
      policy.lookup('localhost', { all }, (err, address) => (err ? fail(err) : ok(address)))
    })
    await expect(resolve(noLoopback, false)).rejects.toBeInstanceOf(OutboundRefused)
    await expect(resolve(noLoopback, true)).rejects.toBeInstanceOf(OutboundRefused)
    expect(await resolve(defaults, false)).toMatch(/^(127\.0\.0\.1|::1)$/)
    expect(Array.isArray(await resolve(defaults, true))).toBe(true)
  })

  it('failures are told by a short reason, never by their text', () => {
    expect(outboundFailure(new OutboundRefused())).toBe('address not allowed by the outbound policy')
    expect(outboundFailure(Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:6379'), { code: 'ECONNREFUSED' }))).toBe('connection refused')
    expect(outboundFailure(new Error('secret body'))).toBe('network error')
  })
})
