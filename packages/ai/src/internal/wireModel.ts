/**
 * A `ChatModel` from a wire format and a transport: one attempt bounded by the timeouts,
 * retried by `ModelRetry`, errors masked, in a span. The adapters that own their wire
 * format (Chat Completions, Responses, Messages) are this plus their format.
 */
import { ChatModel } from "@agentfx/core"
import type * as Sse from "./sse.js"
import type { HttpClient } from "@effect/platform"
import type { Either } from "effect"
import { Effect, Either as E, Option, Stream } from "effect"
import * as ModelRetry from "../ModelRetry.js"
import type * as ModelTimeout from "../ModelTimeout.js"
import { maskError } from "./mask.js"
import * as Timeout from "./timeout.js"
import { type Endpoint, postJson, postStream } from "./transport.js"

/** Reads one streamed answer, event by event. */
export interface StreamReader {
  /** Folds an event in: the text it added (emitted as a `TextDelta` when not empty), or the error it carries. */
  readonly add: (event: Sse.Event) => Either.Either<string, ChatModel.ModelError>
  /** True once the answer's last event arrived: nothing after it is read. */
  readonly finished: () => boolean
  /** The whole answer, once the events ended; a stream cut before its last event fails (`InvalidResponse`). */
  readonly response: () => Either.Either<ChatModel.ChatResponse, ChatModel.ModelError>
}

/** A provider's wire format. */
export interface WireFormat {
  readonly body: (request: ChatModel.ChatRequest, stream: boolean) => unknown
  /** A non-streamed answer (not an error envelope: the transport failed those). */
  readonly decode: (body: unknown, provider: string) => Either.Either<ChatModel.ChatResponse, ChatModel.ModelError>
  readonly reader: (provider: string) => StreamReader
}

/** What `make` needs besides the client. */
export interface Options extends ModelTimeout.Options {
  readonly wire: WireFormat
  /** The endpoint, or why it cannot be used (every call then fails with that error). */
  readonly endpoint: Either.Either<Endpoint, ChatModel.ModelError>
  readonly retry?: ModelRetry.Options | undefined
  /** Span names are `<span>.generate` and `<span>.stream`. */
  readonly span: string
  readonly attributes: { readonly [key: string]: string }
}

/**
 * The model. A bad endpoint or timeout fails every call with its `InvalidRequest`; an
 * event carrying an error fails the stream with it.
 */
export const make = (client: HttpClient.HttpClient, options: Options): ChatModel.ChatModel.Service => {
  const checked = E.flatMap(options.endpoint, (target) =>
    E.map(Timeout.resolve(options, target.provider), (timeouts) => ({ target, timeouts })))
  const mask = E.match(options.endpoint, { onLeft: () => (text: string) => text, onRight: (target) => target.mask })
  const attributes = {
    ...options.attributes,
    ...(E.isRight(options.endpoint) ? { url: options.endpoint.right.mask(options.endpoint.right.url) } : {})
  }

  const generate = (request: ChatModel.ChatRequest) =>
    E.match(checked, {
      onLeft: Effect.fail,
      onRight: ({ target, timeouts }) =>
        postJson(client, target, () => options.wire.body(request, false)).pipe(
          Effect.flatMap((body) => options.wire.decode(body, target.provider)),
          (attempt) => Timeout.request(attempt, timeouts.request, target.provider),
          (call) => ModelRetry.retry(call, options.retry)
        )
    }).pipe(
      Effect.mapError(maskError(mask)),
      Effect.withSpan(`${options.span}.generate`, { attributes })
    )

  const stream = (request: ChatModel.ChatRequest): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
    E.match(checked, {
      onLeft: (error) => Stream.fail(error),
      onRight: ({ target, timeouts }) =>
        Stream.suspend(() => {
          const reader = options.wire.reader(target.provider)
          const parts = postStream(client, target, () => options.wire.body(request, true), timeouts.idle).pipe(
            Stream.mapEffect((event) => reader.add(event)),
            Stream.takeUntil(() => reader.finished()),
            Stream.filterMap((text) =>
              text.length > 0 ? Option.some<ChatModel.StreamPart>({ _tag: "TextDelta", text }) : Option.none()
            )
          )
          const done = Stream.fromEffect(Effect.map(Effect.suspend(() => reader.response()), (response): ChatModel.StreamPart => ({
            _tag: "Done",
            response
          })))
          return Timeout.requestStream(Stream.concat(parts, done), timeouts.request, target.provider)
        }).pipe((call) => ModelRetry.retryStream(call, options.retry))
    }).pipe(
      Stream.mapError(maskError(mask)),
      Stream.withSpan(`${options.span}.stream`, { attributes })
    )

  return { generate, stream }
}
