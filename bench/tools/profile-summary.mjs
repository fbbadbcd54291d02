// Summarizes a V8 .cpuprofile (from `BENCH_CPU_PROF=1 npm run bench`, written to bench/profiles/):
// self time by package/file and by function, and inclusive time of the hottest frames.
// Usage: node bench/tools/profile-summary.mjs bench/profiles/CPU.<…>.cpuprofile [rows]
import { readFileSync } from 'node:fs'

const [file, rowsArg] = process.argv.slice(2)
if (!file) throw new Error('usage: node bench/tools/profile-summary.mjs <file.cpuprofile> [rows]')
const rows = Number(rowsArg ?? 30)
const profile = JSON.parse(readFileSync(file, 'utf8'))
const nodes = new Map(profile.nodes.map((n) => [n.id, n]))
const parent = new Map()
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id)

const timeOf = new Map()
profile.samples.forEach((id, i) => timeOf.set(id, (timeOf.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)))
const total = [...timeOf.values()].reduce((a, b) => a + b, 0)

const short = (url) => url.replace(/^.*node_modules\//, 'nm/').replace(/^file:\/\/.*?\/(dist|src|bench)\//, '$1/')
const frame = (n) => `${n.callFrame.functionName || '(anonymous)'} ${short(n.callFrame.url)}:${n.callFrame.lineNumber + 1}`
const pkg = (n) => {
  const url = short(n.callFrame.url) || n.callFrame.functionName
  const m = url.match(/^nm\/((@[^/]+\/)?[^/]+)/)
  return m ? `nm/${m[1]}` : url
}
const add = (map, key, t) => map.set(key, (map.get(key) ?? 0) + t)

/** Coarse areas, to see at a glance how much is database access, HTTP, logging, GC… */
const AREAS = [
  ['database (kysely, better-sqlite3, dist/store)', /^(nm\/kysely|nm\/better-sqlite3|dist\/store)/],
  ['HTTP + fastify (node http/net/streams, fastify, router, ajv, serializer, cors)', /^(node:_http|node:net|node:internal\/streams|node:internal\/stream_base|node:stream|nm\/fastify|nm\/@fastify|nm\/find-my-way|nm\/ajv|nm\/fast-json-stringify|nm\/fast-uri|nm\/light-my-request|nm\/avvio|writev|writeString|writeBuffer|writeUtf8String|parse$|execute$)/],
  ['logging (pino)', /^(nm\/pino|nm\/sonic-boom|nm\/thread-stream)/],
  ['crypto (random ids, hashes)', /^node:internal\/crypto/],
  ['bot runtime (dist/runtime, postMessage)', /^(dist\/runtime|postMessage)/],
  ['Parley app code (dist, other)', /^dist\//],
  ['promises / ticks', /^(runMicrotasks|node:internal\/process\/task_queues)/],
  ['garbage collector', /^\(garbage collector\)$/],
  ['idle', /^\(idle\)$/],
]
const areaOf = (key) => (AREAS.find(([, re]) => re.test(key)) ?? ['other (node internals, startup, program)'])[0]
const selfByArea = new Map()
const selfByPkg = new Map()
const selfByFn = new Map()
const inclusive = new Map()
for (const [id, t] of timeOf) {
  const n = nodes.get(id)
  add(selfByPkg, pkg(n), t)
  add(selfByArea, areaOf(pkg(n)), t)
  add(selfByFn, frame(n), t)
  const seen = new Set()
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const key = frame(nodes.get(cur))
    if (!seen.has(key)) {
      seen.add(key)
      add(inclusive, key, t)
    }
  }
}
const top = (map) => [...map].sort((a, b) => b[1] - a[1]).slice(0, rows)
  .map(([k, t]) => `${((100 * t) / total).toFixed(1).padStart(5)}%  ${k}`).join('\n')
console.log(`${file}: ${(total / 1e6).toFixed(2)} s sampled`)
console.log('\n--- self time by area\n' + top(selfByArea))
console.log('\n--- self time by package / file\n' + top(selfByPkg))
console.log('\n--- self time by function\n' + top(selfByFn))
console.log('\n--- inclusive time\n' + top(inclusive))
