import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import type { Page } from 'playwright-core'

const AXE = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8')

/** axe-core's serious and critical violations on the page (injected from node_modules/axe-core). */
export async function seriousViolations(page: Page): Promise<{ id: string; impact: string; nodes: number; sample: string[] }[]> {
  // Evaluated through the DevTools protocol: the page's CSP (no inline script) stays as served.
  await page.evaluate(AXE)
  const result = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: { run(): Promise<{ violations: { id: string; impact: string; nodes: unknown[] }[] }> } }).axe
    return (await axe.run()).violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.length, sample: (v.nodes as { html: string; failureSummary?: string }[]).slice(0, 3).map((n) => n.html.slice(0, 200) + ' :: ' + (n.failureSummary ?? '').slice(0, 200)) }))
  })
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical')
}
