/**
 * bench/RESULTS.md is shared by several benchmarks, each owning one section between markers
 * `<!-- section:ID -->` and `<!-- /section:ID -->`. A benchmark rewrites only its own section, so
 * running one of them (`tsx bench/turns.ts`) keeps the others' latest figures.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { execFileSync } from 'node:child_process'
import { fileURLToPath, pathToFileURL } from 'node:url'

export const RESULTS_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'RESULTS.md')

const HEADER = `# Benchmark results

_Each section is written by one benchmark and names the command that reproduces it; \`npm run bench\` runs them all
(bench/index.ts). Analysis of the createMessage figures: [ANALYSIS.md](ANALYSIS.md)._
`

/** Replaces (or appends) section `id` of RESULTS.md with `markdown`. */
export function writeResultsSection(id: string, markdown: string, file = RESULTS_FILE): void {
  if (!/^[a-z0-9-]+$/.test(id)) throw new Error(`bad section id ${id}`)
  const start = `<!-- section:${id} -->`
  const end = `<!-- /section:${id} -->`
  const block = `${start}\n${markdown.trim()}\n${end}`
  let text = existsSync(file) ? readFileSync(file, 'utf8') : ''
  if (!text.includes('<!-- section:')) text = HEADER // an old single-report file: start afresh
  const from = text.indexOf(start)
  const to = text.indexOf(end)
  text = from >= 0 && to > from ? text.slice(0, from) + block + text.slice(to + end.length) : `${text.trimEnd()}\n\n${block}\n`
  writeFileSync(file, text)
}

/**
 * A bench module run as a script (`tsx bench/<name>.ts`): builds first unless BENCH_SKIP_BUILD=1, runs, writes its
 * section of RESULTS.md with the command that reproduces it (the `BENCH_<KNOBS>_*` variables set, then
 * `npm run bench -- <section>`), prints the result as JSON; a failure is printed and exits 1.
 */
export function runBenchScript<R>(o: { moduleUrl: string; section: string; knobs: string; run: () => Promise<R>; markdown: (result: R, command: string) => string }): void {
  if (o.moduleUrl !== pathToFileURL(process.argv[1] ?? '').href) return
  if (process.env.BENCH_SKIP_BUILD !== '1') {
    process.stdout.write('building (npm run build)…\n')
    execFileSync('npm', ['run', 'build'], { cwd: join(dirname(RESULTS_FILE), '..'), stdio: ['ignore', 'ignore', 'inherit'] })
  }
  o.run().then(
    (result) => {
      const knobs = Object.entries(process.env).filter(([k]) => k.startsWith(o.knobs)).map(([k, v]) => `${k}=${v} `).join('')
      writeResultsSection(o.section, o.markdown(result, `${knobs}npm run bench -- ${o.section}`))
      process.stdout.write(`\n${JSON.stringify(result, null, 2)}\n`, () => process.exit(0))
    },
    (err: unknown) => {
      process.stderr.write(`bench/${o.section}.ts failed: ${err instanceof Error ? err.stack : String(err)}\n`)
      process.exit(1)
    },
  )
}
