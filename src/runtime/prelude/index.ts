/*
 * The in-sandbox runtime ("prelude"), the entry of its bundle (../prelude.ts bundles it with esbuild). The bundle is
 * evaluated inside each bot's QuickJS VM before the bot's module, and its modules' bindings live in one closure: bot
 * code shares the realm but can reach none of them, only what the worker hands it (ctx, client, actions).
 * intrinsics.js comes first: the built-ins are captured before anything else runs.
 *
 * Bot-author documentation: docs/bot-code.md. Host contract: ../prelude-contract.ts.
 */
import { freeze } from './intrinsics.js'
import { action, beforeIncoming, turn } from './entries.js'
import { bindHost } from './host.js'
import { load } from './load.js'
import { abortUnit } from './run.js'
import type { PreludeApi, PreludeHelpers, PreludeHost } from '../prelude-contract.js'

export default function parleyPrelude(host: PreludeHost, helpers: PreludeHelpers): PreludeApi {
  bindHost(host, helpers)
  return freeze({ load, beforeIncoming, turn, action, abortUnit })
}
