import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts", "test/redisSummary.ts"],
    testTimeout: 30_000
  }
})
