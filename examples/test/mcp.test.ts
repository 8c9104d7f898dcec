import { existsSync } from "node:fs"
import { describe, expect, it } from "vitest"
import { expectInOrder, offlineBanner, run } from "./run.js"

describe("examples/mcp.ts", () => {
  it("the filesystem MCP server's tools in an agent: reads run freely, every write (create_directory too) waits for approval, then runs", async () => {
    const { lines: raw, stderr } = await run("mcp.ts")
    // the example runs the server with `stderr: "ignore"`: its banner does not reach ours
    expect(stderr).not.toContain("Secure MCP Filesystem Server")
    const dir = /\/[^"\s]*agentfx-mcp-[A-Za-z0-9]+/.exec(raw.join("\n"))?.[0]
    expect(dir).toBeDefined()
    const lines = raw.map((line) => line.replaceAll(dir!, "<dir>"))
    expectInOrder(lines, [
      offlineBanner,
      "MCP server secure-filesystem-server 0.2.0: 14 tools",
      "  free: fs_read_file, fs_read_text_file, fs_read_media_file, fs_read_multiple_files, fs_list_directory, fs_list_directory_with_sizes, fs_directory_tree, fs_search_files, fs_get_file_info, fs_list_allowed_directories",
      "  need approval: fs_write_file, fs_edit_file, fs_create_directory, fs_move_file",
      `  model asks: fs_list_directory({"path":"<dir>"}) [call_1]`,
      `  model asks: fs_read_text_file({"path":"<dir>/notes.txt"}) [call_2]`,
      `  result call_1 fs_list_directory: {"content":"[FILE] notes.txt"}`,
      `  result call_2 fs_read_text_file: {"content":"Release 1.2 ships on Friday.\\nThe migration guide is not written yet.\\n"}`,
      "paused (approval):",
      `  call_3 fs_create_directory({"path":"<dir>/drafts"})`,
      `  call_4 fs_write_file({"path":"<dir>/todo.txt","content":"- write the migration guide\\n"})`,
      "operator: approving fs_create_directory, fs_write_file",
      `  result call_3 fs_create_directory: {"content":"Successfully created directory <dir>/drafts"}`,
      `  result call_4 fs_write_file: {"content":"Successfully wrote to <dir>/todo.txt"}`,
      "completed: 4 tool call(s), 0 tokens",
      "answer: Release 1.2 ships on Friday; the migration guide is missing, so todo.txt now says to write it, and drafts/ is ready for it.",
      `on disk, todo.txt: "- write the migration guide\\n"; drafts/ exists`
    ])
    // only one pause, before the writes: the reads ran without one
    expect(lines.filter((line) => line.startsWith("paused"))).toEqual(["paused (approval):"])
    // the script exited on its own (the server process had ended with the scope), and cleaned up
    expect(existsSync(dir!)).toBe(false)
  }, 60_000)
})
