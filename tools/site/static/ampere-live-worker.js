/* The book's live calculators, the Python side: a module Web Worker that loads the Pyodide core served by the
 * site, installs the ampere wheel built from the book's repository, and answers calculator requests with
 * ampere.live.run_json -- the same function CPython runs in the tests. No network but the site itself.
 *
 * Messages in:  {type: "init", pyodide: URL of the Pyodide folder, wheel: URL of the wheel}
 *               {type: "run", id, calc, values}
 * Messages out: {type: "ready", seconds} | {type: "fatal", message}
 *               {type: "result", id, json: '{"html": ..., "seconds": ...}' or '{"error": ...}'}
 *               {type: "stderr", text}
 */
"use strict";

let pyodide = null;
let live = null;
let starting = null;

async function start(msg) {
  const t0 = performance.now();
  const { loadPyodide } = await import(msg.pyodide + "pyodide.mjs");
  pyodide = await loadPyodide({
    indexURL: msg.pyodide,
    stdout: () => {},
    stderr: (text) => self.postMessage({ type: "stderr", text: text }),
  });
  const response = await fetch(msg.wheel);
  if (!response.ok) {
    throw new Error("could not fetch " + msg.wheel + ": HTTP " + response.status);
  }
  pyodide.unpackArchive(await response.arrayBuffer(), "wheel");
  live = pyodide.pyimport("ampere.live");
  self.postMessage({ type: "ready", seconds: (performance.now() - t0) / 1000 });
}

self.onmessage = async (event) => {
  const msg = event.data;
  if (msg.type === "init") {
    if (!starting) {
      starting = start(msg).catch((err) => {
        self.postMessage({ type: "fatal", message: String(err && err.message ? err.message : err) });
        throw err;
      });
    }
    return;
  }
  if (msg.type === "run") {
    try {
      await starting;
      const json = live.run_json(msg.calc, JSON.stringify(msg.values));
      self.postMessage({ type: "result", id: msg.id, json: json });
    } catch (err) {
      self.postMessage({ type: "result", id: msg.id, json: JSON.stringify({ fatal: String(err) }) });
    }
  }
};
