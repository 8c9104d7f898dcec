/**
 * Structured output through a tool (docs/decisions/061), for APIs without a JSON-Schema
 * answer format: Anthropic's Messages API, and any `effect/ai` `LanguageModel`. A request
 * with an `output` gets one more tool, named `output.name`, whose parameters are the answer's
 * JSON Schema; the model's call of it is the answer: its arguments become the response's text
 * (JSON), which the loop decodes like any final answer. The other tools stay callable in the
 * same run: the tool choice is left as asked, except that the answer tool is the model's only
 * choice when the agent has no other tools.
 */
import { ChatModel } from "@agentfx/core"
import { Effect, Result, Stream } from "effect"
import { unwritable, writeJson } from "./wireJson.js"

/** What the model is told the answer tool is for. */
export const description =
  "Give your final answer by calling this tool once you have everything you need: its input is the answer, in exactly this shape."

/** The request with the answer tool, or why it cannot have it; `undefined` when it asks for no output format. */
const prepare = (provider: string, request: ChatModel.ChatRequest): Result.Result<ChatModel.ChatRequest, ChatModel.ModelError> | undefined => {
  const output = request.output
  if (output === undefined) return undefined
  if (request.tools.some((tool) => tool.name === output.name)) {
    return Result.fail(new ChatModel.ModelError({
      reason: "invalid-request",
      message: `${provider} takes the final answer through a tool named "${output.name}", and the agent has a tool of that name: rename the agent's tool.`
    }))
  }
  const alone = request.tools.length === 0 && (request.toolChoice === "auto" || request.toolChoice === "required")
  return Result.succeed({
    ...request,
    output: undefined,
    tools: [...request.tools, { name: output.name, description, parameters: output.schema }],
    toolChoice: alone ? { tool: output.name } : request.toolChoice
  })
}

/**
 * The response with the first call of the answer tool taken as its text (the arguments as
 * JSON; arguments that were not JSON, as they came). Text the model wrote beside it is not
 * the answer and is left out; other calls stay, so the run goes on with them. Finish reason
 * `stop` when the answer was the only call.
 */
const answered = (name: string, response: ChatModel.ChatResponse): ChatModel.ChatResponse => {
  const answer = response.toolCalls.find((call) => call.name === name)
  if (answer === undefined) return response
  const toolCalls = response.toolCalls.filter((call) => call.name !== name)
  return {
    ...response,
    text: typeof answer.args === "string" ? answer.args : writeJson(answer.args) ?? unwritable,
    toolCalls,
    finishReason: toolCalls.length === 0 && response.finishReason === "tool-calls" ? "stop" : response.finishReason
  }
}

/**
 * `model` taking `output` through the answer tool. Streamed, the answer arrives as one
 * `TextDelta` just before the `Done`. An agent tool named like the answer tool fails the call
 * with `invalid-request`, before any request.
 */
export const viaAnswerTool = (provider: string, model: ChatModel.ChatModel.Service): ChatModel.ChatModel.Service => ({
  ...model,
  generate: (request) => {
    const prepared = prepare(provider, request)
    if (prepared === undefined) return model.generate(request)
    return Result.match(prepared, {
      onFailure: Effect.fail,
      onSuccess: (withTool) => Effect.map(model.generate(withTool), (response) => answered(request.output!.name, response))
    })
  },
  stream: (request) => {
    const prepared = prepare(provider, request)
    if (prepared === undefined) return model.stream(request)
    return Result.match(prepared, {
      onFailure: Stream.fail,
      onSuccess: (withTool) =>
        model.stream(withTool).pipe(
          Stream.map((part): ReadonlyArray<ChatModel.StreamPart> => {
            if (part._tag === "TextDelta") return [part]
            const response = answered(request.output!.name, part.response)
            return response === part.response ? [part] : [{ _tag: "TextDelta", text: response.text }, { _tag: "Done", response }]
          }),
          Stream.flattenIterable
        )
    })
  }
})
