/**
 * The OpenAI Responses wire format (`POST {baseUrl}/responses`): neutral request → request
 * body; response object and stream events → neutral response. Files are `input_image` and
 * `input_file` content (in `function_call_output` too); the images a model generates
 * (`image_generation_call` items) are the answer's files, described in text when sent back (an
 * assistant turn takes text only); encrypted reasoning items are kept and sent back before
 * their turn's items. Read tolerantly: an event is
 * known by its `type` alone (no `sequence_number` needed), unknown events and fields are
 * skipped, and errors are found in every shape servers send them. No I/O here.
 */
import { type ChatModel, Message, Part } from "@agentfx/core"
import { Result } from "effect"
import { answerFile, answerFilesText, leftOut, nameOf, ownReasoning, type Refusal } from "./content.js"
import { errorFromPayload } from "./httpError.js"
import { defined } from "./settings.js"
import type * as Sse from "./sse.js"
import { type Call as Assembled, StreamFold, usageOf } from "./streamFold.js"
import { withStrict } from "./strictSchema.js"
import { wireSchema } from "./toolSchema.js"
import { invalid, isObject, type JsonObject, parseEvent, snippet, text } from "./wireJson.js"
import type { StreamReader, WireFormat } from "./wireModel.js"

type Json = JsonObject

const objects = (value: unknown): ReadonlyArray<Json> => (Array.isArray(value) ? value.filter(isObject) : [])

/** OpenAI's reasoning models take the system prompt as a `developer` message. */
const systemRole = (model: string) =>
  /^(o\d|gpt-5|codex-|computer-use)/.test(model) ? "developer" : "system"

/**
 * Why the Responses API cannot take a file: it reads images and documents, not audio or video;
 * and a model's own turn (an assistant message) takes text only.
 */
const refuses: Refusal = (file, place) =>
  place === "answer"
    ? "the Responses API takes text only in the model's own turn"
    : /^(audio|video)\//.test(file.mediaType)
    ? "the Responses API reads images and documents (PDF, text), not audio or video"
    : undefined

/** A file as input content: `input_image`, or `input_file` by URL or inline; or the text that stands for it. */
const fileContent = (file: Part.FilePart): object => {
  const why = refuses(file, "input")
  if (why !== undefined) return { type: "input_text", text: leftOut(file, why) }
  if (file.mediaType.startsWith("image/")) return { type: "input_image", image_url: Part.url(file), detail: "auto" }
  return file.source._tag === "Url"
    ? { type: "input_file", file_url: file.source.url }
    : { type: "input_file", filename: nameOf(file), file_data: Part.url(file) }
}

/** A tool result's output: its JSON, or, with files, its JSON and the files as input content. */
const output = (message: Message.ToolResultMessage): string | Array<object> =>
  message.files === undefined
    ? JSON.stringify(message.content)
    : [{ type: "input_text", text: JSON.stringify(message.content) }, ...message.files.map(fileContent)]

/** An assistant turn's text as a message item, the files it answered with described after it (none when there is neither). */
const assistantMessage = (message: Message.AssistantMessage): ReadonlyArray<object> => {
  const texts = [...(message.text.length > 0 ? [message.text] : []), ...answerFilesText(message, refuses)]
  return texts.length === 0 ? [] : [{ role: "assistant", content: texts.map((text) => ({ type: "output_text", text })) }]
}

/** An assistant turn's items: the reasoning this API made (`owner`'s, with its encrypted content) first, then the text and the calls. */
const inputItems = (role: string, owner: string, message: ChatModel.ModelMessage): ReadonlyArray<object> => {
  switch (message._tag) {
    case "System":
      return [{ role, content: message.text }]
    case "User":
      return [{
        role: "user",
        content: Message.userParts(message).map((part) => part._tag === "Text" ? { type: "input_text", text: part.text } : fileContent(part))
      }]
    case "Assistant":
      return [
        ...ownReasoning(message, owner).map((part) => part.data as object),
        ...assistantMessage(message),
        ...message.toolCalls.map((call) => ({
          type: "function_call",
          call_id: call.id,
          name: call.name,
          arguments: JSON.stringify(call.args)
        }))
      ]
    case "ToolResult":
      return [{ type: "function_call_output", call_id: message.callId, output: output(message) }]
  }
}

const toolChoice = (choice: ChatModel.ToolChoice) => typeof choice === "string" ? choice : { type: "function", name: choice.tool }

/** The answer's JSON Schema as `text.format`, strict when strict mode takes the schema. */
const textFormat = (output: ChatModel.OutputFormat) => ({
  format: { type: "json_schema", name: output.name, ...withStrict(wireSchema(output.schema), true) }
})

/** A function tool; with `strict`, strict when strict mode takes its parameters. */
const functionTool = (tool: ChatModel.ToolDefinition, strict: boolean) => {
  const parameters = withStrict(wireSchema(tool.parameters), strict)
  return { type: "function", name: tool.name, description: tool.description, parameters: parameters.schema, strict: parameters.strict }
}

const requestBody = (model: string, strict: boolean, owner: string, reasoning: boolean) => (request: ChatModel.ChatRequest, stream: boolean) => {
  const role = systemRole(model)
  const settings = request.settings
  return {
    model,
    input: [
      ...(request.system === undefined ? [] : [{ role, content: request.system }]),
      ...request.messages.flatMap((message) => inputItems(role, owner, message))
    ],
    // a reasoning model's reasoning comes back encrypted, to be sent back without a stored response (decision 097)
    ...(reasoning ? { include: ["reasoning.encrypted_content"] } : {}),
    ...(request.tools.length === 0 ? {} : {
      tools: request.tools.map((tool) => functionTool(tool, strict)),
      tool_choice: toolChoice(request.toolChoice),
      ...defined({ parallel_tool_calls: settings?.parallelToolCalls })
    }),
    // `stop` has no place in the Responses API (`ignores`)
    ...defined({ temperature: settings?.temperature, top_p: settings?.topP, max_output_tokens: settings?.maxOutputTokens }),
    ...(request.output === undefined ? {} : { text: textFormat(request.output) }),
    ...(stream ? { stream: true } : {})
  }
}

/** A fold of one answer: usage from `input_tokens`, `output_tokens` and `total_tokens` (`usageOf`). */
const fold = (provider: string) =>
  new StreamFold<Call>({
    provider,
    last: "response.completed",
    usage: (counts) => usageOf(counts.input_tokens, counts.output_tokens, counts.total_tokens)
  })

/** The one reason the Responses API gives for stopping: `incomplete_details.reason` of an incomplete response (a completed one gives none). */
const incompleteReason = (response: Json): string | undefined => {
  const reason = response.status === "incomplete" && isObject(response.incomplete_details) ? response.incomplete_details.reason : undefined
  return typeof reason === "string" ? reason : undefined
}

/** Why the answer ended: cut short (`length`, `content-filter`: its calls may be cut too, as Chat Completions and Anthropic say), else its calls, else its end. */
const finishReason = (response: Json, calls: number): ChatModel.FinishReason => {
  const reason = incompleteReason(response)
  if (reason === "max_output_tokens") return "length"
  if (reason === "content_filter") return "content-filter"
  if (calls > 0) return "tool-calls"
  return response.status === "incomplete" ? "other" : "stop"
}

/** A function call; `item` is its output item's `id`, which argument events name (`item_id`), beside the `call_id` results are sent back under. */
interface Call extends Assembled {
  item: string
  args: string
}

const callOf = (item: Json): Call => ({
  id: text(item.call_id) || text(item.id),
  item: text(item.id),
  name: text(item.name),
  args: text(item.arguments),
  input: {}
})

/** The function calls of a response's `output`. */
const callsOf = (response: Json): ReadonlyArray<Json> => objects(response.output).filter((item) => item.type === "function_call")

/** Text and refusals of a response's `output` messages (reasoning and built-in tool items are skipped), added to `answer`; the text added. */
const addText = (answer: StreamFold<Call>, response: Json): string => {
  let added = ""
  for (const item of objects(response.output)) {
    if (item.type !== "message") continue
    for (const part of objects(item.content)) {
      if (part.type === "output_text") added += answer.addText(text(part.text))
      if (part.type === "refusal") added += answer.addRefusal(text(part.refusal))
    }
  }
  return added
}

/** The end of an answer: its usage and why it stopped, from the final response (after every call is in). */
const finishWith = (answer: StreamFold<Call>, response: Json) => {
  answer.addUsage(response.usage)
  answer.finish(finishReason(response, answer.toolCalls.length), incompleteReason(response))
  answer.end()
}

/** A response that is not complete: its error (`failed`), or what it is (`in_progress`, `queued`, `cancelled`). */
const unfinished = (response: Json, provider: string, where: "mid-stream" | "with HTTP 200"): ChatModel.ModelError | undefined => {
  if (response.status === "failed") {
    return errorFromPayload({ provider, payload: isObject(response.error) ? response.error : { message: "the response failed" }, where })
  }
  if (response.status === "completed" || response.status === "incomplete" || response.status === undefined) return undefined
  return invalid(`${provider} answered a response that is ${String(response.status)}, not completed`)
}

/**
 * A reasoning item worth keeping: one with its encrypted content (what `include` asks for). It
 * is kept without its `id` and `status`, and sent back so: an item with an id would name a
 * stored response, and its following items would have to be sent with their ids too.
 */
const reasoningOf = (owner: string, item: Json): Part.ReasoningPart | undefined => {
  if (item.type !== "reasoning" || typeof item.encrypted_content !== "string") return undefined
  const { id: _, status: __, ...kept } = item
  const summary = objects(item.summary).map((part) => text(part.text)).filter((line) => line.length > 0).join("\n\n")
  return { _tag: "Reasoning", provider: owner, text: summary, data: kept as Part.ReasoningPart["data"] }
}

/** The output formats of image generation, as media types. */
const imageFormats: { readonly [format: string]: string } = { png: "image/png", jpeg: "image/jpeg", jpg: "image/jpeg", webp: "image/webp" }

/**
 * The image of an `image_generation_call` item, as a file: its `result` (base64), its media type
 * from `output_format` when the item says it, else from its bytes. `undefined` for another item,
 * or one without a result (a generation that failed made no image).
 */
const imageOf = (provider: string, item: Json): Result.Result<Part.FilePart, ChatModel.ModelError> | undefined => {
  if (item.type !== "image_generation_call" || typeof item.result !== "string" || item.result.length === 0) return undefined
  const mediaType = imageFormats[text(item.output_format).toLowerCase()]
  return answerFile(provider, Part.image({ data: item.result, ...(mediaType === undefined ? {} : { mediaType }) }))
}

/** The images of a response's `output` (`image_generation_call` items), added to `answer`; the first that is not a file fails. */
const addImages = (answer: StreamFold<Call>, provider: string, response: Json): Result.Result<void, ChatModel.ModelError> => {
  for (const item of objects(response.output)) {
    const image = imageOf(provider, item)
    if (image === undefined) continue
    if (Result.isFailure(image)) return Result.fail(image.failure)
    answer.addFile(image.success)
  }
  return Result.void
}

/** The reasoning items of a response's `output` worth keeping, added to `answer`. */
const addReasoning = (answer: StreamFold<Call>, owner: string, response: Json) => {
  for (const item of objects(response.output)) {
    const part = reasoningOf(owner, item)
    if (part !== undefined) answer.addReasoning(part)
  }
}

const decode = (owner: string) => (body: unknown, provider: string): Result.Result<ChatModel.ChatResponse, ChatModel.ModelError> => {
  if (!isObject(body) || !Array.isArray(body.output)) {
    return Result.fail(invalid(`${provider} sent a body that is not a Responses API response: ${snippet(body, 200)}`))
  }
  const failure = unfinished(body, provider, "with HTTP 200")
  if (failure !== undefined) return Result.fail(failure)
  const answer = fold(provider)
  addText(answer, body)
  addReasoning(answer, owner, body)
  const images = addImages(answer, provider, body)
  if (Result.isFailure(images)) return Result.fail(images.failure)
  for (const item of callsOf(body)) answer.addCall(callOf(item))
  finishWith(answer, body)
  return answer.response()
}

/**
 * Reads a streamed response into a `StreamFold`. Text comes from `response.output_text.delta`,
 * a refusal from `response.refusal.delta`; function calls from `response.output_item.added`,
 * their argument deltas, and the whole arguments of `…arguments.done` / `output_item.done`
 * (which replace the deltas). A generated image (`image_generation_call`) is kept from its
 * `output_item.done`, or from the final response when none came so (partial images are not the
 * answer). An argument event finds its call by `item_id` (the output item's
 * `id`, not its `call_id`) or `output_index`. The final response adds any call it lists that
 * was not streamed (one that was is known by its item `id` or its `call_id`, and takes the final
 * response's whole arguments), and its text when no text was streamed. A reasoning item with encrypted content is kept from its
 * `output_item.done`, or from the final response when none came so. `response.completed` and `response.incomplete` end the answer;
 * `response.failed` and `error` fail it with the server's error. A stream that ends before one
 * of them was cut (`invalid-response`).
 */
const reader = (owner: string) => (provider: string): StreamReader => {
  const answer = fold(provider)
  /** A reasoning item came whole (`output_item.done`): the final response's are not added again. */
  let reasoned = false
  /** An image came whole (`output_item.done` of an `image_generation_call`): the final response's are not added again. */
  let imaged = false
  /** Text or a refusal came as deltas: the final response's text is not the answer's again. */
  let streamed = false
  const delta = (json: Json) => {
    const piece = text(json.delta)
    streamed = streamed || piece.length > 0
    return piece
  }
  /** Calls found by item id or by `#<output_index>`. */
  const byKey = new Map<string, Call>()
  const keys = (event: Json, itemId: unknown) => [
    ...(text(itemId).length > 0 ? [text(itemId)] : []),
    ...(typeof event.output_index === "number" ? [`#${event.output_index}`] : [])
  ]
  const find = (event: Json, itemId: unknown) =>
    keys(event, itemId).map((key) => byKey.get(key)).find((call) => call !== undefined)
  const remember = (event: Json, item: Json) => {
    const whole = callOf(item)
    let call = find(event, item.id)
    if (call === undefined) {
      call = whole
      answer.addCall(call)
    } else {
      call.id = text(item.call_id) || call.id || whole.id
      call.item = whole.item || call.item
      call.name = whole.name || call.name
      call.args = whole.args || call.args
    }
    for (const key of keys(event, item.id)) byKey.set(key, call)
  }
  /**
   * The final response's calls: one not streamed is added; one streamed takes the final
   * response's `call_id`, name and whole arguments where it has them (they replace the deltas,
   * as `…arguments.done` does: a call announced with empty arguments may get them only here).
   */
  const complete = (response: Json) => {
    for (const item of callsOf(response)) {
      const whole = callOf(item)
      const known = answer.toolCalls.find((call) => (whole.item.length > 0 && call.item === whole.item) || call.id === whole.id)
      if (known === undefined) {
        answer.addCall(whole)
        continue
      }
      known.id = text(item.call_id) || known.id
      known.name = whole.name || known.name
      known.args = whole.args || known.args
    }
  }

  const add = (event: Sse.Event): Result.Result<string, ChatModel.ModelError> => Result.flatMap(parseEvent(event, provider), (json) => read(event, json))

  const read = (event: Sse.Event, json: unknown): Result.Result<string, ChatModel.ModelError> => {
    // the event's name is the server's word: an `event: error` is an error, whatever its data says its type is
    if (event.event === "error") return Result.fail(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
    if (!isObject(json)) return Result.succeed("")
    const type = text(json.type) || event.event
    const item = isObject(json.item) ? json.item : undefined
    switch (type) {
      case "error":
        return Result.fail(errorFromPayload({ provider, payload: json, where: "mid-stream" }))
      case "response.failed":
      case "response.completed":
      case "response.incomplete": {
        const response = { ...(isObject(json.response) ? json.response : {}), status: type.slice("response.".length) }
        const failure = unfinished(response, provider, "mid-stream")
        if (failure !== undefined) return Result.fail(failure)
        // a server that streamed nothing: the answer is the final response's output, emitted now
        const added = streamed ? "" : addText(answer, response)
        complete(response)
        if (!reasoned) addReasoning(answer, owner, response)
        const images = imaged ? Result.void : addImages(answer, provider, response)
        if (Result.isFailure(images)) return Result.fail(images.failure)
        finishWith(answer, response)
        return Result.succeed(added)
      }
      case "response.output_text.delta":
        return Result.succeed(answer.addText(delta(json)))
      case "response.refusal.delta":
        return Result.succeed(answer.addRefusal(delta(json)))
      case "response.output_item.added":
      case "response.output_item.done": {
        if (item?.type === "function_call") remember(json, item)
        const reasoning = type === "response.output_item.done" && item !== undefined ? reasoningOf(owner, item) : undefined
        if (reasoning !== undefined) {
          reasoned = true
          answer.addReasoning(reasoning)
        }
        const image = type === "response.output_item.done" && item !== undefined ? imageOf(provider, item) : undefined
        if (image !== undefined) {
          if (Result.isFailure(image)) return Result.fail(image.failure)
          imaged = true
          answer.addFile(image.success)
        }
        return Result.succeed("")
      }
      case "response.function_call_arguments.delta": {
        const call = find(json, json.item_id)
        if (call !== undefined) call.args += text(json.delta)
        return Result.succeed("")
      }
      case "response.function_call_arguments.done": {
        const call = find(json, json.item_id)
        if (call !== undefined && typeof json.arguments === "string") call.args = json.arguments
        return Result.succeed("")
      }
      default:
        return Result.succeed("")
    }
  }

  return { add, finished: () => answer.finished, response: () => answer.response() }
}

/** The name of a reasoning model: OpenAI's `o…`, `gpt-5…` (but its `-chat` models) and `codex-…`. */
export const isReasoningModel = (model: string) => /^(o\d|gpt-5(?!.*-chat)|codex-)/.test(model)

/**
 * The Responses wire format, asking for `model`; with `strict`, each tool whose parameters strict
 * mode takes is sent in their strict form with `strict: true` (the others with `strict: false`). With
 * `reasoning`, the encrypted reasoning is asked for (`include`), kept marked with `owner`, and
 * sent back (only `owner`'s).
 */
export const wire = (model: string, strict: boolean, owner: string, reasoning: boolean): WireFormat => ({
  body: requestBody(model, strict, owner, reasoning),
  decode: decode(owner),
  reader: reader(owner),
  refusesFile: refuses,
  ignores: {
    fields: ["stop"],
    why: "the Responses API has no stop sequences; use ChatCompletionsModel (OpenAI's Chat Completions API takes stop) if the answer must end at one"
  }
})
