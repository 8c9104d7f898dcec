/**
 * What every project's vitest config shares. Workspace packages (`@agentfx/*`) resolve to their
 * TypeScript sources through the `@agentfx/source` export condition, so tests run `src` without a
 * build; anyone else resolves them to `dist` (docs/decisions/030-build-and-exports.md). Setting
 * the list replaces vitest's default server conditions, which are repeated after ours (vite's
 * `defaultServerConditions` without `module`, as vitest has them).
 */
export const resolveSources = {
  ssr: { resolve: { conditions: ["@agentfx/source", "node", "development|production"] } }
}
