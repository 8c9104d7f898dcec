/**
 * Who may use the chat endpoint: every request — a run started, a pause answered, a message
 * reattached, the messages read — passes through one hook, the inbox's shape (`@agentfx/inbox`'s
 * `Authorization.Authorize`): an Effect that takes the request and returns the name of who
 * asks (for an answer, given to `Agent.resume` as `decidedBy` and recorded with the run's
 * claim), or fails with `Unauthorized` (401) or `Forbidden` (403). It is also told what the
 * request asks ({@link Access}: the action and the chat), so that it can tie people to their
 * chats. The default, {@link loopback}, admits clients on this machine only. The AG-UI endpoint
 * (`AgUi`) takes the same hook: there, the chat is the AG-UI thread (`access.chatId` is its
 * `threadId`), so that one hook can guard both endpoints.
 *
 * @since 0.2.0
 */
import { Loopback } from "@agentfx/core"
import { Effect, Option, Schema } from "effect"
import type { HttpServerRequest } from "effect/http"

/**
 * The request carries no credentials the hook accepts (401).
 *
 * @example
 * ```ts
 * import { ChatAuthorization } from "@agentfx/ui-stream"
 *
 * new ChatAuthorization.Unauthorized({ message: "sign in first" })
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class Unauthorized extends Schema.TaggedError<Unauthorized>("@agentfx/ui-stream/Unauthorized")(
  "Unauthorized",
  { message: Schema.String },
  { httpApiStatus: 401 }
) {}

/**
 * The client is known but not allowed (403).
 *
 * @example
 * ```ts
 * import { ChatAuthorization } from "@agentfx/ui-stream"
 *
 * new ChatAuthorization.Forbidden({ message: "chat c-1 is not yours" })
 * ```
 *
 * @since 0.2.0
 * @category errors
 */
export class Forbidden extends Schema.TaggedError<Forbidden>("@agentfx/ui-stream/Forbidden")(
  "Forbidden",
  { message: Schema.String },
  { httpApiStatus: 403 }
) {}

/**
 * What a request asks, once it has been read: to `start` a run of the chat (a user message), to
 * `decide` a pause of run `runId` (approval answers; the run is checked to be the chat's after
 * the hook admitted the request), to `reattach` to the chat's message (`GET …/stream`), or to
 * `read` the chat's messages (`GET …/messages`: the whole conversation, page by page — a hook
 * that ties people to their chats refuses it as it refuses the others).
 *
 * @example
 * ```ts
 * import type { ChatAuthorization } from "@agentfx/ui-stream"
 *
 * const describe = (access: ChatAuthorization.Access) =>
 *   access.action === "decide" ? `decide run ${access.runId} of chat ${access.chatId}` : `${access.action} chat ${access.chatId}`
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Access =
  | { readonly action: "start"; readonly chatId: string }
  | { readonly action: "decide"; readonly chatId: string; readonly runId: string }
  | { readonly action: "reattach"; readonly chatId: string }
  | { readonly action: "read"; readonly chatId: string }

/**
 * What a hook may fail with: {@link Unauthorized} or {@link Forbidden} — or any error of their
 * tags with a message, such as the inbox's own (`@agentfx/inbox`'s `Authorization.Unauthorized`),
 * so that one hook can guard both.
 *
 * @since 0.2.0
 * @category models
 */
export interface Refusal {
  readonly _tag: "Unauthorized" | "Forbidden"
  readonly message: string
}

/**
 * The authorization hook: who asks, from the request and what it asks, or a refusal. A hook
 * of one parameter — the inbox's `Authorization.loopbackOrToken({ token })`, say — is one too.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ChatAuthorization } from "@agentfx/ui-stream"
 *
 * declare const owner: (chatId: string) => Effect.Effect<string | undefined>
 *
 * const ownChatsOnly: ChatAuthorization.Authorize = (request, access) =>
 *   Effect.gen(function*() {
 *     const user = request.headers["x-user"]
 *     if (user === undefined) return yield* new ChatAuthorization.Unauthorized({ message: "sign in first" })
 *     const chatOwner = yield* owner(access.chatId)
 *     if (chatOwner !== undefined && chatOwner !== user) {
 *       return yield* new ChatAuthorization.Forbidden({ message: `chat ${access.chatId} is not yours` })
 *     }
 *     return user
 *   })
 * ```
 *
 * @since 0.2.0
 * @category models
 */
export type Authorize = (request: HttpServerRequest.HttpServerRequest, access: Access) => Effect.Effect<string, Refusal>

const refusalOf = (refused: Loopback.Refusal): Forbidden => {
  switch (refused._tag) {
    case "NotLoopback":
      return new Forbidden({
        message: `This chat admits clients on this machine only (this one is ${refused.address ?? "unknown"}): the server must be given an authorization hook to admit others`
      })
    case "Proxied":
      return new Forbidden({ message: "The request came through a proxy (Forwarded / X-Forwarded-For): the server must be given an authorization hook to admit it" })
    case "ForeignHost":
      return new Forbidden({ message: `Host ${JSON.stringify(refused.host)} is not a loopback name: open the chat at 127.0.0.1 or localhost` })
    case "ForeignOrigin":
      return new Forbidden({ message: `A page of another origin (${refused.origin}) cannot use this chat` })
  }
}

/**
 * The default hook, the rule of the inbox's default without a token: clients on this machine
 * only, else 403. The peer address must be a loopback address, the request must not have come
 * through a proxy (`Forwarded`, `X-Forwarded-For`: a proxy would make every client look local),
 * its `Host` must be a loopback name (a page of another site whose name resolves to 127.0.0.1 —
 * DNS rebinding — is refused), and its `Origin`, when sent, the endpoint's own (a page of
 * another site, or of another local server, cannot start or approve a run). Who asks is
 * `"local"`. To serve people on other machines, give `Chat` a hook of your own.
 *
 * @example
 * ```ts
 * import type { Agent } from "@agentfx/core"
 * import { Chat, ChatAuthorization } from "@agentfx/ui-stream"
 *
 * declare const payments: Agent.Agent
 * const ChatLive = Chat.routes({ agent: payments, authorize: ChatAuthorization.loopback() }) // the default
 * ```
 *
 * @since 0.2.0
 * @category constructors
 */
export const loopback = (): Authorize => (request) => {
  const refused = Loopback.refusal({ remoteAddress: Option.getOrUndefined(request.remoteAddress), headers: request.headers })
  if (refused !== undefined) return Effect.fail(refusalOf(refused))
  return Effect.succeed("local")
}
