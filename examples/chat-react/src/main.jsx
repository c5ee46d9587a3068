// A minimal chat on the Turnstream gateway: useChat (@ai-sdk/react) posts to /api/chat and reads the
// turn as a UI message stream; with resume it reattaches to the chat's running turn after a reload
// (GET /api/chat/{chatId}/stream). Tool calls show their streaming input, their status (data parts)
// and, when the tool executor holds one for approval, buttons that decide it.
//
// Query parameters: gateway (default http://localhost:8080; its
// turnstream.gateway.cors.allowed-origins must list this page's origin), chat (the chat id, kept in
// the address so that a reload resumes the same chat).
import { useChat } from "@ai-sdk/react";
import { DefaultChatTransport } from "ai";
import { useState } from "react";
import { createRoot } from "react-dom/client";

const params = new URLSearchParams(location.search);
const gateway = (params.get("gateway") ?? "http://localhost:8080").replace(/\/$/, "");
const chatId = params.get("chat") ?? `chat-${crypto.randomUUID()}`;
if (!params.has("chat")) {
  params.set("chat", chatId);
  history.replaceState(null, "", `?${params}`);
}
const transport = new DefaultChatTransport({ api: `${gateway}/api/chat` });

async function decide(approval, approved) {
  const url = `${gateway}/v1/turns/${encodeURIComponent(approval.turnId)}/tool-calls/${encodeURIComponent(approval.callId)}/approval`;
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ approved }),
  });
  if (!response.ok) throw new Error(`approval: HTTP ${response.status} ${await response.text()}`);
}

/** The message's parts without those of withdrawn model calls, and its data parts by call id. */
function view(message) {
  const withdrawn = new Set();
  const statuses = new Map();
  const approvals = new Map();
  for (const part of message.parts) {
    if (part.type === "data-withdrawn") {
      (part.data.itemIds ?? []).forEach((id) => withdrawn.add(id));
      (part.data.callIds ?? []).forEach((id) => withdrawn.add(id));
    } else if (part.type === "data-tool-status") {
      statuses.set(part.id, part.data);
    } else if (part.type === "data-approval") {
      approvals.set(part.id, part.data);
    }
  }
  const parts = message.parts.filter((part) => !withdrawn.has(part.id) && !withdrawn.has(part.toolCallId));
  return { parts, statuses, approvals };
}

function ToolPart({ part, status, approval }) {
  const [error, setError] = useState(null);
  const name = part.type.slice("tool-".length);
  const pending = approval?.state === "requested";
  const answer = (approved) => decide(approval, approved).catch((e) => setError(e.message));
  return (
    <div className="tool" data-tool={name} data-state={part.state} data-call-id={part.toolCallId}>
      <b>{name}</b> <code className="input">{part.input === undefined ? "" : JSON.stringify(part.input)}</code>
      {status && <span className="status"> {status.status}</span>}
      {pending && (
        <span className="approval">
          <button className="approve" onClick={() => answer(true)}>Approve</button>
          <button className="deny" onClick={() => answer(false)}>Deny</button>
        </span>
      )}
      {approval && !pending && <span className="decision"> {approval.state}</span>}
      {part.state === "output-available" && <pre className="output">{typeof part.output === "string" ? part.output : JSON.stringify(part.output, null, 2)}</pre>}
      {part.state === "output-error" && <pre className="output error">{part.errorText}</pre>}
      {error && <div className="error">{error}</div>}
    </div>
  );
}

function Message({ message }) {
  const { parts, statuses, approvals } = view(message);
  return (
    <div className={`message ${message.role}`} data-message-id={message.id}>
      {parts.map((part, i) => {
        if (part.type === "text") return <p key={i} className="text">{part.text}</p>;
        if (part.type === "reasoning") return <details key={i} className="reasoning"><summary>Reasoning</summary>{part.text}</details>;
        if (part.type.startsWith("tool-")) {
          return <ToolPart key={part.toolCallId} part={part} status={statuses.get(part.toolCallId)} approval={approvals.get(part.toolCallId)} />;
        }
        return null; // step boundaries and data parts are shown through the parts above
      })}
    </div>
  );
}

function App() {
  const { messages, sendMessage, status, error } = useChat({ id: chatId, transport, resume: true });
  const [input, setInput] = useState("");
  const submit = (event) => {
    event.preventDefault();
    if (!input.trim()) return;
    sendMessage({ text: input });
    setInput("");
  };
  return (
    <main>
      <h1>Turnstream chat</h1>
      <div id="messages">{messages.map((m) => <Message key={m.id} message={m} />)}</div>
      {error && <div className="error" id="error">{error.message}</div>}
      <form onSubmit={submit}>
        <input id="prompt" value={input} onChange={(e) => setInput(e.target.value)} placeholder="Ask about the workspace" />
        <button id="send" type="submit" disabled={status === "submitted" || status === "streaming"}>Send</button>
        <span id="status">{status}</span>
      </form>
    </main>
  );
}

createRoot(document.getElementById("root")).render(<App />);
