/**
 * Runs @botpress/zai@2.6.21, unchanged, against a Parley (test/e2e/zai.test.ts starts it as a child process, through
 * tsx: zai's dist is ESM with extensionless imports, which plain node refuses). Arguments: the API URL, the bot's id,
 * its API key, and the path: `legacy` (zai with a plain @botpress/client Client: cognitive's default, the llm
 * interface's generateContent through callAction) or `v2` (zai with `new Cognitive({ client, __experimental_beta:
 * true })`: POST /v2/cognitive/generate-text). Prints one JSON line: what zai.check and zai.extract answered.
 */
import { Client } from '@botpress/client'
import { Cognitive } from '@botpress/cognitive'
import { Zai } from '@botpress/zai'
import { z } from '@bpinternal/zui'

const [apiUrl, botId, token, path] = process.argv.slice(2)
const client = new Client({ apiUrl, botId, token })
const zai = new Zai({ client: path === 'v2' ? (new Cognitive({ client, __experimental_beta: true }) as never) : client })
try {
  const check = await zai.check('The sky is blue on a clear day', 'is about the weather')
  const extract = await zai.extract('My name is John Doe and I am 30 years old', z.object({ name: z.string(), age: z.number() }))
  process.stdout.write(`${JSON.stringify({ check, extract })}\n`)
} catch (err) {
  process.stdout.write(`${JSON.stringify({ error: String((err as Error)?.stack ?? err) })}\n`)
  process.exitCode = 1
}
