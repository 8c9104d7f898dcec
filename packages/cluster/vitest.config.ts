import { defineProject } from "vitest/config"
import { resolveSources } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSources,
  test: {
    name: "cluster",
    setupFiles: ["../../vitest.setup.ts"],
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/globalSetup.ts"]
  }
})
