// Capture plugin for OpenCode 1.x (V1 plugin API): records the raw inputs of every hook point.
//
// Installed by run.sh as $XDG_CONFIG_HOME/opencode/plugins/capture.js. For each call it serializes
// {hook, input, output} (cycle-safe; the plugin's `client` SDK object and `$` shell are replaced by
// markers) and pipes it to `python3 tests/e2e/hooklog.py $CAPTURE_LOGDIR <name>` where <name> is the
// hook name, or event.type for the `event` hook. spawnSync blocks OpenCode while the logger runs,
// which keeps the log in call order.
//
// Driver switches (environment):
//   CAPTURE_LOGDIR            where hooklog.py writes hooks.jsonl (required)
//   CAPTURE_HOOKLOG           path of hooklog.py
//   CAPTURE_PERMISSION_REPLY  "once"|"always"|"reject": answer permission.asked through the SDK
//   CAPTURE_REPROMPT          text: on the first session.idle, send it back via client.session.prompt
import { spawnSync } from "node:child_process"

const LOGDIR = process.env.CAPTURE_LOGDIR
const HOOKLOG = process.env.CAPTURE_HOOKLOG || "/work/main/tests/e2e/hooklog.py"

function serialize(obj, skip) {
  const seen = new WeakSet()
  return JSON.stringify(obj, (key, value) => {
    if (typeof value === "object" && value !== null) {
      if (skip.has(value)) return `[${skip.get(value)} omitted]`
      if (seen.has(value)) return "[Circular]"
      seen.add(value)
    }
    if (typeof value === "function") return skip.has(value) ? `[${skip.get(value)} omitted]` : undefined
    if (typeof value === "bigint") return value.toString()
    return value
  })
}

function keysDeep(obj, depth = 2) {
  // method/namespace names of the SDK client, to find the permission reply route
  const out = {}
  const seen = new Set()
  let o = obj
  while (o && o !== Object.prototype && !seen.has(o)) {
    seen.add(o)
    for (const k of Object.getOwnPropertyNames(o)) {
      if (k === "constructor" || k.startsWith("_")) continue
      let v
      try { v = obj[k] } catch { continue }
      if (typeof v === "function") out[k] = "function"
      else if (v && typeof v === "object" && depth > 0) out[k] = keysDeep(v, depth - 1)
    }
    o = Object.getPrototypeOf(o)
  }
  return out
}

export const CapturePlugin = async (pluginInput) => {
  const skip = new Map([[pluginInput.client, "client"], [pluginInput.$, "$"]])
  const log = (name, payload) => {
    if (!LOGDIR) return ""
    const r = spawnSync("python3", [HOOKLOG, LOGDIR, name], { input: serialize(payload, skip), encoding: "utf8" })
    return r.stdout || ""
  }
  log("plugin.init", {
    hook: "plugin.init",
    input: pluginInput,
    inputKeys: Object.keys(pluginInput),
    clientKeys: keysDeep(pluginInput.client),
  })
  const record = (hook) => async (input, output) => { log(hook, { hook, input, output }) }
  let reprompted = false

  return {
    event: async (input) => {
      const ev = input.event
      log(ev.type, { hook: "event", input, output: null })
      const c = pluginInput.client
      // replies run in the background (not awaited) so the event handler never blocks the bus
      if (ev.type === "permission.asked" && process.env.CAPTURE_PERMISSION_REPLY) (async () => {
        const p = ev.properties
        const reply = process.env.CAPTURE_PERMISSION_REPLY
        let result
        try {
          if (c.permission && typeof c.permission.reply === "function") {
            result = await c.permission.reply({ requestID: p.id, reply })
          } else {
            result = await c.postSessionIdPermissionsPermissionId({
              path: { id: p.sessionID, permissionID: p.id }, body: { response: reply } })
          }
          log("capture.permission-reply", { hook: "capture.permission-reply", input: p, output: {
            data: result && result.data, error: result && result.error,
            status: result && result.response && result.response.status,
            url: result && result.request && result.request.url, method: result && result.request && result.request.method } })
        } catch (e) {
          log("capture.permission-reply", { hook: "capture.permission-reply", input: p, output: { thrown: String(e && e.stack || e) } })
        }
      })()
      if (ev.type === "session.idle" && process.env.CAPTURE_REPROMPT && !reprompted) (async () => {
        reprompted = true
        const id = ev.properties.sessionID
        let result
        try {
          result = await c.session.prompt({ path: { id }, body: { parts: [{ type: "text", text: process.env.CAPTURE_REPROMPT }] } })
          log("capture.reprompt", { hook: "capture.reprompt", input: { sessionID: id }, output: {
            error: result && result.error, status: result && result.response && result.response.status,
            url: result && result.request && result.request.url } })
        } catch (e) {
          log("capture.reprompt", { hook: "capture.reprompt", input: { sessionID: id }, output: { thrown: String(e && e.stack || e) } })
        }
      })()
    },
    "chat.message": record("chat.message"),
    "tool.execute.before": record("tool.execute.before"),
    "tool.execute.after": record("tool.execute.after"),
    "permission.ask": record("permission.ask"),
    "command.execute.before": record("command.execute.before"),
    "shell.env": record("shell.env"),
  }
}
