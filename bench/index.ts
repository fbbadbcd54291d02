/**
 * `npm run bench`: every benchmark in turn, each in its own process (a quiet machine matters more
 * than total time). Each writes its own section of bench/RESULTS.md; a failing one is reported and
 * the rest still run. Pass names to run a subset: `npm run bench -- turns`.
 */
import { spawnSync } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const here = dirname(fileURLToPath(import.meta.url))
/** name → script, in the order they run. */
const BENCHMARKS: Record<string, string> = {
  'create-message': 'run.ts',
  turns: 'turns.ts',
  'turns-client': 'turns-client.ts',
  'remote-bot': 'remote-bot.ts',
  'llm-gateway': 'llm-gateway.ts',
  agent: 'agent.ts',
  integrations: 'integrations.ts',
  'kb-retrieval': 'kb-retrieval.ts',
  'kb-real': 'kb-real.ts',
  'kb-latency': 'kb-latency.ts',
  'kb-vectors': 'kb-vectors.ts',
  backends: 'backends.ts',
  containment: 'containment.ts',
  tables: 'tables.ts',
  analytics: 'analytics.ts',
  export: 'export.ts',
  startup: 'startup.ts',
}

const wanted = process.argv.slice(2)
const unknown = wanted.filter((name) => !(name in BENCHMARKS))
if (unknown.length > 0) {
  process.stderr.write(`unknown benchmark(s): ${unknown.join(', ')}; known: ${Object.keys(BENCHMARKS).join(', ')}\n`)
  process.exit(2)
}
const failed: string[] = []
for (const [name, script] of Object.entries(BENCHMARKS)) {
  if (wanted.length > 0 && !wanted.includes(name)) continue
  process.stdout.write(`\n=== bench: ${name} (tsx bench/${script}) ===\n`)
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(here, script)], { stdio: 'inherit' })
  if (result.status !== 0) failed.push(name)
}
if (failed.length > 0) {
  process.stderr.write(`benchmarks failed: ${failed.join(', ')}\n`)
  process.exit(1)
}
