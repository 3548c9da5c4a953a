#!/usr/bin/env node
// Validate Mermaid documents with Mermaid's own parser (mermaid.parse) under
// Node + jsdom; no browser, no rendering.
//
//   node tools/mermaid/parse.mjs a.mmd b.mmd ...   # one document per file
//   node tools/mermaid/parse.mjs < doc.mmd         # stdin ("-" also means stdin)
//
// Prints one JSON line per document:
//   {"file":"a.mmd","ok":true,"error":null,"type":"flowchart-v2"}
// Exit status: 0 if every document is ok, 1 if any is not, 2 on usage errors.
//
// Limits: mermaid's default config has maxTextSize 50000 and maxEdges 500.
// - maxEdges is enforced by mermaid.parse itself for flowcharts
//   (FlowDB.addSingleLink, src/diagrams/flowchart/flowDb.ts) -> parse error.
// - maxTextSize is NOT checked by mermaid.parse; only mermaid.render checks
//   it (src/mermaidAPI.ts, render()), and there it does not throw but swaps
//   the diagram for a "Maximum text size in diagram exceeded" placeholder.
//   So this script enforces it itself, against the whole document text
//   (render measures the text after front matter, %%{init}%% directives and
//   %% comments are removed, so this check is slightly stricter).
// Both keys are in mermaid's "secure" list: front matter / directives in a
// document cannot raise them.

import { readFile } from 'node:fs/promises';
import { JSDOM } from 'jsdom';

// Minimal DOM: mermaid sanitises labels with DOMPurify, whose default
// instance is bound to globalThis.window when the dompurify module is first
// evaluated. Without a window, DOMPurify.sanitize/addHook are missing and any
// labelled node fails with "DOMPurify.addHook is not a function".
// `window` must therefore exist BEFORE mermaid is imported (dynamic import).
// Nothing else (document, navigator, ...) is needed for parsing.
const { window } = new JSDOM('<!DOCTYPE html><html><head></head><body></body></html>');
globalThis.window = window;

const { default: mermaid } = await import('mermaid');
mermaid.initialize({}); // default configuration

async function readStdin() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  return Buffer.concat(chunks).toString('utf8');
}

function detectType(text) {
  try {
    return mermaid.detectType(text, mermaid.mermaidAPI.getConfig());
  } catch {
    return null;
  }
}

function oneLine(err) {
  const msg = err && err.message ? err.message : String(err);
  return msg;
}

const args = process.argv.slice(2);
if (args.includes('-h') || args.includes('--help')) {
  process.stdout.write('usage: node parse.mjs [FILE|-]...   (no FILE: read stdin)\n');
  process.exit(0);
}
const inputs = args.length ? args : ['-'];

let allOk = true;
for (const file of inputs) {
  const result = { file: file === '-' ? '<stdin>' : file, ok: false, error: null, type: null };
  let text;
  try {
    text = file === '-' ? await readStdin() : await readFile(file, 'utf8');
  } catch (err) {
    result.error = `cannot read: ${oneLine(err)}`;
    allOk = false;
    process.stdout.write(JSON.stringify(result) + '\n');
    continue;
  }
  try {
    const parsed = await mermaid.parse(text);
    result.type = parsed.diagramType;
    const maxTextSize = mermaid.mermaidAPI.getConfig().maxTextSize ?? 50000;
    if (text.length > maxTextSize) {
      throw new Error(
        `Maximum text size exceeded: ${text.length} characters, limit maxTextSize is ${maxTextSize} ` +
          '(mermaid.render would replace the diagram with an error placeholder)'
      );
    }
    result.ok = true;
  } catch (err) {
    result.error = oneLine(err);
    result.type ??= detectType(text);
    allOk = false;
  }
  process.stdout.write(JSON.stringify(result) + '\n');
}

process.exitCode = allOk ? 0 : 1;
