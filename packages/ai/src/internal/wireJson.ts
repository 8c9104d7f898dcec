/**
 * Reading the JSON providers send: tolerant accessors, and the `InvalidResponse` for what
 * cannot be read.
 */
import { ChatModel } from "@agentfx/core"
import { Either } from "effect"
import type * as Sse from "./sse.js"

export type JsonObject = { readonly [key: string]: unknown }

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** The value if it is a string, else `""`. */
export const text = (value: unknown): string => (typeof value === "string" ? value : "")

/** The value if it is a number, else 0. */
export const count = (value: unknown): number => (typeof value === "number" ? value : 0)

export const invalid = (message: string) => new ChatModel.ModelError({ reason: "InvalidResponse", message })

/** An event's data as JSON; data that is not JSON is an `InvalidResponse` quoting its start. */
export const parseEvent = (event: Sse.Event, provider: string): Either.Either<unknown, ChatModel.ModelError> =>
  Either.try({
    try: (): unknown => JSON.parse(event.data),
    catch: () => invalid(`${provider} sent a stream event that is not JSON: ${event.data.slice(0, 200)}`)
  })
