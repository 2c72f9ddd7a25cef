// A stand-in for `lidguard opencode-hook` in the plugin harness (harness.mjs): records what the
// plugin sent, then answers from the harness's script.
//
//   node fake_hook.mjs --event <name>      (stdin: the plugin's payload; FAKE_DIR from the harness)
//
// $FAKE_DIR/script.json maps "<event>|<sessionID>" to a list of answers `{out, delayMs}`, used in
// order (the n-th call for that key gets the n-th answer; none: empty output). Every call is
// appended to $FAKE_DIR/calls.jsonl as `{event, payload, start, end}`.
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";

const dir = process.env.FAKE_DIR;
const event = process.argv[process.argv.indexOf("--event") + 1];
let stdin = "";
process.stdin.setEncoding("utf8");
process.stdin.on("data", (chunk) => (stdin += chunk));
process.stdin.on("end", async () => {
  const start = Date.now();
  const payload = JSON.parse(stdin);
  const props = payload?.input?.event?.properties ?? payload?.input ?? {};
  const key = `${event}|${props.sessionID}`;
  let script = {};
  try {
    script = JSON.parse(readFileSync(join(dir, "script.json"), "utf8"));
  } catch {}
  let calls = [];
  try {
    calls = readFileSync(join(dir, "calls.jsonl"), "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  } catch {}
  const n = calls.filter((c) => c.key === key).length;
  const answer = (script[key] ?? [])[n] ?? {};
  // Recorded before the delay, so a second call for the same key sees this one.
  appendFileSync(join(dir, "calls.jsonl"), JSON.stringify({ key, event, payload, start }) + "\n");
  if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
  appendFileSync(join(dir, "ends.jsonl"), JSON.stringify({ key, n, end: Date.now() }) + "\n");
  if (answer.out) process.stdout.write(answer.out + "\n");
});
