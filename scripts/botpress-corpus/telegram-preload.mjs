// Preload (node --import) for Botpress's Telegram integration: its code (through telegraf) calls
// https://api.telegram.org/bot<token>/<method>; this sends those requests to the fake Bot API at
// TELEGRAM_FAKE_URL (plain http on loopback) without changing the integration's code. Other hosts are untouched.
import http from 'node:http'
import https from 'node:https'

const fake = new URL(process.env.TELEGRAM_FAKE_URL ?? 'http://127.0.0.1:1')
const HOST = 'api.telegram.org'

const isTelegram = (o) => o && typeof o === 'object' && (o.hostname === HOST || o.host === HOST || o.host === `${HOST}:443`)
const redirect = (o) => ({ ...o, protocol: 'http:', hostname: fake.hostname, host: fake.hostname, port: fake.port, agent: undefined, servername: undefined })

for (const name of ['request', 'get']) {
  const original = https[name]
  https[name] = function (...args) {
    if (args[0] instanceof URL || typeof args[0] === 'string') {
      const u = new URL(String(args[0]))
      if (u.hostname === HOST) {
        const options = typeof args[1] === 'object' && typeof args[1] !== 'function' ? args[1] : {}
        const rest = options === args[1] ? args.slice(2) : args.slice(1)
        return http[name](redirect({ ...options, path: u.pathname + u.search, method: options.method ?? 'GET' }), ...rest)
      }
    } else if (isTelegram(args[0])) {
      return http[name](redirect(args[0]), ...args.slice(1))
    }
    return original.apply(this, args)
  }
}
