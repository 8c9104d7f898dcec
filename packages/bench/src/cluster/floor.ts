/**
 * The floor of `pnpm bench:cluster`: the engine alone. An entity whose two persisted messages,
 * `Start` and `Decide`, do nothing — one run of the agentfx scenario is one `Start` (to the
 * pause) and one `Decide` (to the end) — served by the same runners, measured the same way.
 */
import { ClusterSchema, Entity } from "effect/cluster"
import { Rpc } from "effect/rpc"
import { Effect, Schema } from "effect"

export const Floor = Entity.make("bench-floor", [
  Rpc.make("Start", { payload: { n: Schema.Number }, success: Schema.String }),
  Rpc.make("Decide", { payload: { n: Schema.Number }, success: Schema.String })
]).annotateRpcs(ClusterSchema.Persisted, true)

/** The handlers: answer at once. */
export const FloorLive = Floor.toLayer({
  Start: () => Effect.succeed("paused"),
  Decide: () => Effect.succeed("completed")
})
