import { readdir, readFile } from 'node:fs/promises'
import { fileURLToPath } from 'node:url'
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider } from 'kysely'

/** migrations/<dialect>/NNNN_name.sql at the package root (same path from src/ and dist/). */
export const migrationsDir = (dialect: 'sqlite' | 'postgres') =>
  fileURLToPath(new URL(`../../migrations/${dialect}/`, import.meta.url))

/** Plain numbered SQL files; statements are separated by a semicolon at the end of a line. */
class SqlFileProvider implements MigrationProvider {
  constructor(private readonly dir: string) {}

  async getMigrations(): Promise<Record<string, Migration>> {
    const files = (await readdir(this.dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort()
    const migrations: Record<string, Migration> = {}
    for (const file of files) {
      const text = await readFile(this.dir + file, 'utf8')
      const statements = text
        .split(/;\s*$/m)
        .map((s) => s.replace(/^\s*--.*$/gm, '').trim())
        .filter(Boolean)
      migrations[file.replace(/\.sql$/, '')] = {
        up: async (db: Kysely<unknown>) => {
          for (const statement of statements) await sql.raw(statement).execute(db)
        },
      }
    }
    return migrations
  }
}

/** Applies pending migrations; Kysely's migration lock lets several instances start at once. */
export async function migrateToLatest(db: Kysely<any>, dialect: 'sqlite' | 'postgres'): Promise<string[]> {
  const migrator = new Migrator({ db, provider: new SqlFileProvider(migrationsDir(dialect)), migrationTableName: 'parley_migrations', migrationLockTableName: 'parley_migrations_lock' })
  const { error, results } = await migrator.migrateToLatest()
  if (error) throw error instanceof Error ? error : new Error(String(error))
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName)
}
