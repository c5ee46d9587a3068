// Drives the gateway's OpenAI-compatible routes with the official `openai` npm client: Chat Completions
// and Responses, streaming and not, a client-side tool round trip on each, a Responses request continuing the
// previous one with a picture, and a refused request.
// Prints one JSON object on stdout for the Java integration test to check.
//
//   node openai.mjs BASE_URL API_KEY
import OpenAI from "openai";

const [baseUrl, apiKey] = process.argv.slice(2);
const client = new OpenAI({ baseURL: `${baseUrl}/v1`, apiKey: apiKey || "no-key", maxRetries: 0 });
const MODEL = "simulated";
const PROMPT = "What is in this workspace?";
const TOOL_PROMPT = "What does notes.md say?";
const NOTES = "# Launch notes\nThe countdown starts at ten.";
/** A 1x1 PNG. */
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
const readFile = {
  name: "read_file",
  description: "Reads a file on the caller's machine",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

function ids(response) {
  return { turnId: response.headers.get("x-turnstream-turn-id"), threadId: response.headers.get("x-turnstream-thread-id") };
}

async function chat() {
  const { data, response } = await client.chat.completions
    .create({ model: MODEL, messages: [{ role: "user", content: PROMPT }] }).withResponse();
  return { ...ids(response), content: data.choices[0].message.content, finishReason: data.choices[0].finish_reason,
    usage: data.usage, id: data.id, object: data.object };
}

async function chatStream() {
  const { data: stream, response } = await client.chat.completions
    .create({ model: MODEL, messages: [{ role: "user", content: PROMPT }], stream: true,
      stream_options: { include_usage: true } }).withResponse();
  let content = "";
  let chunks = 0;
  let finishReason = null;
  let usage = null;
  for await (const chunk of stream) {
    chunks++;
    if (chunk.usage) usage = chunk.usage;
    for (const choice of chunk.choices) {
      content += choice.delta?.content ?? "";
      finishReason = choice.finish_reason ?? finishReason;
    }
  }
  return { ...ids(response), content, chunks, finishReason, usage };
}

async function responses() {
  const { data, response } = await client.responses.create({ model: MODEL, input: PROMPT }).withResponse();
  return { ...ids(response), outputText: data.output_text, status: data.status,
    outputTypes: data.output.map((item) => item.type), usage: data.usage };
}

async function responsesStream() {
  const { data: stream, response } = await client.responses
    .create({ model: MODEL, input: PROMPT, stream: true }).withResponse();
  const events = [];
  let text = "";
  let completed = null;
  for await (const event of stream) {
    events.push(event.type);
    if (event.type === "response.output_text.delta") text += event.delta;
    if (event.type === "response.completed") completed = event.response;
  }
  return { ...ids(response), events, text, status: completed?.status, outputText: completed?.output_text ??
    completed?.output.filter((i) => i.type === "message").flatMap((i) => i.content.map((c) => c.text)).join("") };
}

/** Chat Completions, not streaming: the model calls the caller's read_file; its result continues the thread. */
async function chatToolRoundTrip() {
  const tools = [{ type: "function", function: readFile }];
  const messages = [{ role: "user", content: TOOL_PROMPT }];
  const first = await client.chat.completions.create({ model: MODEL, messages, tools }).withResponse();
  const message = first.data.choices[0].message;
  const call = message.tool_calls?.[0];
  messages.push(message, { role: "tool", tool_call_id: call.id, content: NOTES });
  const second = await client.chat.completions.create({ model: MODEL, messages, tools },
    { headers: { "x-turnstream-thread-id": first.response.headers.get("x-turnstream-thread-id") } }).withResponse();
  return {
    first: { ...ids(first.response), finishReason: first.data.choices[0].finish_reason, content: message.content,
      toolName: call?.function.name, arguments: JSON.parse(call?.function.arguments ?? "null") },
    second: { ...ids(second.response), finishReason: second.data.choices[0].finish_reason,
      content: second.data.choices[0].message.content },
  };
}

/** The Responses API, streaming: the function_call output item, then its function_call_output. */
async function responsesToolRoundTrip() {
  const tools = [{ type: "function", ...readFile }];
  const input = [{ role: "user", content: TOOL_PROMPT }];
  const stream = client.responses.stream({ model: MODEL, input, tools });
  const events = [];
  stream.on("event", (event) => events.push(event.type));
  const first = await stream.finalResponse();
  const call = first.output.find((item) => item.type === "function_call");
  input.push(...first.output, { type: "function_call_output", call_id: call.call_id, output: NOTES });
  const second = await client.responses.create({ model: MODEL, input, tools });
  return {
    first: { id: first.id, status: first.status, outputTypes: first.output.map((i) => i.type), events,
      name: call?.name, arguments: JSON.parse(call?.arguments ?? "null") },
    second: { id: second.id, status: second.status, outputText: second.output_text },
  };
}

/** A Responses request that continues the previous response with a picture: the answer names the one it continued. */
async function responsesWithPicture() {
  const first = await client.responses.create({ model: MODEL, input: PROMPT });
  const second = await client.responses.create({ model: MODEL, previous_response_id: first.id,
    input: [{ role: "user", content: [{ type: "input_text", text: "And what is in this picture?" },
      { type: "input_image", image_url: `data:image/png;base64,${PNG}`, detail: "auto" }] }] });
  return { firstId: first.id, id: second.id, status: second.status, previousResponseId: second.previous_response_id };
}

async function refused() {
  try {
    await client.chat.completions.create({ model: MODEL, messages: [] });
    return { status: null };
  } catch (e) {
    return { status: e.status, type: e.type ?? e.error?.type, message: e.message };
  }
}

const result = {
  chat: await chat(),
  chatStream: await chatStream(),
  responses: await responses(),
  responsesStream: await responsesStream(),
  chatToolRoundTrip: await chatToolRoundTrip(),
  responsesToolRoundTrip: await responsesToolRoundTrip(),
  responsesWithPicture: await responsesWithPicture(),
  refused: await refused(),
};
process.stdout.write(JSON.stringify(result));
