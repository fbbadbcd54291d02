/**
 * Bundles a project as the Botpress CLI's `bp build` does (packages/cli bundle-command.ts): esbuild, CommonJS, for
 * Node, of an entry that re-exports the project's default export and its `handler`. What `bp deploy` sends as `code`.
 */
import { build } from 'esbuild'
import { fileURLToPath } from 'node:url'

const FIXTURES = fileURLToPath(new URL('../fixtures/hosted/', import.meta.url))

/** `file`: a module of test/fixtures/hosted/ whose default export is an SDK Bot or Integration; `define`: esbuild's. */
export async function bundleFixture(file: string, define: Record<string, string> = {}): Promise<string> {
  const out = await build({
    stdin: { contents: `import x from './${file}'; export default x; export const handler = x.handler;`, resolveDir: FIXTURES },
    bundle: true, platform: 'node', format: 'cjs', write: false, logLevel: 'silent', define,
  })
  return out.outputFiles[0]!.text
}
