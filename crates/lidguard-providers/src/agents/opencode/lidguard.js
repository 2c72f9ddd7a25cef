// <lidguard OpenCode plugin start>
// lidguard OpenCode plugin version: 2
// Managed by lidguard: `lidguard hook-install --provider __LIDGUARD_PROVIDER__` writes this file and
// `lidguard hook-remove --provider __LIDGUARD_PROVIDER__` removes it; edits here are overwritten.
//
// A thin forwarder for OpenCode 1.x plugins: for the hook points and bus events lidguard acts on,
// it runs `lidguard opencode-hook --event <name>` with what OpenCode handed the plugin on stdin.
// lidguard decides everything; this file only carries its answers back to OpenCode: the answer
// to a permission request, and the user's reply to "ask before sleep", sent back into the session
// as a new prompt. A failing or missing lidguard never blocks OpenCode: every error is swallowed.
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

// The end of a turn the user's reply may continue (ask before sleep). Never an error or a deletion.
const CONTINUABLE_EVENTS = new Set(["session.idle"]);

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
    try {
      child.stdin.end(JSON.stringify(payload));
    } catch {
      // Not serializable: the hook gets nothing and reads no event.
      child.stdin.destroy();
    }
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

// `{"decision":"block","reason":"<reply>"}`: the user's reply, to send back into the session.
function continuationOf(text) {
  try {
    const value = JSON.parse(text);
    const ok = value && value.decision === "block" && typeof value.reason === "string";
    return ok && value.reason.trim() ? value.reason : null;
  } catch {
    return null;
  }
}

export const LidguardOpenCodePlugin = async ({ client, directory, serverUrl }) => {
  // sessionID -> the last complete assistant text part, for end-of-turn events.
  const lastText = new Map();
  // Sessions whose continuable stop is being handled (lidguard may hold it for minutes).
  const stopping = new Set();
  // Sessions whose last continuable stop was continued with the user's reply.
  const continued = new Set();
  // sessionID -> how many continuable stops were forwarded (did the continued turn stop?).
  const stops = new Map();
  const forward = (eventName, hook, input, output, extra = {}) =>
    runHook(eventName, { hook, input, output, directory, ...extra });

  const warn = async (message) => {
    try {
      await client.app.log({ body: { service: "lidguard", level: "warn", message } });
    } catch {}
  };

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

  // Sends the user's reply into the session as a new prompt. The V1 SDK (1.18.33) has
  // `client.session.promptAsync` (`POST /session/{id}/prompt_async`: 204 once the prompt is
  // accepted; the turn then runs on its own) and `client.session.prompt` (`POST
  // /session/{id}/message`, answered when the whole turn is over), both with
  // `{path:{id}, body:{parts}}`. The async one is preferred: whether the reply got in is known at
  // once, and never mixed up with how the continued turn went. The SDK returns `{error}` rather
  // than throwing unless asked to; `throwOnError` makes every failure a throw.
  const sendPrompt = async (sessionID, text) => {
    const session = client?.session;
    const send =
      typeof session?.promptAsync === "function"
        ? session.promptAsync.bind(session)
        : typeof session?.prompt === "function"
          ? session.prompt.bind(session)
          : null;
    if (!send) throw new Error("this OpenCode has no client.session.prompt");
    const result = await send({
      path: { id: sessionID },
      body: { parts: [{ type: "text", text }] },
      throwOnError: true,
    });
    if (result?.error) throw new Error(JSON.stringify(result.error));
  };

  // A continuable stop: one at a time per session (a second one while lidguard still holds the
  // first is dropped: the first already ended the turn). When lidguard answers with the user's
  // reply, it goes back into the session; the continued turn's stop then says
  // `stopHookActive: true`. If the reply cannot be sent, the session is ended in lidguard (the
  // hook runs once more as `session.error`), since lidguard resumed it for a turn that never
  // comes.
  const continuableStop = async (type, event, sessionID, extra) => {
    if (stopping.has(sessionID)) return;
    stopping.add(sessionID);
    const stopHookActive = continued.delete(sessionID);
    const count = (stops.get(sessionID) ?? 0) + 1;
    stops.set(sessionID, count);
    let reply = null;
    try {
      reply = continuationOf(await forward(type, "event", { event }, null, { ...extra, stopHookActive }));
    } finally {
      stopping.delete(sessionID);
    }
    if (reply === null) return;
    continued.add(sessionID);
    try {
      await sendPrompt(sessionID, reply);
    } catch (error) {
      // Only when the continued turn did not already stop (which lidguard then saw).
      if (stops.get(sessionID) !== count) return;
      continued.delete(sessionID);
      await warn(`lidguard: could not send the reply back into session ${sessionID}: ${error}`);
      const failed = {
        type: "session.error",
        properties: {
          sessionID,
          error: { name: "LidguardContinuationFailed", data: { message: String(error) } },
        },
      };
      await forward("session.error", "event", { event: failed }, null);
    }
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
    event: async (input) => {
      try {
        const event = input?.event;
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
        if (type === "session.deleted") {
          continued.delete(props.sessionID);
          stops.delete(props.sessionID);
        }
        if (CONTINUABLE_EVENTS.has(type) && props.sessionID) {
          // Not awaited: lidguard may hold this stop for minutes (ask before sleep). OpenCode
          // 1.18.33 calls `event` hooks without awaiting them (its bus listener runs
          // `hook.event?.(…)` in a synchronous loop and drops the promise), so awaiting here
          // would hold up nothing there; a build that awaits its plugins' event hooks one after
          // another would stall every later event behind this one, so it runs detached.
          continuableStop(type, event, props.sessionID, extra).catch(() => {});
          return;
        }
        const reply = await forward(type, "event", { event }, null, extra);
        if (type === "permission.asked") {
          const decision = decisionOf(reply);
          // Not awaited: the event loop is never held up by the reply.
          if (decision) answerPermission(props, decision).catch(() => {});
        }
      } catch {}
    },
  };
};
// <lidguard OpenCode plugin end>
