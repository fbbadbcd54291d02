#!/usr/bin/env node
// Botpress's own code (bots, integrations, CLI, chat-client e2e suite) run against a Parley, by hand.
// Usage and what each part checks: docs/testing.md, "Botpress's own code".
//
//   BOTPRESS_DIR=<checkout of botpress/botpress at 9ecff3af> node scripts/botpress-corpus/corpus.mjs <part>…
//   parts: build | echo-e2e | hello-world | bugbuster | integrations | deploy | all (= every part but build)
//   PARLEY_URL + PARLEY_TOKEN (+ PARLEY_WORKSPACE_ID): use that Parley; else one is started from this
//   checkout's dist/ (run `npm run build` first) on a free port with a fresh data directory.
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, LOG_DIR, WORK_DIR, log, parley, stopAll } from './lib.mjs'

const PARTS = {
  build: async () => (await import('./build.mjs')).build(),
  'echo-e2e': async (p) => (await import('./echo.mjs')).echoE2e(p),
  'hello-world': async (p) => (await import('./bots.mjs')).helloWorld(p),
  bugbuster: async (p) => (await import('./bots.mjs')).bugbuster(p),
  integrations: async (p) => (await import('./integrations.mjs')).integrations(p),
  deploy: async (p) => (await import('./deploy.mjs')).deploy(p),
}

function table(part, results) {
  const width = Math.min(70, Math.max(...results.map((r) => r.name.length)))
  const lines = results.map((r) => `${r.ok ? 'pass' : 'FAIL'}  ${r.name.padEnd(width)}  ${r.detail ?? ''}`.trimEnd())
  const passed = results.filter((r) => r.ok).length
  return [`== ${part}: ${passed}/${results.length} passed`, ...lines].join('\n')
}

async function main() {
  let parts = process.argv.slice(2)
  if (parts.length === 0 || parts.some((x) => x !== 'all' && !PARTS[x])) {
    console.error(`usage: node scripts/botpress-corpus/corpus.mjs ${Object.keys(PARTS).join('|')}|all …`)
    process.exit(2)
  }
  if (parts.includes('all')) parts = Object.keys(PARTS).filter((x) => x !== 'build')
  log(`BOTPRESS_DIR=${BOTPRESS_DIR} work=${WORK_DIR} logs=${LOG_DIR}`)
  const summary = []
  let p
  for (const part of parts) {
    let results
    try {
      if (part !== 'build' && !p) p = await parley()
      results = await PARTS[part](p)
    } catch (e) {
      results = [{ name: part, ok: false, detail: `aborted: ${String(e?.stack ?? e).split('\n').slice(0, 3).join(' | ').slice(0, 400)}` }]
    }
    summary.push(table(part, results))
    console.log(summary.at(-1))
  }
  await stopAll()
  const text = `\n${'='.repeat(30)} summary ${'='.repeat(30)}\n${summary.join('\n\n')}\n`
  writeFileSync(join(LOG_DIR, 'summary.txt'), text)
  console.log(text)
}

main().catch(async (e) => { console.error(e); await stopAll(); process.exit(1) })
