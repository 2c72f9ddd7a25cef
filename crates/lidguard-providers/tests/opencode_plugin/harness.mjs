// Runs lidguard's OpenCode plugin (the file `hook-install` writes, with its command replaced by
// fake_hook.mjs) against a fake OpenCode 1.x client, the way OpenCode 1.18.33 calls it: the
// plugin function with `{client, directory, serverUrl}`, then its hooks and `event` with
// `{event: {id, type, properties}}`. Checks ask before sleep on the plugin's side.
//
//   node harness.mjs <plugin.mjs> <scratch dir>        (run by tests/opencode.rs)
//
// Prints "harness: all checks passed" and exits 0, or names the failed check and exits 1.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [pluginPath, dir] = process.argv.slice(2);
process.env.FAKE_DIR = dir;
const REPLY = "also update the README";
const BLOCK = JSON.stringify({ decision: "block", reason: REPLY });

let failed = 0;
function check(name, ok, detail) {
  if (ok) console.log(`ok   ${name}`);
  else {
    failed++;
    console.log(`FAIL ${name}: ${JSON.stringify(detail)}`);
  }
}
process.on("unhandledRejection", (e) => check("no unhandled rejection", false, String(e)));

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
async function waitFor(pred, ms = 5000) {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const v = pred();
    if (v) return v;
    await sleep(20);
  }
  return pred();
}
function lines(name) {
  try {
    return readFileSync(join(dir, name), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {
    return [];
  }
}
const calls = (key) => lines("calls.jsonl").filter((c) => !key || c.key === key);
const ends = (key) => lines("ends.jsonl").filter((c) => c.key === key);

const script = {};
function answer(key, ...outs) {
  script[key] = outs;
  writeFileSync(join(dir, "script.json"), JSON.stringify(script));
}

// A fake V1 SDK client: records prompt calls and logs; `session` decides what prompting does.
function client(session) {
  const c = { prompts: [], logs: [] };
  c.app = { log: async (o) => c.logs.push(o) };
  c.session = {};
  for (const [name, impl] of Object.entries(session)) {
    c.session[name] = async (o) => {
      c.prompts.push({ name, o });
      return impl(o);
    };
  }
  return c;
}

const mod = await import(pathToFileURL(pluginPath).href);
const plugin = Object.values(mod).find((v) => typeof v === "function");
const load = (c) => plugin({ client: c, directory: "/proj", serverUrl: new URL("http://127.0.0.1:9/") });
const ev = (type, properties) => ({ event: { id: `evt_${type}`, type, properties } });
const idle = (sessionID) => ev("session.idle", { sessionID });

// 1. The reply goes back into the same session; the continued turn's stop says stopHookActive.
{
  const c = client({ promptAsync: () => ({ data: undefined }), prompt: () => ({ data: {} }) });
  const hooks = await load(c);
  answer("session.idle|ses_a", { out: BLOCK, delayMs: 2500 }, {}, {});
  answer("permission.asked|ses_b", {});
  await hooks.event(ev("message.part.updated", {
    sessionID: "ses_a",
    part: { type: "text", sessionID: "ses_a", text: "Done.", time: { start: 1, end: 2 } },
  }));
  let t = Date.now();
  await hooks.event(idle("ses_a"));
  check("session.idle: the event hook returns at once while lidguard holds the stop",
    Date.now() - t < 1000 && ends("session.idle|ses_a").length === 0, Date.now() - t);
  await waitFor(() => calls("session.idle|ses_a").length === 1, 3000);
  await hooks.event(idle("ses_a")); // a second idle while the first is held: dropped
  t = Date.now();
  await hooks.event(ev("permission.asked", { id: "per_1", sessionID: "ses_b" }));
  check("other events are forwarded meanwhile", calls("permission.asked|ses_b").length === 1 && ends("session.idle|ses_a").length === 0,
    { perm: calls("permission.asked|ses_b").length, idleEnded: ends("session.idle|ses_a").length });
  await waitFor(() => c.prompts.length > 0);
  check("the reply is sent with client.session.promptAsync({path:{id}, body:{parts:[{type:'text', text}]}})",
    c.prompts.length === 1 && c.prompts[0].name === "promptAsync" && JSON.stringify(c.prompts[0].o) ===
      JSON.stringify({ path: { id: "ses_a" }, body: { parts: [{ type: "text", text: REPLY }] }, throwOnError: true }),
    c.prompts);
  const first = calls("session.idle|ses_a");
  check("a second idle of the same session while lidguard holds the first is dropped", first.length === 1, first.length);
  const p = first[0]?.payload ?? {};
  check("the stop carries stopHookActive false, the last assistant text, the event and the directory",
    p.stopHookActive === false && p.lastAssistantMessage === "Done." && p.hook === "event" &&
      p.input?.event?.type === "session.idle" && p.directory === "/proj" && p.output === null, p);
  await hooks.event(idle("ses_a")); // the continued turn ends
  await waitFor(() => calls("session.idle|ses_a").length === 2);
  check("the continued turn's stop carries stopHookActive true", calls("session.idle|ses_a")[1]?.payload.stopHookActive === true,
    calls("session.idle|ses_a")[1]?.payload);
  await waitFor(() => ends("session.idle|ses_a").length === 2);
  await sleep(200); // the plugin sees the hook's exit a moment after its last write
  await hooks.event(idle("ses_a")); // a later turn, not continued
  await waitFor(() => calls("session.idle|ses_a").length === 3);
  await sleep(100);
  check("after a stop without a reply, the next one carries stopHookActive false and nothing is prompted",
    calls("session.idle|ses_a")[2]?.payload.stopHookActive === false && c.prompts.length === 1 &&
      calls().every((x) => x.event !== "session.error"),
    { p: calls("session.idle|ses_a")[2]?.payload, prompts: c.prompts.length });
}

// 2. The reply cannot be sent: a warning, then the hook once more as session.error.
for (const [name, session] of [
  ["no prompt API", {}],
  ["promptAsync throws", { promptAsync: () => { throw new Error("boom"); } }],
  ["promptAsync answers {error}", { promptAsync: () => ({ error: { name: "NotFoundError" } }) }],
]) {
  const sid = `ses_${name.replace(/\W+/g, "_")}`;
  const c = client(session);
  const hooks = await load(c);
  answer(`session.idle|${sid}`, { out: BLOCK }, {});
  await hooks.event(idle(sid));
  const err = await waitFor(() => calls(`session.error|${sid}`)[0]);
  check(`${name}: the hook runs once more as session.error for the session`,
    err && err.payload.input.event.type === "session.error" && err.payload.input.event.properties.sessionID === sid &&
      calls(`session.error|${sid}`).length === 1, err);
  check(`${name}: a warning is logged through client.app.log`,
    c.logs.length === 1 && c.logs[0].body.level === "warn" && c.logs[0].body.message.includes(sid), c.logs);
  await hooks.event(idle(sid));
  await waitFor(() => calls(`session.idle|${sid}`).length === 2);
  check(`${name}: the next stop carries stopHookActive false`, calls(`session.idle|${sid}`)[1]?.payload.stopHookActive === false,
    calls(`session.idle|${sid}`)[1]?.payload);
}

// 3. Without promptAsync, client.session.prompt is used (same shape).
{
  const c = client({ prompt: () => ({ data: {} }) });
  const hooks = await load(c);
  answer("session.idle|ses_p", { out: BLOCK });
  await hooks.event(idle("ses_p"));
  await waitFor(() => c.prompts.length > 0);
  check("without promptAsync: client.session.prompt with the same shape", c.prompts[0]?.name === "prompt" &&
    c.prompts[0].o.path.id === "ses_p" && c.prompts[0].o.body.parts[0].text === REPLY, c.prompts);
}

// 4. A prompt that fails only after the continued turn stopped: lidguard saw that stop; no
//    session.error.
{
  let fail;
  const c = client({ prompt: () => new Promise((_, reject) => (fail = reject)) });
  const hooks = await load(c);
  answer("session.idle|ses_late", { out: BLOCK }, {});
  await hooks.event(idle("ses_late"));
  await waitFor(() => fail);
  await hooks.event(idle("ses_late"));
  await waitFor(() => ends("session.idle|ses_late").length === 2);
  fail(new Error("connection closed"));
  await sleep(300);
  check("a prompt failing after the continued turn stopped ends nothing",
    calls("session.error|ses_late").length === 0 && calls("session.idle|ses_late")[1]?.payload.stopHookActive === true,
    calls().filter((x) => x.key.endsWith("ses_late")));
}

// 5. session.error and session.deleted never continue, and never say stopHookActive.
{
  const c = client({ promptAsync: () => ({}) });
  const hooks = await load(c);
  answer("session.error|ses_e", { out: BLOCK });
  answer("session.deleted|ses_e", { out: BLOCK });
  await hooks.event(ev("session.error", { sessionID: "ses_e", error: { name: "APIError" } }));
  await hooks.event(ev("session.deleted", { sessionID: "ses_e", info: { id: "ses_e" } }));
  await sleep(200);
  const got = calls().filter((x) => x.key.endsWith("|ses_e"));
  check("session.error / session.deleted: forwarded, no stopHookActive, nothing prompted",
    got.length === 2 && got.every((x) => !("stopHookActive" in x.payload)) && c.prompts.length === 0, got);
}

// 6. A missing lidguard breaks nothing: every hook resolves, nothing is prompted.
{
  const source = readFileSync(pluginPath, "utf8").replace(/^const COMMAND = .*$/m,
    'const COMMAND = ["/nonexistent/lidguard", "opencode-hook"];');
  const missing = join(dir, "missing.mjs");
  writeFileSync(missing, source);
  const m = await import(pathToFileURL(missing).href);
  const c = client({ promptAsync: () => ({}) });
  const hooks = await Object.values(m).find((v) => typeof v === "function")({ client: c, directory: "/proj", serverUrl: new URL("http://127.0.0.1:9/") });
  let threw = null;
  try {
    await hooks["chat.message"]({ sessionID: "ses_m" }, { parts: [{ type: "text", text: "go" }] });
    await hooks["tool.execute.before"]({ sessionID: "ses_m", tool: "bash", callID: "c" }, { args: {} });
    await hooks.event(idle("ses_m"));
    await hooks.event(ev("permission.asked", { id: "per_m", sessionID: "ses_m" }));
    await hooks.event({}); // no event at all
    await hooks.event(undefined);
  } catch (e) {
    threw = String(e);
  }
  await sleep(300);
  check("a missing lidguard: every hook resolves, nothing is prompted", threw === null && c.prompts.length === 0, threw);
}

// 7. A payload JSON cannot carry (a BigInt) still resolves every hook.
{
  const c = client({ promptAsync: () => ({}) });
  const hooks = await load(c);
  let threw = null;
  try {
    await hooks["chat.message"]({ sessionID: "ses_big", n: 1n }, { parts: [] });
    await hooks.event(ev("session.error", { sessionID: "ses_big", n: 1n }));
    await hooks.event(ev("session.idle", { sessionID: "ses_big", n: 1n }));
  } catch (e) {
    threw = String(e);
  }
  await sleep(300);
  check("an unserializable payload: every hook resolves, nothing is prompted", threw === null && c.prompts.length === 0, threw);
}

if (failed) {
  console.log(`harness: ${failed} check(s) failed`);
  process.exit(1);
}
console.log("harness: all checks passed");
