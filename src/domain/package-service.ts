import { errors } from '../lib/errors.js'
import { uuidv7 } from '../lib/ids.js'
import { highestMatching, isVersion } from '../lib/semver.js'
import type { PackageDefinitionRow, PackageKind } from '../store/package-store.js'
import { UniqueViolation, type JsonObject, type Store } from '../store/store.js'
import { checkDefinition, checkVisibility, isObject, NAME, VERSION } from './integration-service.js'

/**
 * Interface and plugin definitions as `bp deploy` sends them (createInterface/updateInterface,
 * createPlugin/updatePlugin) and reads them back (getInterface, getInterfaceByName, getPublicInterface…).
 * Private ones belong to a workspace; public and unlisted ones are found by every workspace's hub routes.
 * Parley keeps them; running plugins and resolving interfaces at run time is #26 item 3.
 */
const PARTS: Record<PackageKind, readonly string[]> = {
  interface: ['entities', 'events', 'actions', 'channels', 'attributes', 'nameTemplate'],
  plugin: ['configuration', 'states', 'events', 'actions', 'user', 'conversation', 'message', 'attributes', 'dependencies'],
}
const TITLE: Record<PackageKind, string> = { interface: 'Interface', plugin: 'Plugin' }

export class PackageService {
  constructor(private readonly store: Store, private readonly clock: () => number = Date.now) {}

  async create(workspaceId: string, kind: PackageKind, input: Record<string, unknown>): Promise<PackageDefinitionRow> {
    const name = typeof input.name === 'string' ? input.name : ''
    const version = typeof input.version === 'string' ? input.version : ''
    if (!NAME.test(name)) throw errors.invalidPayload('name must be 1 to 200 characters: lowercase letters, digits, -, _ and /')
    if (!VERSION.test(version)) throw errors.invalidPayload('version must be a semantic version (1.2.3)')
    const definition = await this.check(workspaceId, kind, input)
    const now = this.clock()
    const row: PackageDefinitionRow = { id: uuidv7(), workspaceId, kind, name, version, visibility: checkVisibility(input) ?? 'private', definition, createdAt: now, updatedAt: now }
    try {
      await this.store.packages.createDefinition(row, kind === 'plugin' ? checkCode(input.code) ?? {} : undefined)
    } catch (err) {
      if (err instanceof UniqueViolation) throw errors.alreadyExists(TITLE[kind], `${name}@${version}`)
      throw err
    }
    return row
  }

  /** Parts given replace the stored ones (an entry set to null is removed); name and version do not change. */
  async update(workspaceId: string, kind: PackageKind, id: string, input: Record<string, unknown>): Promise<PackageDefinitionRow> {
    const current = await this.get(workspaceId, kind, id)
    const parts = await this.check(workspaceId, kind, input)
    const updated = await this.store.packages.updateDefinition(id, {
      definition: { ...current.definition, ...parts }, visibility: checkVisibility(input), code: kind === 'plugin' ? checkCode(input.code) : undefined,
    }, this.clock())
    if (!updated) throw errors.notFound(TITLE[kind], id)
    return updated
  }

  /** One of this workspace's (404 for another workspace's, so ids reveal nothing). */
  async get(workspaceId: string, kind: PackageKind, id: string): Promise<PackageDefinitionRow> {
    const row = id.length <= 200 ? await this.store.packages.getDefinition(kind, id) : undefined
    if (!row || row.workspaceId !== workspaceId) throw errors.notFound(TITLE[kind], id)
    return row
  }

  /** By name and version (exact, `latest` or a range such as `<1.2.3`; the highest matching) in this workspace. */
  async getByName(workspaceId: string, kind: PackageKind, name: string, version: string): Promise<PackageDefinitionRow> {
    return this.byName(kind, name, version, workspaceId)
  }

  /** The hub: public and unlisted definitions of every workspace. */
  async hubGet(kind: PackageKind, name: string, version: string): Promise<PackageDefinitionRow> {
    return this.byName(kind, name, version, undefined)
  }

  async hubGetById(kind: PackageKind, id: string): Promise<PackageDefinitionRow> {
    const row = id.length <= 200 ? await this.store.packages.getDefinition(kind, id) : undefined
    if (!row || row.visibility === 'private') throw errors.notFound(TITLE[kind], id)
    return row
  }

  /** A definition this workspace may use: its own, or a public or unlisted one. */
  async usable(workspaceId: string, kind: PackageKind, id: string): Promise<PackageDefinitionRow | undefined> {
    const row = id.length <= 200 ? await this.store.packages.getDefinition(kind, id) : undefined
    return row && (row.workspaceId === workspaceId || row.visibility !== 'private') ? row : undefined
  }

  private async byName(kind: PackageKind, name: string, version: string, workspaceId: string | undefined): Promise<PackageDefinitionRow> {
    const versions = name.length <= 200 ? await this.store.packages.versionsOf(kind, name, workspaceId) : []
    const row = version === 'latest' ? versions.at(-1) : isVersion(version) ? versions.find((v) => v.version === version) : highestMatching(versions, version)
    if (!row) throw errors.notFound(TITLE[kind], `${name}@${version}`)
    return row
  }

  private async check(workspaceId: string, kind: PackageKind, input: Record<string, unknown>): Promise<JsonObject> {
    const definition = checkDefinition(input, PARTS[kind])
    // A plugin's dependencies name integrations and interfaces by id (what `bp deploy` resolved): they must exist.
    const deps = (definition.dependencies ?? {}) as Record<string, unknown>
    for (const [what, table] of [['interfaces', 'interface'], ['integrations', 'integration']] as const) {
      const refs = deps[what]
      if (refs === undefined || refs === null) continue
      if (!isObject(refs)) throw errors.invalidPayload(`dependencies.${what} must be an object`)
      for (const [alias, ref] of Object.entries(refs)) {
        if (ref === null) continue
        const id = isObject(ref) ? ref.id : undefined
        if (typeof id !== 'string') throw errors.invalidPayload(`dependencies.${what}.${alias}.id must be a string`)
        if (table === 'interface' && !(await this.usable(workspaceId, 'interface', id))) throw errors.referenceNotFound(`dependencies.${what}.${alias}: interface "${id.slice(0, 200)}" not found`)
      }
      deps[what] = Object.fromEntries(Object.entries(refs).filter(([, v]) => v !== null))
    }
    return definition
  }
}

/** A plugin's bundles: `{ node, browser }` strings (kept for #26 item 3; not run here). */
function checkCode(code: unknown): JsonObject | undefined {
  if (code === undefined || code === null) return undefined
  if (!isObject(code) || Object.values(code).some((v) => typeof v !== 'string')) throw errors.invalidPayload('code must be { node, browser } strings')
  return code as JsonObject
}
