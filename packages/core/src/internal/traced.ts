/**
 * What a span site asks before it makes a span: whether the fiber's spans go anywhere, and what
 * a model names of itself in them. Alone in its module so that the model port (`fallback.ts`)
 * reads them without knowing the loop, whose spans are `tracing.ts`'s.
 */
import type { Fiber } from "effect"
import * as Tracer from "effect/Tracer"
import type { ChatModel } from "../ChatModel.js"

/** Whether this fiber's spans go anywhere: it has a tracer other than Effect's native one. */
export const isTraced = (fiber: Fiber.Fiber<unknown, unknown>): boolean => fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer

/** What a model service names of itself, as GenAI attributes (`gen_ai.request.model`, `gen_ai.provider.name`). */
export const modelAttributes = (model: ChatModel.Service): Record<string, unknown> => ({
  ...(model.model === undefined ? {} : { "gen_ai.request.model": model.model }),
  ...(model.provider === undefined ? {} : { "gen_ai.provider.name": model.provider })
})
