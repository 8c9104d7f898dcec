/**
 * How the endpoint examples (chat.ts, agui.ts) print what a server answered: its status, its
 * lines with the run's id written `<run>` (so that the output is the same run to run), and the
 * events of an event stream.
 */
import { Console } from "effect"

/** A response's status and text, as printed lines (the run `runId` written `<run>`) and its events. */
export const reply = (status: number, text: string, runId: string) => {
  const shown = runId === "" ? text : text.replaceAll(encodeURIComponent(runId), "<run>").replaceAll(runId, "<run>")
  const events = text.split("\n").filter((l) => l.startsWith("data: {")).map((l) => JSON.parse(l.slice(6)))
  return { status, lines: shown.split("\n").filter((line) => line.length > 0), events }
}

/** A reply under its title, a line each, indented. */
export const show = (title: string, reply: { readonly status: number; readonly lines: ReadonlyArray<string> }) =>
  Console.log([`${title} → ${reply.status}`, ...reply.lines.map((line) => `  ${line}`), ""].join("\n"))
