// `deploy`: the Botpress CLI's own `bp deploy` of bots/echo and integrations/webhook against Parley (issue #26),
// through a recording proxy: each request the CLI makes is listed (method, path, status; the answer's body when
// it is not a success) in logs/deploy-<project>.json, the failures in the summary.
import { mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { BOTPRESS_DIR, CLI_BIN, LOG_DIR, WORK_DIR, adminClient, errText, runAsync } from './lib.mjs'
import { startRecordingProxy } from './fakes.mjs'

const PROJECTS = [
  ['bots/echo', ['--createNewBot']],
  // a bot with no integration: gets past the chat lookup above to the bot's own requests
  ['packages/cli/templates/empty-bot', ['--createNewBot']],
  ['integrations/webhook', []],
]

export async function deploy(p) {
  const home = join(WORK_DIR, 'bp-home')
  mkdirSync(home, { recursive: true })
  const results = []
  // The CLI refuses to deploy an integration from a workspace without a handle (under -y it does not prompt for
  // one): the handle is set first, as the CLI's prompt would (checkHandleAvailability, then updateWorkspace).
  const admin = adminClient(p)
  const handle = await admin.checkHandleAvailability({ handle: 'corpus' }).then((r) => `available=${r.available}`, errText)
  const update = await admin.updateWorkspace({ id: p.workspaceId, handle: 'corpus' }).then(() => 'ok', errText)
  const got = await admin.getWorkspace({ id: p.workspaceId })
  const workspace = got.workspace ?? got
  results.push({ name: 'workspace handle (checkHandleAvailability, updateWorkspace)', ok: workspace.handle === 'corpus', detail: `checkHandleAvailability: ${handle}; updateWorkspace: ${update}; getWorkspace.handle = ${workspace.handle}` })
  for (const [project, extra] of PROJECTS) {
    const proxy = await startRecordingProxy(p.apiUrl)
    const name = `deploy-${project.replace(/\//g, '-')}`
    const r = await runAsync(name, process.execPath, [CLI_BIN, 'deploy', '-y', '--noBuild', '--verbose', '--botpressHome', home,
      '--apiUrl', proxy.url, '--workspaceId', p.workspaceId, '--token', p.token, ...extra], { cwd: join(BOTPRESS_DIR, project) })
    proxy.close()
    writeFileSync(join(LOG_DIR, `${name}.json`), JSON.stringify(proxy.exchanges, null, 2))
    const failed = proxy.exchanges.filter((x) => x.status >= 400)
    const cliError = r.output.split('\n').filter((l) => /✗|error/i.test(l)).slice(-2).join(' | ').slice(0, 300)
    results.push({
      name: `bp deploy ${project}`,
      ok: r.status === 0,
      detail: r.status === 0 ? `${proxy.exchanges.length} requests, ${failed.length} answered 4xx/5xx (the CLI's lookups of versions that do not exist yet answer 404)` : `exit ${r.status}; ${cliError}`,
    })
    // The refused requests of a failed deploy are its findings; a deploy that succeeded lists them in its .json log only.
    if (r.status !== 0) {
      for (const x of failed) results.push({ name: `  ${x.method} ${x.path.split('?')[0]}`, ok: false, detail: `${x.status} ${x.body ?? ''}`.replace(/\s+/g, ' ').slice(0, 300) })
    }
  }
  return results
}
