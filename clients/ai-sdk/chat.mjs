// Drives the gateway's /api/chat with the AI SDK's own client code: DefaultChatTransport sends the
// request as useChat does and parses the UI message stream; readUIMessageStream folds its chunks into
// UIMessages. Prints one JSON object on stdout for the Java integration test to check.
//
//   node chat.mjs send      BASE_URL CHAT_ID PROMPT   a turn, read to the end
//   node chat.mjs resume    BASE_URL CHAT_ID PROMPT   a turn whose connection drops mid-stream, then resumed
//   node chat.mjs malformed BASE_URL                  a request the gateway must refuse
import { DefaultChatTransport, readUIMessageStream } from "ai";

const [command, baseUrl, chatId, prompt] = process.argv.slice(2);
const statuses = [];
const transport = new DefaultChatTransport({
  api: `${baseUrl}/api/chat`,
  body: { provider: "simulated" },
  // the transport reports only the body of a refused request: keep each status too
  fetch: async (url, init) => {
    const response = await fetch(url, init);
    statuses.push(response.status);
    return response;
  },
});

function userMessage(text) {
  return { id: `user-${Date.now()}`, role: "user", parts: [{ type: "text", text }] };
}

/** Splits a chunk stream: the chunk types go to `seen`, the chunks on to the caller. */
function recording(stream, seen) {
  return stream.pipeThrough(new TransformStream({
    transform(chunk, controller) {
      seen.push(chunk.type);
      controller.enqueue(chunk);
    },
  }));
}

/** Reads a stream of chunks to its end: the ids of the messages it built and the last snapshot. */
async function readMessages(stream) {
  const ids = new Set();
  let message;
  const errors = [];
  for await (const snapshot of readUIMessageStream({ stream, onError: (e) => errors.push(String(e.message ?? e)) })) {
    ids.add(snapshot.id);
    message = snapshot;
  }
  return { messageIds: [...ids], message, errors };
}

async function send() {
  const chunks = [];
  const stream = await transport.sendMessages({
    chatId, messages: [userMessage(prompt)], trigger: "submit-message", messageId: undefined,
    abortSignal: undefined,
  });
  return { statuses, chunks, ...(await readMessages(recording(stream, chunks))) };
}

async function resume() {
  const aborter = new AbortController();
  const firstChunks = [];
  const stream = await transport.sendMessages({
    chatId, messages: [userMessage(prompt)], trigger: "submit-message", messageId: undefined,
    abortSignal: aborter.signal,
  });
  const reader = stream.getReader();
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error("the turn ended before the connection could be dropped");
    firstChunks.push(value.type);
    if (value.type === "text-delta") break;
  }
  aborter.abort(); // the connection drops mid-turn, as when a page reloads
  await reader.cancel().catch(() => {});
  const chunks = [];
  const resumed = await transport.reconnectToStream({ chatId });
  if (resumed === null) throw new Error("the gateway answered 204: no running turn for the chat");
  return { statuses, firstChunks, chunks, ...(await readMessages(recording(resumed, chunks))) };
}

async function malformed() {
  try {
    await transport.sendMessages({
      chatId: "chat-malformed", messages: [], trigger: "submit-message", messageId: undefined, abortSignal: undefined,
    });
    return { statuses, error: null };
  } catch (e) {
    return { statuses, error: e.message };
  }
}

const commands = { send, resume, malformed };
if (!commands[command]) {
  console.error(`usage: node chat.mjs send|resume|malformed BASE_URL [CHAT_ID PROMPT]`);
  process.exit(2);
}
console.log(JSON.stringify(await commands[command]()));
