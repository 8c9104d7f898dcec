import { execFileSync } from "node:child_process"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../..", import.meta.url))

/** Type-checks the project `tsconfig` with the workspace's TypeScript: what it reports, or "" when everything compiles. */
export const tscErrors = (tsconfig: string): string => {
  try {
    execFileSync(process.execPath, [join(root, "node_modules/typescript/bin/tsc"), "-p", tsconfig], { encoding: "utf8" })
    return ""
  } catch (error) {
    return (error as { stdout?: string }).stdout ?? String(error)
  }
}
