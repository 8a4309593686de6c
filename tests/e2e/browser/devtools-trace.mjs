// SPDX-License-Identifier: MIT
// Chrome DevTools' trace engine (the Performance panel's importer,
// chrome-devtools-frontend's front_end/models/trace) reads a Chrome JSON
// file in Node; prints on one line, as JSON, what it made of it:
//
//   node devtools-trace.mjs FILE.json
//   {"threads": [{"pid", "tid", "name", "calls": {NAME: N}}],
//    "flows": [[[name, pid, tid, ts], ...], ...]}
//
// threads: every thread of the engine's process model (Renderer handler)
// with its name (from the thread_name metadata) and its entries counted
// by name; flows: the flow arrows it bound to events.
//
// The npm package ships the TypeScript sources: esbuild bundles the
// engine once into node_modules/.cache (one generated module, the
// locales list the DevTools build writes, is supplied here).
import fs from 'node:fs';
import path from 'node:path';
import {fileURLToPath} from 'node:url';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const SRC = path.join(HERE, 'node_modules/chrome-devtools-frontend/front_end');
const VERSION = JSON.parse(fs.readFileSync(
    path.join(HERE, 'node_modules/chrome-devtools-frontend/package.json'), 'utf8')).version;
const BUNDLE = path.join(HERE, 'node_modules/.cache/tracekit', `devtools-trace-${VERSION}.mjs`);

async function bundle() {
  if (fs.existsSync(BUNDLE))
    return;
  const esbuild = await import('esbuild');
  const locales = {
    name: 'locales',
    setup(b) {
      b.onResolve({filter: /^\.\/locales\.js$/}, () => ({path: 'locales', namespace: 'gen'}));
      b.onLoad({filter: /.*/, namespace: 'gen'}, () => ({
        loader: 'js',
        contents: "export const LOCALES = ['en-US']; export const BUNDLED_LOCALES = ['en-US'];" +
            "export const DEFAULT_LOCALE = 'en-US'; export const REMOTE_FETCH_PATTERN = '';" +
            "export const LOCAL_FETCH_PATTERN = '';",
      }));
    },
  };
  const tmp = `${BUNDLE}.${process.pid}`;
  await esbuild.build({
    stdin: {contents: `export * as Trace from ${JSON.stringify(SRC + '/models/trace/trace.js')};`,
            resolveDir: HERE, loader: 'ts'},
    bundle: true, format: 'esm', platform: 'node', outfile: tmp, logLevel: 'error',
    plugins: [locales],
  });
  fs.renameSync(tmp, BUNDLE);
}

await bundle();
const {Trace} = await import(BUNDLE);
const json = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
const model = Trace.TraceModel.Model.createWithAllHandlers();
await model.parse(json.traceEvents ?? json);
const data = model.parsedTrace(0).data;
const out = {threads: [], flows: []};
for (const [pid, proc] of data.Renderer.processes) {
  for (const [tid, thread] of proc.threads) {
    const calls = {};
    for (const e of thread.entries)
      calls[e.name] = (calls[e.name] ?? 0) + 1;
    out.threads.push({pid, tid, name: thread.name ?? null, calls});
  }
}
out.flows = data.Flows.flows.map(f => f.map(e => [e.name, e.pid, e.tid, e.ts]));
console.log(JSON.stringify(out));
