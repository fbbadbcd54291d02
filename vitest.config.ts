import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Tests that start servers pick free ports; files run in parallel on the 2 cores.
    fileParallelism: true,
  },
})
