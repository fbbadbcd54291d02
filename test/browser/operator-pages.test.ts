/**
 * The operator pages in Chromium: `/` (version, links to the API reference, health, metrics) and `/docs` (Swagger UI
 * on /openapi.json, its files served by Parley from swagger-ui-dist under a strict CSP: nothing from another host),
 * each with a screenshot and an axe-core check (no serious or critical violation).
 */
import { readFileSync } from 'node:fs'
import { afterAll, beforeAll, expect, it } from 'vitest'
import type { Browser } from 'playwright-core'
import { startParley, type Harness } from '../helpers/harness.js'
import { seriousViolations } from './axe.js'
import { artifactPath, describeBrowser, launchBrowser, watchErrors } from './browser.js'

describeBrowser('operator pages in Chromium', () => {
  let h: Harness
  let browser: Browser

  beforeAll(async () => {
    ;[h, browser] = await Promise.all([startParley({ listen: true }), launchBrowser()])
  })
  afterAll(async () => {
    await browser?.close()
    await h?.close()
  })

  for (const width of [1024, 375]) {
    it(`GET / at ${width} px: version and links that work; accessible`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 800 }, bypassCSP: false })
      const page = await context.newPage()
      const errors = watchErrors(page)
      const outside: string[] = []
      page.on('request', (r) => void (new URL(r.url()).origin !== h.baseUrl && outside.push(r.url())))
      try {
        const res = await page.goto(`${h.baseUrl}/`)
        expect(res!.status()).toBe(200)
        expect(res!.headers()['content-security-policy']).toContain("default-src 'none'")
        const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version
        expect(await page.locator('p.version').textContent()).toContain(version)
        for (const [name, path] of [['API reference', '/docs'], ['OpenAPI description', '/openapi.json'], ['Liveness', '/healthz'], ['Metrics', '/metrics']]) {
          const href = await page.getByRole('link', { name: name! }).getAttribute('href')
          expect(new URL(href!, `${h.baseUrl}/`).pathname).toBe(path)
          expect((await fetch(new URL(href!, `${h.baseUrl}/`))).status).toBe(200)
        }
        await page.screenshot({ path: artifactPath(`operator-home-${width}.png`), fullPage: true })
        expect(await seriousViolations(page)).toEqual([])
        expect(outside).toEqual([])
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }
    })

    it(`GET /docs at ${width} px: Swagger UI renders /openapi.json from Parley's own files; accessible`, async () => {
      const context = await browser.newContext({ viewport: { width, height: 900 } })
      const page = await context.newPage()
      const errors = watchErrors(page)
      const outside: string[] = []
      page.on('request', (r) => void (new URL(r.url()).origin !== h.baseUrl && !r.url().startsWith('data:') && outside.push(r.url())))
      try {
        const res = await page.goto(`${h.baseUrl}/docs`)
        expect(res!.status()).toBe(200)
        expect(res!.headers()['content-security-policy']).toContain("script-src 'self'")
        // The spec's tags, collapsed (with every tag open at once, Swagger UI 5.35 stopped rendering after the ninth of
        // ~200 operations: the failure this guards against); opening the Admin API's tag renders each of its operations
        const spec = await (await fetch(`${h.baseUrl}/openapi.json`)).json() as { paths: Record<string, Record<string, { tags?: string[] }>> }
        const admin = Object.values(spec.paths).flatMap((ops) => Object.values(ops)).filter((op) => op.tags?.includes('admin'))
        await page.locator('.opblock-tag', { hasText: 'admin' }).first().waitFor({ timeout: 20_000 })
        await expect.poll(() => page.locator('.info .title').textContent()).toContain('Parley')
        expect(await page.locator('.opblock').count()).toBe(0)
        await page.locator('.opblock-tag', { hasText: 'admin' }).first().click()
        await page.locator('.opblock', { hasText: '/v1/admin/bots' }).first().waitFor({ timeout: 20_000 })
        await expect.poll(() => page.locator('.opblock').count(), { timeout: 20_000 }).toBe(admin.length)
        await page.screenshot({ path: artifactPath(`operator-docs-${width}.png`) })
        expect(await seriousViolations(page)).toEqual([])
        expect(outside).toEqual([])
        expect(errors).toEqual([])
      } finally {
        await context.close()
      }
    })
  }

  it('/docs/assets serves only its own files', async () => {
    expect((await fetch(`${h.baseUrl}/docs/assets/swagger-ui-bundle.js`)).status).toBe(200)
    const res = await fetch(`${h.baseUrl}/docs/assets/package.json`)
    expect(res.status).toBe(404)
    expect(await res.json()).toMatchObject({ code: 404, type: 'ResourceNotFound' })
    expect((await fetch(`${h.baseUrl}/docs/assets/..%2Fpackage.json`)).status).toBe(404)
  })
})
