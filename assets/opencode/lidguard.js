// <lidguard OpenCode plugin start>
// lidguard OpenCode plugin version: 1
// Managed by lidguard: `lidguard hook-install --provider opencode` writes this file and
// `lidguard hook-remove --provider opencode` removes it; edits here are overwritten.
//
// A thin forwarder for OpenCode 1.x plugins: for the hook points and bus events lidguard acts on,
// it runs `lidguard opencode-hook --event <name>` with what OpenCode handed the plugin on stdin.
// lidguard decides everything; this file only carries the answer to a permission request back to
// OpenCode. A failing or missing lidguard never blocks OpenCode: every error is swallowed.
import { spawn } from "node:child_process";

const COMMAND = __LIDGUARD_COMMAND__;

// Bus events lidguard acts on; everything else never leaves OpenCode.
const FORWARDED_EVENTS = new Set([
  "permission.asked",
  "permission.replied",
  "question.asked",
  "question.replied",
  "question.rejected",
  "session.idle",
  "session.error",
  "session.deleted",
]);

// Events that end a turn or a session: they carry the last assistant text.
const ENDING_EVENTS = new Set(["session.idle", "session.error", "session.deleted"]);

function runHook(eventName, payload) {
  return new Promise((resolve) => {
    let out = "";
    let child;
    try {
      child = spawn(COMMAND[0], [...COMMAND.slice(1), "--event", eventName], {
        stdio: ["pipe", "pipe", "ignore"],
        windowsHide: true,
      });
    } catch {
      resolve("");
      return;
    }
    child.on("error", () => resolve(""));
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("close", () => resolve(out.trim()));
    child.stdin.on("error", () => {});
    child.stdin.end(JSON.stringify(payload));
  });
}

function decisionOf(text) {
  try {
    const value = JSON.parse(text);
    return value && (value.status === "allow" || value.status === "deny") ? value : null;
  } catch {
    return null;
  }
}

export const LidguardOpenCodePlugin = async ({ client, directory, serverUrl }) => {
  // sessionID -> the last complete assistant text part, for end-of-turn events.
  const lastText = new Map();
  const forward = (eventName, hook, input, output, extra = {}) =>
    runHook(eventName, { hook, input, output, directory, ...extra });

  // Verified with OpenCode 1.18.33: `POST /permission/{id}/reply` takes a message, which the
  // model then reads as feedback and carries on; the V1 SDK has no method for it, so it is called
  // directly. The SDK's `postSessionIdPermissionsPermissionId` (no message; the turn then ends)
  // is the fallback when the server cannot be reached that way.
  const answerPermission = async (props, decision) => {
    const reply = decision.status === "allow" ? "once" : "reject";
    try {
      const url = new URL(`permission/${encodeURIComponent(props.id)}/reply`, serverUrl);
      const response = await fetch(url, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ reply, message: decision.message }),
      });
      if (response.ok) return;
    } catch {}
    try {
      await client.postSessionIdPermissionsPermissionId({
        path: { id: props.sessionID, permissionID: props.id },
        body: { response: reply },
      });
    } catch {}
  };

  return {
    "chat.message": async (input, output) => {
      await forward("chat.message", "chat.message", input, { parts: output?.parts ?? [] });
    },
    "tool.execute.before": async (input) => {
      await forward("tool.execute.before", "tool.execute.before", input, null);
    },
    "tool.execute.after": async (input) => {
      await forward("tool.execute.after", "tool.execute.after", input, null);
    },
    // Declared by the plugin API; OpenCode 1.18 does not call it (permission.asked below does
    // the work there), but a build that does gets the same answer.
    "permission.ask": async (input, output) => {
      const decision = decisionOf(await forward("permission.ask", "permission.ask", input, null));
      if (decision) output.status = decision.status;
    },
    event: async ({ event }) => {
      const type = event?.type;
      const props = event?.properties ?? {};
      if (type === "message.part.updated") {
        const part = props.part;
        if (part?.type === "text" && part.time?.end && part.text) {
          lastText.set(part.sessionID ?? props.sessionID, part.text);
        }
        return;
      }
      if (!FORWARDED_EVENTS.has(type)) return;
      const extra = {};
      if (ENDING_EVENTS.has(type)) {
        extra.lastAssistantMessage = lastText.get(props.sessionID);
        lastText.delete(props.sessionID);
      }
      const reply = await forward(type, "event", { event }, null, extra);
      if (type === "permission.asked") {
        const decision = decisionOf(reply);
        // Not awaited: the event loop is never held up by the reply.
        if (decision) answerPermission(props, decision);
      }
    },
  };
};
// <lidguard OpenCode plugin end>
