/**
 * The code each sandbox thread runs (passed to `new Worker(source, { eval: true })`, so no file of
 * ours has to sit beside a bundle). It imports the processor file once and runs the attempts it is
 * sent: the job's fields, `updateProgress`, `log` and `updateData` (answered by the worker's real
 * job), and `signal`, aborted when the worker stops the attempt. Plain JavaScript: nothing here is
 * compiled.
 */
export const threadSource = `
const { parentPort, workerData } = require("node:worker_threads");
let loaded;
function processor() {
  loaded ??= import(workerData.url).then((module) => {
    const candidates = [module.default, module.default && module.default.default, module.process];
    const found = candidates.find((value) => typeof value === "function");
    if (!found) throw new TypeError("the processor file " + workerData.url + " exports no default function");
    return found;
  });
  return loaded;
}
const attempts = new Map();
const calls = new Map();
let nextCall = 0;
function call(attempt, method, args) {
  const id = ++nextCall;
  return new Promise((resolve, reject) => {
    calls.set(id, { resolve, reject });
    parentPort.postMessage({ type: "call", attempt, id, method, args });
  });
}
function errorOf(thrown) {
  if (thrown instanceof Error) return { name: thrown.name, message: thrown.message, stack: thrown.stack };
  let text;
  try { text = typeof thrown === "string" ? thrown : JSON.stringify(thrown); } catch { text = String(thrown); }
  return { name: "NonErrorThrown", message: "the processor threw a non-Error value: " + text };
}
async function run(message) {
  const controller = new AbortController();
  attempts.set(message.attempt, controller);
  const job = Object.assign({}, message.job, {
    signal: controller.signal,
    updateProgress: (progress) => call(message.attempt, "updateProgress", [progress]),
    log: (line) => call(message.attempt, "log", [line]),
    updateData: (data) => call(message.attempt, "updateData", [data]),
  });
  try {
    const value = await (await processor())(job);
    parentPort.postMessage({ type: "done", attempt: message.attempt, value: value === undefined ? null : value });
  } catch (thrown) {
    parentPort.postMessage({ type: "failed", attempt: message.attempt, error: errorOf(thrown) });
  } finally {
    attempts.delete(message.attempt);
  }
}
parentPort.on("message", (message) => {
  if (message.type === "run") return void run(message);
  if (message.type === "abort") {
    const controller = attempts.get(message.attempt);
    if (controller) controller.abort(Object.assign(new Error(message.reason), { name: message.name }));
    return;
  }
  if (message.type === "answer") {
    const pending = calls.get(message.id);
    if (!pending) return;
    calls.delete(message.id);
    if (message.error) pending.reject(Object.assign(new Error(message.error.message), { name: message.error.name }));
    else pending.resolve(message.value);
  }
});
`;
