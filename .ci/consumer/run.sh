#!/usr/bin/env bash
# The consumer test: @agentfx/core, @agentfx/ai, @agentfx/mcp, @agentfx/sql, @agentfx/cluster, @agentfx/inbox and @agentfx/ui-stream as
# a user gets them. Packs them (pnpm pack), installs the tarballs with npm into a fresh project
# outside the workspace — with the README's own install lines — and there: builds the project
# with tsc (nodenext, a declaration build of a module that re-exports an agent), runs it with
# plain `node` (no tsx, no loader), type-checks it as a bundler resolves and with `types: []`,
# and runs its vitest + @effect/vitest test (on AgentTest); @agentfx/core's README example is
# built and run too. The project installs only the SQLite driver of @agentfx/sql (every README
# line but PostgreSQL's); a second project installs only the PostgreSQL driver (the core line
# and PostgreSQL's) and loads @agentfx/sql there: each driver is optional.
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

# The README's way to get the tarballs until the packages are published: `pnpm pack:all`
# (pnpm pack turns workspace: ranges into versions; each package's prepack builds it).
step 600 "pnpm pack:all (every published package's tarball)" bash -c 'cd "$1" && pnpm -s pack:all "$2"' _ "$repo" "$packs"

step 30 "tarballs ship dist, src and README only (and the inbox its page, static/)" bash -c '
  for tarball in "$@"; do
    files=$(tar -tzf "$tarball")
    page=""
    case "$tarball" in *agentfx-inbox-*) page="|static/[^/]+\.(html|css|js|svg)" ;; esac
    stray=$(grep -Ev "^package/(package\.json|README\.md|src/.+\.(ts|mjs)|dist/.+\.(js|mjs|d\.ts|d\.mts|map)$page)$" <<<"$files" || true)
    if [ -n "$stray" ]; then echo "$tarball ships more than dist, src and README:"; echo "$stray"; exit 1; fi
    for needed in package/README.md package/dist/index.js package/dist/index.d.ts package/dist/index.js.map package/src/index.ts; do
      grep -qx "$needed" <<<"$files" || { echo "$tarball lacks $needed"; exit 1; }
    done
  done
  has() { tar -tzf "$1" | grep -qx "$2" || { echo "$1 lacks $2"; exit 1; }; }
  has "$1" package/dist/internal/worker-entry.mjs
  has "$3" package/dist/internal/checker-worker.mjs
  for module in SqliteStore PgStore; do has "$4" "package/dist/$module.js"; has "$4" "package/dist/$module.d.ts"; done
  for file in index.html inbox.js check.js diff.js paths.js inbox.css icon.svg; do has "$6" "package/static/$file"; done
' _ "$packs"/agentfx-core-*.tgz "$packs"/agentfx-ai-*.tgz "$packs"/agentfx-mcp-*.tgz "$packs"/agentfx-sql-*.tgz "$packs"/agentfx-cluster-*.tgz "$packs"/agentfx-inbox-*.tgz "$packs"/agentfx-ui-stream-*.tgz

cp -r "$here/package.json" "$here"/tsconfig*.json "$here/src" "$here/test" "$project/"
cd "$project"
# @agentfx/core's README example (what npm shows) is built and run with the rest.
awk '/^```ts$/ { inside = 1; next } /^```$/ { if (inside) exit } inside' "$repo/packages/core/README.md" > src/readme.ts

# The README's install lines, with the tarballs standing in for the registry's @agentfx packages.
mapfile -t lines < <(awk '/^## Install/ { inside = 1; next } /^## / { inside = 0 } inside && /^npm i /' "$repo/README.md" |
  sed -e 's/#.*//' -e 's/[[:space:]]*$//')
if [ "${#lines[@]}" -lt 2 ]; then
  echo "FAILED: README.md's Install section has no npm i lines" >&2
  exit 1
fi
# install_line DIR LINE: runs the README's LINE in DIR
install_line() {
  local dir=$1 line=$2 word
  local -a words args=()
  read -ra words <<<"$line"
  for word in "${words[@]:1}"; do
    case "$word" in
      @agentfx/core | @agentfx/ai | @agentfx/mcp | @agentfx/sql | @agentfx/cluster | @agentfx/inbox | @agentfx/ui-stream) args+=("$(ls "$packs"/agentfx-"${word#@agentfx/}"-*.tgz)") ;;
      *) args+=("$word") ;;
    esac
  done
  step 600 "README, in $(basename "$dir"): $line" npm --prefix "$dir" "${args[@]}" --no-audit --no-fund --loglevel=error
}
pg_line="" core_line=""
for line in "${lines[@]}"; do
  case " $line " in *" @agentfx/core "*) core_line=$line ;; esac
  case " $line " in
    *" @effect/sql-pg "*) pg_line=$line ;; # installed in the second project only
    *) install_line "$project" "$line" ;;
  esac
done
if [ -z "$pg_line" ]; then
  echo "FAILED: README.md's Install section has no line for @effect/sql-pg" >&2
  exit 1
fi
if [ -e node_modules/@effect/sql-pg ]; then
  echo "FAILED: installing the SQLite store brought in @effect/sql-pg (the drivers must be optional)" >&2
  exit 1
fi
# The project's own tools, and the MCP SDK for its own MCP server (src/mcp-server.ts).
step 300 "the consumer's own dependencies" npm i -D typescript@5.9 @types/node@24 @modelcontextprotocol/sdk@1 --no-audit --no-fund --loglevel=error
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
step 60 "node dist/store.js: @agentfx/sql's SQLite store (no PostgreSQL driver installed), a pause resumed by run id" \
  bash -c 'env -u NODE_OPTIONS node dist/store.js > store.out && diff -u "$1" store.out' _ "$here/expected/store.txt"
step 60 "node dist/cluster.js: @agentfx/cluster's embedded runner on a SQLite file, a pause decided through its entity, a second runner refused" \
  bash -c 'env -u NODE_OPTIONS node dist/cluster.js > cluster.out && diff -u "$1" cluster.out' _ "$here/expected/cluster.txt"
step 60 "node dist/inbox.js: @agentfx/inbox on 127.0.0.1, its page and assets from the installed package, its runs API" \
  bash -c 'env -u NODE_OPTIONS node dist/inbox.js > inbox.out && diff -u "$1" inbox.out' _ "$here/expected/inbox.txt"
step 60 "node dist/chat.js: @agentfx/ui-stream on 127.0.0.1, a useChat request, its approval, the same approval refused" \
  bash -c 'env -u NODE_OPTIONS node dist/chat.js > chat.out && diff -u "$1" chat.out' _ "$here/expected/chat.txt"
step 300 "tsc, bundler resolution, with the test" npx tsc -p tsconfig.bundler.json
step 300 "tsc, types: [] and no skipLibCheck" npx tsc -p tsconfig.no-types.json
step 300 "vitest + @effect/vitest" npx vitest run

# The second project: @agentfx/sql with only the PostgreSQL driver.
pg="$work/pg"
mkdir -p "$pg"
cp "$here/pg/package.json" "$here/pg/pg.mjs" "$pg/"
install_line "$pg" "$core_line"
install_line "$pg" "$pg_line"
if [ -e "$pg/node_modules/@effect/sql-sqlite-node" ]; then
  echo "FAILED: installing the PostgreSQL store brought in @effect/sql-sqlite-node (the drivers must be optional)" >&2
  exit 1
fi
step 60 "node pg.mjs: @agentfx/sql and @agentfx/sql/PgStore with only the PostgreSQL driver installed" \
  bash -c 'cd "$1" && env -u NODE_OPTIONS node pg.mjs > pg.out && diff -u "$2" pg.out' _ "$pg" "$here/expected/pg.txt"
