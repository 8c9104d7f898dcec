/**
 * A `ChatModel` from a wire format and a transport: one attempt bounded by the timeouts,
 * retried by `ModelRetry`, errors masked, in a span. The adapters that own their wire
 * format (Chat Completions, Responses, Messages) are this plus their format.
 */
import { ChatModel } from "@agentfx/core"
import { type Refusal, warnLeftOut } from "./content.js"
import type * as Sse from "./sse.js"
import type { HttpClient } from "effect/http"
import { Effect, Result, Stream } from "effect"
import * as ModelRetry from "../ModelRetry.js"
import type * as ModelTimeout from "../ModelTimeout.js"
import { maskError } from "./mask.js"
import { type Field, warnIgnored } from "./settings.js"
import * as Timeout from "./timeout.js"
import { type Endpoint, postJson, postStream } from "./transport.js"

/** Reads one streamed answer, event by event. */
export interface StreamReader {
  /** Folds an event in: the text it added (emitted as a `TextDelta` when not empty), or the error it carries. */
  readonly add: (event: Sse.Event) => Result.Result<string, ChatModel.ModelError>
  /** True once the answer's last event arrived: nothing after it is read. */
  readonly finished: () => boolean
  /** The whole answer, once the events ended; a stream cut before its last event fails (`invalid-response`). */
  readonly response: () => Result.Result<ChatModel.ChatResponse, ChatModel.ModelError>
}

/** A provider's wire format. */
export interface WireFormat {
  readonly body: (request: ChatModel.ChatRequest, stream: boolean) => unknown
  /** A request the API would refuse, refused before it is sent: its `invalid-request`. */
  readonly refuse?: (request: ChatModel.ChatRequest) => ChatModel.ModelError | undefined
  /** Settings the API does not take: not sent, and a warning the first time each is set (docs/decisions/060). */
  readonly ignores?: { readonly fields: ReadonlyArray<Field>; readonly why: string }
  /** Why the API cannot take a file where it is: the body describes it in text instead, and a warning is logged once per reason. */
  readonly refusesFile: Refusal
  /** A non-streamed answer (not an error envelope: the transport failed those). */
  readonly decode: (body: unknown, provider: string) => Result.Result<ChatModel.ChatResponse, ChatModel.ModelError>
  readonly reader: (provider: string) => StreamReader
}

/** What `make` needs besides the client. */
export interface Options extends ModelTimeout.Options {
  /** The configured model's name (the service's `model`, for `gen_ai.request.model`). */
  readonly model: string
  /** The provider as OpenTelemetry's GenAI conventions name it (each response's `provider`, for `gen_ai.provider.name`), when known. */
  readonly providerName?: string | undefined
  /** The wire format, or why the Layer's options cannot be used (every call then fails with that error). */
  readonly wire: Result.Result<WireFormat, ChatModel.ModelError>
  /** The endpoint, or why it cannot be used (every call then fails with that error). */
  readonly endpoint: Result.Result<Endpoint, ChatModel.ModelError>
  readonly retry?: ModelRetry.Options | undefined
  /** Span names are `<span>.generate` and `<span>.stream`; their attributes the model and the URL. */
  readonly span: string
}

/**
 * The model. A bad endpoint, timeout or wire option fails every call with its
 * `invalid-request`, as does a request the wire format refuses; an event carrying an error
 * fails the stream with it.
 */
export const make = (client: HttpClient.HttpClient, options: Options): ChatModel.ChatModel.Service => {
  const checked = Result.flatMap(options.endpoint, (target) =>
    Result.flatMap(options.wire, (wire) => Result.map(Timeout.resolve(options, target.provider), (timeouts) => ({ target, timeouts, wire }))))
  const warn = Result.match(checked, {
    onFailure: () => () => Effect.void,
    onSuccess: ({ target, wire }) => {
      const settings = wire.ignores === undefined ? () => Effect.void : warnIgnored(target.provider, wire.ignores.fields, wire.ignores.why)
      const files = warnLeftOut(target.provider, wire.refusesFile)
      return (request: ChatModel.ChatRequest) => Effect.andThen(settings(request.settings), files(request))
    }
  })
  /** The checked options for `request`, or the error every call of it fails with. */
  const prepared = (request: ChatModel.ChatRequest) =>
    Result.flatMap(checked, (ready) => {
      const refused = ready.wire.refuse?.(request)
      return refused === undefined ? Result.succeed(ready) : Result.fail(refused)
    })
  const mask = Result.match(options.endpoint, { onFailure: () => (text: string) => text, onSuccess: (target) => target.mask })
  const attributes = {
    model: options.model,
    ...(Result.isSuccess(options.endpoint) ? { url: options.endpoint.success.mask(options.endpoint.success.url) } : {})
  }

  const named = (response: ChatModel.ChatResponse): ChatModel.ChatResponse =>
    options.providerName === undefined ? response : { ...response, provider: options.providerName }

  const generate = (request: ChatModel.ChatRequest) =>
    Result.match(prepared(request), {
      onFailure: Effect.fail,
      onSuccess: ({ target, timeouts, wire }) =>
        postJson(client, target, () => wire.body(request, false)).pipe(
          Effect.flatMap((body) => Effect.fromResult(Result.map(wire.decode(body, target.provider), named))),
          (attempt) => Timeout.request(attempt, timeouts.request, target.provider),
          (call) => Effect.andThen(warn(request), ModelRetry.retry(call, options.retry))
        )
    }).pipe(
      Effect.mapError(maskError(mask)),
      Effect.withSpan(`${options.span}.generate`, { attributes })
    )

  const stream = (request: ChatModel.ChatRequest): Stream.Stream<ChatModel.StreamPart, ChatModel.ModelError> =>
    Result.match(prepared(request), {
      onFailure: (error) => Stream.fail(error),
      onSuccess: ({ target, timeouts, wire }) =>
        Stream.suspend(() => {
          const reader = wire.reader(target.provider)
          const parts = postStream(client, target, () => wire.body(request, true), timeouts.idle).pipe(
            Stream.mapEffect((event) => Effect.fromResult(reader.add(event))),
            Stream.takeUntil(() => reader.finished()),
            Stream.filterMap((text) =>
              text.length > 0 ? Result.succeed<ChatModel.StreamPart>({ _tag: "TextDelta", text }) : Result.failVoid
            )
          )
          const done = Stream.fromEffect(Effect.map(Effect.suspend(() => Effect.fromResult(reader.response())), (response): ChatModel.StreamPart => ({
            _tag: "Done",
            response: named(response)
          })))
          return Timeout.requestStream(Stream.concat(parts, done), timeouts.request, target.provider)
        }).pipe((call) => Stream.concat(Stream.fromEffectDrain(warn(request)), ModelRetry.retryStream(call, options.retry)))
    }).pipe(
      Stream.mapError(maskError(mask)),
      Stream.withSpan(`${options.span}.stream`, { attributes })
    )

  return { model: options.model, provider: options.providerName, generate, stream }
}
