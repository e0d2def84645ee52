// Protocol test: the real dice-lsp process, driven from Node over stdio with
// vscode-languageserver-protocol — the JSON-RPC stack vscode-languageclient uses. It covers
// open → diagnostics → code action → rounds as progress, one workspace/applyEdit → hover.

import { test } from "node:test";
import * as assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  createProtocolConnection,
  StreamMessageReader,
  StreamMessageWriter,
  ProtocolConnection,
} from "vscode-languageserver-protocol/node";

const repo = path.resolve(__dirname, "..", "..", "..");

function serverPython(): string {
  if (process.env.DICE_PYTHON) {
    return process.env.DICE_PYTHON;
  }
  const venv = path.join(repo, ".venv", "bin", "python");
  return fs.existsSync(venv) ? venv : "python3";
}

const SOURCE = [
  "#include <cuda_runtime.h>",
  "",
  "// @dice: y = relu(a) * 2.5 + b; a, b: f32[1048576]",
  "",
  "__global__ void scale(float* x, int n) {",
  "  int i = blockIdx.x * blockDim.x + threadIdx.x;",
  "  if (i < n) x[i] = pow(x[i], 2) * 0.5;",
  "}",
  "",
].join("\n");

interface Position {
  line: number;
  character: number;
}
interface TextEdit {
  range: { start: Position; end: Position };
  newText: string;
}

function offsetAt(text: string, pos: Position): number {
  const lines = text.split("\n");
  let offset = 0;
  for (let i = 0; i < pos.line; i++) {
    offset += lines[i].length + 1;
  }
  return offset + pos.character; // ASCII test text: UTF-16 units are characters
}

function applyEdits(text: string, edits: TextEdit[]): string {
  const sorted = [...edits].sort((a, b) => offsetAt(text, b.range.start) - offsetAt(text, a.range.start));
  for (const e of sorted) {
    text = text.slice(0, offsetAt(text, e.range.start)) + e.newText + text.slice(offsetAt(text, e.range.end));
  }
  return text;
}

function waitFor<T>(what: string, ms: number, poll: () => T | undefined): Promise<T> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const tick = () => {
      const value = poll();
      if (value !== undefined) {
        resolve(value);
      } else if (Date.now() - started > ms) {
        reject(new Error(`timed out waiting for ${what}`));
      } else {
        setTimeout(tick, 50);
      }
    };
    tick();
  });
}

test("the real dice-lsp: diagnostics, generate action, one edit after progress rounds, hover", { timeout: 180_000 }, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "dice-vscode-"));
  const file = path.join(dir, "demo.cu");
  fs.writeFileSync(file, SOURCE);
  const uri = `file://${file}`;
  const child = spawn(serverPython(), ["-m", "dice_lsp"], {
    cwd: dir,
    env: { ...process.env, DICE_CACHE_DIR: path.join(dir, "cache") },
    stdio: ["pipe", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr.on("data", (d) => (stderr += d));
  const conn: ProtocolConnection = createProtocolConnection(
    new StreamMessageReader(child.stdout),
    new StreamMessageWriter(child.stdin),
  );

  let text = SOURCE;
  let version = 1;
  const diagnostics: Array<{ version?: number; diagnostics: any[] }> = [];
  const progress: string[] = [];
  let appliedEdits = 0;

  conn.onNotification("textDocument/publishDiagnostics", (p: any) => {
    if (p.uri === uri) {
      diagnostics.push(p);
    }
  });
  conn.onNotification("$/progress", (p: any) => {
    progress.push(p.value.kind);
  });
  conn.onNotification("window/logMessage", () => undefined);
  conn.onNotification("dice/status", () => undefined);
  conn.onRequest("window/workDoneProgress/create", () => null);
  conn.onRequest("workspace/configuration", (p: any) => p.items.map(() => ({ budget: 6 })));
  conn.onRequest("workspace/applyEdit", (p: any) => {
    for (const change of p.edit.documentChanges ?? []) {
      assert.equal(change.textDocument.uri, uri);
      assert.equal(change.textDocument.version, version, "edits are versioned against the current text");
      text = applyEdits(text, change.edits);
      version += 1;
      appliedEdits += 1;
      void conn.sendNotification("textDocument/didChange", {
        textDocument: { uri, version },
        contentChanges: [{ text }],
      });
    }
    return { applied: true };
  });
  conn.listen();

  try {
    await conn.sendRequest("initialize", {
      processId: process.pid,
      rootUri: `file://${dir}`,
      capabilities: {
        workspace: { applyEdit: true, workspaceEdit: { documentChanges: true }, configuration: true },
        window: { workDoneProgress: true },
        textDocument: {
          publishDiagnostics: { versionSupport: true },
          codeAction: { codeActionLiteralSupport: { codeActionKind: { valueSet: ["", "quickfix", "refactor"] } } },
          hover: { contentFormat: ["markdown", "plaintext"] },
        },
      },
      initializationOptions: { dice: { budget: 6 } },
    });
    await conn.sendNotification("initialized", {});
    await conn.sendNotification("textDocument/didOpen", {
      textDocument: { uri, languageId: "cuda-cpp", version, text },
    });

    // Static diagnostics for the hand-written kernel: pow(float, int) runs in double.
    const published = await waitFor("diagnostics", 30_000, () =>
      diagnostics.find((d) => d.diagnostics.some((x: any) => /DICE-/.test(String(x.code)))),
    );
    assert.equal(published.version, 1);
    const precision = published.diagnostics.find((x: any) => x.range.start.line === 6);
    assert.ok(precision, "a finding on the pow(...) line");

    // The generate action on the intent line, then run its command.
    const actions: any[] = await conn.sendRequest("textDocument/codeAction", {
      textDocument: { uri },
      range: { start: { line: 2, character: 5 }, end: { line: 2, character: 5 } },
      context: { diagnostics: [] },
    });
    let generate = actions.find((a) => a.title === "DICE: Generate kernel");
    assert.ok(generate, `actions offered: ${actions.map((a) => a.title).join(", ")}`);
    if (!generate.command) {
      generate = await conn.sendRequest("codeAction/resolve", generate);
    }
    const outcome: any = await conn.sendRequest("workspace/executeCommand", {
      command: generate.command.command,
      arguments: generate.command.arguments,
    });
    assert.equal(outcome.error ?? null, null);
    // One generation is one edit (one undo step); its rounds were progress reports.
    assert.equal(appliedEdits, 1, `the region is written once (got ${appliedEdits} edits)`);
    assert.ok(progress.includes("begin") && progress.includes("end"), `progress: ${progress.join(",")}`);
    assert.ok(progress.filter((k) => k === "report").length >= 1, `progress: ${progress.join(",")}`);
    assert.match(text, /\/\/ @dice-begin [0-9a-f]{12} /);
    assert.match(text, /__global__/);
    assert.match(text, /\/\/ @dice-end/);
    // Nothing outside the region changed.
    const end = text.indexOf("// @dice-end");
    assert.equal(text.slice(0, text.indexOf("// @dice-begin")), SOURCE.slice(0, SOURCE.indexOf("\n", SOURCE.indexOf("@dice:")) + 1));
    assert.ok(text.slice(end).endsWith(SOURCE.slice(SOURCE.indexOf("\n__global__ void scale") + 1)));

    // Hover on the hand-written kernel's name shows ptxas figures once the background compile ran.
    const kernelLine = text.split("\n").findIndex((l) => l.startsWith("__global__ void scale"));
    let hoverText = "";
    await waitFor("hover with ptxas figures", 90_000, () => {
      void conn
        .sendRequest("textDocument/hover", {
          textDocument: { uri },
          position: { line: kernelLine, character: "__global__ void s".length },
        })
        .then((h: any) => (hoverText = h ? JSON.stringify(h.contents) : ""));
      return /registers: \d+/.test(hoverText) ? hoverText : undefined;
    });
    assert.match(hoverText, /scale/);
  } finally {
    await conn.sendRequest("shutdown").catch(() => undefined);
    await conn.sendNotification("exit").catch(() => undefined);
    conn.dispose();
    child.kill();
  }
});
