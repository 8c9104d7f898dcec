import { defineProject } from "vitest/config"
import { resolveSources } from "../../vitest.shared.js"

export default defineProject({
  ...resolveSources,
  test: {
    name: "ui-stream",
    include: ["test/**/*.test.ts"]
  }
})
