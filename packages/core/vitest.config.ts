import { defineProject } from "vitest/config"
import { resolveSources } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSources,
  test: {
    name: "core",
    setupFiles: ["../../vitest.setup.ts"],
    include: ["test/**/*.test.ts"]
  }
})
