import { QuickJsSandbox } from '../../src/runtime/quickjs-sandbox.js'
import { describeSandboxContract } from './sandbox.contract.js'

// Two workers: the pool size of this 2-core machine (the app's default is min(4, cores)).
describeSandboxContract('QuickJsSandbox', () => new QuickJsSandbox({ workers: 2 }))
