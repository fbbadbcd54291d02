#!/usr/bin/env node
/**
 * The `parley` command (package.json `bin` → dist/cli.js). Commands live in src/cli/; docs/cli.md describes them.
 */
import { run } from './cli/main.js'

const code = await run(process.argv.slice(2))
// `serve` leaves the server running; everything else ends here (stdout is flushed before exiting).
if (process.argv[2] !== 'serve' || code !== 0) process.exitCode = code
