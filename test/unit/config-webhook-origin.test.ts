import { describe, expect, it } from 'vitest'
import { loadConfig } from '../../src/config.js'

describe('config: PARLEY_WEBHOOK_PUBLIC_URL', () => {
  it('is unset by default (webhooks on publicUrl), and taken without its trailing slash', () => {
    expect(loadConfig({}).webhookPublicUrl).toBeUndefined()
    expect(loadConfig({ PARLEY_PUBLIC_URL: 'https://parley.example.com', PARLEY_WEBHOOK_PUBLIC_URL: 'https://hooks.example.com/' }).webhookPublicUrl).toBe('https://hooks.example.com')
    // Another port of the same name is another origin (and another Host).
    expect(loadConfig({ PORT: '3000', PARLEY_WEBHOOK_PUBLIC_URL: 'http://127.0.0.1:3001' }).webhookPublicUrl).toBe('http://127.0.0.1:3001')
  })

  it('refuses what is not an http(s) URL of another host than publicUrl', () => {
    expect(() => loadConfig({ PARLEY_WEBHOOK_PUBLIC_URL: 'hooks.example.com' })).toThrow(/not a valid URL/)
    expect(() => loadConfig({ PARLEY_WEBHOOK_PUBLIC_URL: 'ftp://hooks.example.com' })).toThrow(/http:\/\/ or https:\/\//)
    expect(() => loadConfig({ PARLEY_WEBHOOK_PUBLIC_URL: 'https://u:p@hooks.example.com' })).toThrow(/credentials/)
    expect(() => loadConfig({ PARLEY_PUBLIC_URL: 'https://parley.example.com', PARLEY_WEBHOOK_PUBLIC_URL: 'https://parley.example.com/hooks' })).toThrow(/another host/)
    expect(() => loadConfig({ PORT: '3000', PARLEY_WEBHOOK_PUBLIC_URL: 'http://127.0.0.1:3000' })).toThrow(/another host/)
  })
})
