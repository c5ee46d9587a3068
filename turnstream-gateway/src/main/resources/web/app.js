// Renders turns from the gateway's SSE stream: upserts (the full current state of one item, bound
// to that item's element unless a higher version is there) and appends (new text of a streaming
// item), merged by the append rule in textOf() so text flows between upserts and heals from them.
"use strict";

const turnsEl = document.getElementById("turns");
const form = document.getElementById("ask");
const promptEl = document.getElementById("prompt");
const sendEl = document.getElementById("send");
const errorEl = document.getElementById("error");
let threadId = null;

function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

function pretty(value) {
  if (value === undefined || value === null) return "";
  return typeof value === "string" ? value : JSON.stringify(value, null, 2);
}

function showError(message) {
  errorEl.textContent = message;
  errorEl.hidden = !message;
}

/** One turn on the page: its status line and its items by id. */
function turnView(turnId) {
  const section = el("section", "turn");
  section.dataset.turnId = turnId;
  const head = el("div", "turn-head");
  head.append(el("span", "turn-id", turnId), el("span", "turn-status", "waiting"));
  const items = el("div", "items");
  section.append(head, items);
  turnsEl.append(section);
  const versions = new Map();
  const texts = new Map(); // item id -> { text, length }: what the page shows, in code points

  function textOf(itemId) {
    let shown = texts.get(itemId);
    if (!shown) texts.set(itemId, (shown = { text: "", length: 0, appends: 0 }));
    return shown;
  }

  // The append rule. An upsert's content replaces the text, unless it is a prefix of what is shown
  // (appends, read from another topic, ran ahead of it) and the item is not yet completed.
  function applyUpsertText(u) {
    const shown = textOf(u.itemId);
    const content = u.content || "";
    if (u.changeType === "completed" || !shown.text.startsWith(content)) {
      shown.text = content;
      shown.length = [...content].length;
    }
    return shown.text;
  }

  // An append applies when its offset (code points) is the length shown; what is already shown is
  // skipped; on a gap the next upsert brings the text.
  function applyAppend(a) {
    const shown = textOf(a.itemId);
    const added = [...a.text];
    if (a.offset > shown.length || a.offset + added.length <= shown.length) return false;
    const fresh = added.slice(shown.length - a.offset);
    shown.text += fresh.join("");
    shown.length += fresh.length;
    shown.appends++;
    return true;
  }

  function itemElement(upsert) {
    let node = section.querySelector(`[data-item-id="${CSS.escape(upsert.itemId)}"]`);
    if (node) return node;
    node = el("div", `item ${upsert.itemType}`);
    node.dataset.itemId = upsert.itemId;
    if (upsert.itemType === "tool_output") {
      // an output sits under its call when the call is on the page
      const call = upsert.callId && section.querySelector(`.tool_call[data-call-id="${CSS.escape(upsert.callId)}"]`);
      (call || items).append(node);
    } else {
      items.append(node);
    }
    return node;
  }

  function render(node, u) {
    const outputs = [...node.querySelectorAll(":scope > .tool_output")]; // a call's outputs stay under it
    node.className = `item ${u.itemType}`;
    node.classList.toggle("streaming", u.changeType !== "completed");
    node.replaceChildren();
    switch (u.itemType) {
      case "message": {
        node.classList.add(u.origin === "user" ? "user" : "agent");
        node.append(el("div", "meta", u.origin === "user" ? "you" : "assistant"), el("div", "content", applyUpsertText(u)));
        break;
      }
      case "reasoning": {
        const details = el("details");
        details.open = u.changeType !== "completed";
        details.append(el("summary", null, u.changeType === "completed" ? "Reasoning" : "Reasoning…"),
          el("div", "content", applyUpsertText(u)));
        node.append(details);
        break;
      }
      case "tool_call": {
        node.dataset.callId = u.callId || "";
        const call = el("div", "call");
        call.append(el("span", "badge", "tool"), " ", el("b", null, u.toolName || "tool"), " ", el("code", null, pretty(u.toolArguments)));
        node.append(call, ...outputs);
        break;
      }
      case "tool_output": {
        node.dataset.callId = u.callId || "";
        node.classList.toggle("failed", u.success === false);
        node.append(el("div", "meta", `output${u.success === false ? " (failed)" : ""}`),
          el("pre", "content", pretty(u.toolOutput !== undefined ? u.toolOutput : u.content)));
        break;
      }
      default: {
        node.append(el("div", "content", `${u.errorCode || "error"}: ${u.errorMessage || u.content || ""}`));
      }
    }
    node.dataset.version = String(u.version);
    node.dataset.appends = String(textOf(u.itemId).appends);
  }

  function bindItem(u) {
    const seen = versions.get(u.itemId);
    if (seen !== undefined && seen >= u.version) return; // stale: a newer state is already shown
    versions.set(u.itemId, u.version);
    if (u.changeType === "withdrawn") {
      // its model call failed and was made again: nothing of it stays on the page
      section.querySelector(`[data-item-id="${CSS.escape(u.itemId)}"]`)?.remove();
      return;
    }
    render(itemElement(u), u);
  }

  function bindAppend(a) {
    if (!applyAppend(a)) return;
    // before the item's first upsert the text is only kept: the upsert tells what kind of item it is
    const node = section.querySelector(`[data-item-id="${CSS.escape(a.itemId)}"]`);
    // a tool call's arguments have appends too; its element shows the parsed arguments of its upsert
    const showsText = node && (node.classList.contains("message") || node.classList.contains("reasoning"));
    const content = showsText && node.querySelector(".content");
    if (!content) return;
    content.textContent = textOf(a.itemId).text;
    node.dataset.appends = String(textOf(a.itemId).appends);
  }

  function bindTurnEvent(t) {
    const status = head.querySelector(".turn-status");
    const text = t.type === "turn_started" ? "running"
      : t.type === "turn_error" ? "error" : (t.status || "complete");
    status.textContent = text;
    status.className = `turn-status ${text}`;
    if (t.usage) status.title = `${t.usage.totalTokens} tokens`;
    if (t.error) section.append(el("div", "item error", `${t.error.code}: ${t.error.message}`));
  }

  // A status never ends the turn. The items of a failed attempt come back as "withdrawn" upserts
  // (bindItem); a retry or fallback status only says why.
  function bindStatus(s) {
    if (s.type === "tool_status") {
      const call = s.callId && section.querySelector(`.tool_call[data-call-id="${CSS.escape(s.callId)}"]`);
      if (call) call.dataset.status = s.status;
      return;
    }
    const status = head.querySelector(".turn-status");
    status.textContent = s.status === "retrying" ? `retrying (attempt ${s.attempt} in ${s.delayMs} ms)`
      : s.status === "fallback" ? `fell back to ${s.toModel}`
      : ["stalled", "compacting", "continuing"].includes(s.status) ? s.status : "running";
    status.className = "turn-status running";
  }

  return {
    bind(envelope) {
      if (envelope.payloadType === "item_upsert") bindItem(envelope.payload);
      else if (envelope.payloadType === "status") bindStatus(envelope.payload);
      else bindTurnEvent(envelope.payload);
    },
    append: bindAppend,
    finished: () => ["complete", "error", "aborted"].some((s) => head.querySelector(".turn-status").classList.contains(s)),
  };
}

/**
 * Follows a turn's SSE stream: upserts are unnamed events, appends "append" events. The browser
 * resumes with Last-Event-ID after a dropped connection.
 */
function follow(turnId) {
  const view = turnView(turnId);
  const events = new EventSource(`/v1/turns/${encodeURIComponent(turnId)}/events`);
  events.addEventListener("append", (message) => view.append(JSON.parse(message.data)));
  events.onmessage = (message) => {
    const envelope = JSON.parse(message.data);
    view.bind(envelope);
    if (envelope.payloadType === "turn_event" && envelope.payload.type !== "turn_started") {
      events.close();
      sendEl.disabled = false;
    }
  };
  events.onerror = () => {
    if (view.finished()) events.close();
  };
  return view;
}

form.addEventListener("submit", async (event) => {
  event.preventDefault();
  const prompt = promptEl.value.trim();
  if (!prompt) return;
  showError("");
  sendEl.disabled = true;
  try {
    const body = { prompt };
    if (threadId) body.threadId = threadId;
    const response = await fetch("/v1/turns", {
      method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(answer.error || `HTTP ${response.status}`);
    threadId = answer.threadId;
    promptEl.value = "";
    follow(answer.turnId);
  } catch (e) {
    showError(`Could not start the turn: ${e.message}`);
    sendEl.disabled = false;
  }
});

promptEl.addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) {
    event.preventDefault();
    form.requestSubmit();
  }
});

// /?turn=ID watches a turn that is already running or done (it starts from the turn's current state)
const watched = new URLSearchParams(location.search).get("turn");
if (watched) follow(watched);
