#!/usr/bin/env bash
# The consumer test: @agentfx/core, @agentfx/ai and @agentfx/mcp as a user gets them. Packs them (pnpm pack),
# installs the tarballs with npm into a fresh project outside the workspace — with the README's
# own install lines — and there: builds the project with tsc (nodenext, a declaration build of
# a module that re-exports an agent), runs it with plain `node` (no tsx, no loader), type-checks
# it as a bundler resolves and with `types: []`, and runs its vitest + @effect/vitest test;
# @agentfx/core's README example is built and run too.
# Network: the npm registry only. Every step is bounded by a timeout.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
source "$repo/.ci/step.sh"

work="$(mktemp -d "${TMPDIR:-/tmp}/agentfx-consumer.XXXXXX")"
trap 'rm -rf "$work"' EXIT
packs="$work/packs"
project="$work/project"
mkdir -p "$packs" "$project"

# pnpm pack turns workspace: ranges into versions; each package's prepack builds it (tsc -b).
for pkg in core ai mcp; do
  step 300 "pack @agentfx/$pkg" bash -c 'pnpm --dir "$1" pack --pack-destination "$2" > /dev/null' _ "$repo/packages/$pkg" "$packs"
done

step 30 "tarballs ship dist, src and README only" bash -c '
  for tarball in "$@"; do
    files=$(tar -tzf "$tarball")
    stray=$(grep -Ev "^package/(package\.json|README\.md|src/.+\.(ts|mjs)|dist/.+\.(js|mjs|d\.ts|d\.mts|map))$" <<<"$files" || true)
    if [ -n "$stray" ]; then echo "$tarball ships more than dist, src and README:"; echo "$stray"; exit 1; fi
    for needed in package/README.md package/dist/index.js package/dist/index.d.ts package/dist/index.js.map package/src/index.ts; do
      grep -qx "$needed" <<<"$files" || { echo "$tarball lacks $needed"; exit 1; }
    done
  done
  tar -tzf "$1" | grep -qx package/dist/internal/worker-entry.mjs || { echo "$1 lacks the worker entry"; exit 1; }
' _ "$packs"/agentfx-core-*.tgz "$packs"/agentfx-ai-*.tgz "$packs"/agentfx-mcp-*.tgz

cp -r "$here/package.json" "$here"/tsconfig*.json "$here/src" "$here/test" "$project/"
cd "$project"
# @agentfx/core's README example (what npm shows) is built and run with the rest.
awk '/^```ts$/ { inside = 1; next } /^```$/ { if (inside) exit } inside' "$repo/packages/core/README.md" > src/readme.ts

# The README's install lines, with the tarballs standing in for the registry's @agentfx packages.
mapfile -t lines < <(awk '/^## Install/ { inside = 1; next } /^## / { inside = 0 } inside && /^npm i /' "$repo/README.md")
if [ "${#lines[@]}" -lt 2 ]; then
  echo "FAILED: README.md's Install section has no npm i lines" >&2
  exit 1
fi
for line in "${lines[@]}"; do
  line="${line%%#*}"
  line="${line%"${line##*[![:space:]]}"}"
  read -ra words <<<"$line"
  args=()
  for word in "${words[@]:1}"; do
    case "$word" in
      @agentfx/core) args+=("$(ls "$packs"/agentfx-core-*.tgz)") ;;
      @agentfx/ai) args+=("$(ls "$packs"/agentfx-ai-*.tgz)") ;;
      @agentfx/mcp) args+=("$(ls "$packs"/agentfx-mcp-*.tgz)") ;;
      *) args+=("$word") ;;
    esac
  done
  step 600 "README: $line" npm "${args[@]}" --no-audit --no-fund --loglevel=error
done
# The project's own tools, and the MCP SDK for its own MCP server (src/mcp-server.ts).
step 300 "the consumer's own dependencies" npm i -D typescript@5.9 @types/node@20 @modelcontextprotocol/sdk@1 --no-audit --no-fund --loglevel=error
if [ -e node_modules/tsx ]; then
  echo "FAILED: installing agentfx brought in tsx" >&2
  exit 1
fi

step 300 "tsc, nodenext, with a declaration build" npx tsc -p tsconfig.json
step 60 "node dist/main.js: an agent on ScriptedChatModel, a worker tool, a pause" \
  bash -c 'env -u NODE_OPTIONS node dist/main.js > main.out && diff -u "$1" main.out' _ "$here/expected/main.txt"
step 60 "node dist/readme.js: @agentfx/core's README example" \
  bash -c 'env -u NODE_OPTIONS node dist/readme.js > readme.out && diff -u "$1" readme.out' _ "$here/expected/readme.txt"
step 60 "node dist/provider.js: every @agentfx/ai entry point, ChatCompletionsModel on a loopback server" \
  bash -c 'env -u NODE_OPTIONS node dist/provider.js > provider.out && diff -u "$1" provider.out' _ "$here/expected/provider.txt"
step 60 "node dist/mcp.js: an MCP server's tool in an agent, over stdio" \
  bash -c 'env -u NODE_OPTIONS node dist/mcp.js > mcp.out && diff -u "$1" mcp.out' _ "$here/expected/mcp.txt"
step 300 "tsc, bundler resolution, with the test" npx tsc -p tsconfig.bundler.json
step 300 "tsc, types: [] and no skipLibCheck" npx tsc -p tsconfig.no-types.json
step 300 "vitest + @effect/vitest" npx vitest run
