import type { App } from '../../types.js'

/** The Files API under /v1/files (filled in by the Files API work). */
export async function filesRoutes(_app: App): Promise<void> {}
