import { execFile } from "node:child_process"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import { fileURLToPath } from "node:url"
import { expect } from "vitest"

/** The provider variables the examples read: unset, so every example runs on its scripted model. */
export const offline: Record<string, string | undefined> = {
  OPENAI_API_KEY: undefined,
  ANTHROPIC_API_KEY: undefined,
  AGENTFX_BASE_URL: undefined,
  AGENTFX_MODEL: undefined,
  AGENTFX_API_KEY: undefined
}

/** Output lines, trimmed on the right, with the `[  12 ms] ` stamps removed and durations written `N ms`. */
export const normalize = (output: string): ReadonlyArray<string> =>
  output.split("\n").map((line) =>
    line.replace(/^\[\s*\d+ ms\] /, "").replace(/\d+ ms\b/g, "N ms").replace(/\d+ bytes of JSON/, "N bytes of JSON").trimEnd()
  )

export interface Run {
  /** stdout as printed. */
  readonly raw: string
  /** stdout lines, {@link normalize}d. */
  readonly lines: ReadonlyArray<string>
  readonly stderr: string
  /** The exit code (`null` when killed by a signal). */
  readonly status: number | null
}

export const root = fileURLToPath(new URL("../..", import.meta.url))

/** Runs `pnpm -s tsx examples/<script>` (its words after the file's name: its arguments) offline (unless `env` names a model), with `input` on stdin (then end of input), whatever its exit code; killed after `timeout` ms. */
export const runExample = (script: string, input = "", env: Record<string, string> = {}, timeout = 60_000): Promise<Run> =>
  new Promise((resolve) => {
    const child = execFile("pnpm", ["-s", "tsx", ...`examples/${script}`.split(" ")], {
      cwd: root,
      encoding: "utf8",
      timeout,
      env: { ...process.env, ...offline, ...env }
    }, (error, stdout, stderr) => {
      resolve({ raw: stdout, stderr, lines: normalize(stdout), status: error === null ? 0 : typeof error.code === "number" ? error.code : null })
    })
    child.stdin?.end(input)
  })

/** {@link runExample}, failing unless it exits 0. */
export const run = async (script: string, input = "", env: Record<string, string> = {}, timeout?: number): Promise<Run> => {
  const result = await runExample(script, input, env, timeout)
  if (result.status !== 0) throw new Error(`${script} exited with ${result.status}\n${result.raw}\n${result.stderr}`)
  return result
}

/** Every expected line occurs in `lines`, in this order (other lines may come between). */
export const expectInOrder = (lines: ReadonlyArray<string>, expected: ReadonlyArray<string>) => {
  let from = 0
  for (const line of expected) {
    const at = lines.indexOf(line, from)
    if (at === -1) {
      expect.fail(`missing, or out of order: ${JSON.stringify(line)}\n--- output ---\n${lines.join("\n")}`)
    }
    from = at + 1
  }
}

export const offlineBanner =
  "model: scripted, offline (set OPENAI_API_KEY, ANTHROPIC_API_KEY, or AGENTFX_BASE_URL + AGENTFX_MODEL for a real model)"

/** A JSON server on 127.0.0.1 speaking a model's wire format: `answer` gets each request body and its index. */
export const jsonServer = async (answer: (body: any, index: number) => unknown) => {
  const bodies: Array<any> = []
  const server = Http.createServer((req, res) => {
    let data = ""
    req.on("data", (chunk) => (data += chunk))
    req.on("end", () => {
      bodies.push(JSON.parse(data))
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(answer(bodies.at(-1), bodies.length - 1)))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    bodies,
    close: () => {
      server.closeAllConnections()
      server.close()
    }
  }
}
