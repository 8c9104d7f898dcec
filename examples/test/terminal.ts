/**
 * An example run in a real pseudo-terminal (`openTerminal` of @agentfx/testing: node-pty, the
 * screen rendered by @xterm/headless): `pnpm -s tsx examples/<script>` in a 120×50 terminal,
 * offline (every provider variable unset).
 */
import { openTerminal, type Terminal } from "@agentfx/testing/Terminal"
import { offline, root } from "./run.js"

/** Opens a terminal running `pnpm -s tsx examples/<script>` offline. */
export const openExample = (script: string): Terminal =>
  openTerminal({ command: "pnpm", args: ["-s", "tsx", `examples/${script}`], cwd: root, env: { ...process.env, ...offline } })
