// Unit tests of activation, server resolution, settings and the status bar, with `vscode`
// mocked (test/mock/vscode.ts): VS Code cannot be installed here or in CI.

import { test, beforeEach } from "node:test";
import * as assert from "node:assert/strict";

import * as vscode from "vscode";
import * as mock from "./mock/vscode";
import { activateWith, deactivateRunning, DiceClient, Deps } from "../src/activation";
import { resolveServer, ResolverEnv } from "../src/serverResolution";
import { readSettings, serverSection } from "../src/settings";
import { DiceStatus } from "../src/status";

class FakeClient implements DiceClient {
  started = 0;
  stopped = 0;
  requests: Array<{ method: string; params: unknown }> = [];
  notifications: Array<{ method: string; params: unknown }> = [];
  handlers = new Map<string, (p: never) => void>();
  constructor(readonly serverOptions: unknown, readonly clientOptions: any) {}
  async start() {
    this.started += 1;
  }
  async stop() {
    this.stopped += 1;
  }
  async restart() {
    this.started += 1;
  }
  onNotification(method: string, handler: (p: never) => void) {
    this.handlers.set(method, handler);
    return undefined;
  }
  answers = new Map<string, (params: unknown) => Promise<unknown>>();
  async sendRequest(method: string, params: unknown) {
    this.requests.push({ method, params });
    const answer = this.answers.get(method);
    return answer ? answer(params) : null;
  }
  async sendNotification(method: string, params: unknown) {
    this.notifications.push({ method, params });
  }
}

function env(files: string[], onPath: string | undefined, importable: string[]): ResolverEnv {
  return {
    exists: (f) => files.includes(f),
    which: () => onPath,
    canImportServer: async (python) => importable.includes(python),
  };
}

function deps(resolver: ResolverEnv, clients: FakeClient[]): Deps {
  return {
    vscode: vscode as never,
    resolverEnv: resolver,
    createClient: (so, co) => {
      const c = new FakeClient(so, co);
      clients.push(c);
      return c;
    },
  };
}

const context = () => ({ subscriptions: [] as Array<{ dispose(): unknown }> }) as never;

beforeEach(() => mock.reset());

test("server resolution prefers dice.server.path, then Python, then PATH", async () => {
  assert.deepEqual(await resolveServer("/opt/dice-lsp", ["/usr/bin/python3"], env(["/opt/dice-lsp"], undefined, [])), {
    command: "/opt/dice-lsp",
    args: [],
    source: "dice.server.path",
  });
  assert.deepEqual(await resolveServer("", ["/a/python", "/b/python"], env([], "/bin/dice-lsp", ["/b/python"])), {
    command: "/b/python",
    args: ["-m", "dice_lsp"],
    source: "python",
  });
  assert.deepEqual(await resolveServer("", ["/a/python"], env([], "/bin/dice-lsp", [])), {
    command: "/bin/dice-lsp",
    args: [],
    source: "PATH",
  });
});

test("server resolution explains what is missing", async () => {
  const missingPath = await resolveServer("/nope/dice-lsp", [], env([], "/bin/dice-lsp", []));
  assert.ok("error" in missingPath && missingPath.error.includes("/nope/dice-lsp"));
  const nothing = await resolveServer("", ["/a/python"], env([], undefined, []));
  assert.ok("error" in nothing);
  assert.match(nothing.error, /pip install dice-cuda/);
  assert.match(nothing.error, /\/a\/python/);
});

test("untrusted workspaces never enable GPU runs, regenerate-on-save or a model", () => {
  const all = new Map<string, unknown>([
    ["gpu.enabled", true],
    ["regenerateOnSave", true],
    ["arch", "sm_80"],
    ["budget", 8],
    ["llm.baseUrl", "http://127.0.0.1:8000/v1"],
    ["llm.model", "qwen"],
    ["llm.use", "compete"],
  ]);
  const get = <T>(k: string, d: T) => (all.has(k) ? (all.get(k) as T) : d);
  const trusted = readSettings(get, true);
  const untrusted = readSettings(get, false);
  assert.equal(trusted.gpuEnabled, true);
  assert.equal(trusted.regenerateOnSave, true);
  assert.equal(untrusted.gpuEnabled, false);
  assert.equal(untrusted.regenerateOnSave, false);
  assert.deepEqual(serverSection(trusted).llm, {
    baseUrl: "http://127.0.0.1:8000/v1",
    model: "qwen",
    use: "compete",
  });
  assert.deepEqual(serverSection(untrusted), {
    arch: "sm_80",
    nvccPath: null,
    nvccFlags: [],
    includePaths: [],
    gpu: { enabled: false },
    budget: 8,
    regenerateOnSave: false,
    streamEdits: false,
    llm: { baseUrl: "http://127.0.0.1:8000/v1", model: "qwen", use: "off" },
  });
});

test("status bar shows arch, GPU state and progress", () => {
  const item = new mock.MockStatusItem();
  const status = new DiceStatus(item);
  assert.ok(item.visible);
  status.setArch("sm_80");
  status.setGpu("active");
  assert.equal(item.text, "$(circuit-board) DICE sm_80 · GPU");
  status.setProgress("round 2/8 · 12.5 µs");
  assert.equal(item.text, "$(sync~spin) DICE sm_80 · GPU · round 2/8 · 12.5 µs");
  status.setProgress(undefined);
  status.setGpu("restricted");
  assert.match(item.text, /restricted/);
  assert.match(String(item.tooltip), /Untrusted workspace/);
  status.setFailure("no server");
  assert.match(item.text, /^\$\(error\)/);
  assert.equal(item.command, "dice.showOutput");
});

test("activation registers the commands and starts the server with trusted settings", async () => {
  mock.state.settings.set("dice.arch", "sm_89");
  mock.state.settings.set("dice.gpu.enabled", true);
  mock.state.settings.set("dice.server.pythonPath", "/venv/bin/python");
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], undefined, ["/venv/bin/python"]), clients));
  assert.deepEqual([...mock.state.commands.keys()].sort(), [
    "dice.acceptGeneration",
    "dice.generateAtCursor",
    "dice.regenerateStale",
    "dice.restartServer",
    "dice.showOutput",
  ]);
  assert.equal(clients.length, 1);
  const client = clients[0];
  assert.equal(client.started, 1);
  assert.deepEqual(client.serverOptions, { command: "/venv/bin/python", args: ["-m", "dice_lsp"] });
  assert.equal(client.clientOptions.initializationOptions.dice.arch, "sm_89");
  assert.equal(client.clientOptions.initializationOptions.dice.gpu.enabled, true);
  assert.match(mock.state.statusItems[0].text, /DICE sm_89 · GPU/);

  // The server's status notification drives the status bar.
  client.handlers.get("dice/status")!({ arch: "sm_90", gpu: false, progress: "round 1/4" } as never);
  assert.match(mock.state.statusItems[0].text, /sm_90 · no GPU found · round 1\/4/);

  // Restart stops the old client and starts a new one.
  await mock.state.commands.get("dice.restartServer")!();
  assert.equal(client.stopped, 1);
  assert.equal(clients.length, 2);
});

test("dice/saveDocument saves the document only at the version the server wrote", async () => {
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], "/bin/dice-lsp", []), clients));
  const uri = { toString: () => "file:///p/k.cu" };
  const doc = new mock.MockDocument(uri, 7, true);
  mock.state.textDocuments.push(doc);
  const saveDocument = clients[0].handlers.get("dice/saveDocument")!;
  saveDocument({ uri: "file:///p/k.cu", version: 6 } as never); // the user typed since: no save
  await new Promise((r) => setImmediate(r));
  assert.equal(doc.saves, 0);
  saveDocument({ uri: "file:///p/k.cu", version: 7 } as never);
  await new Promise((r) => setImmediate(r));
  assert.equal(doc.saves, 1);
  saveDocument({ uri: "file:///p/k.cu", version: 7 } as never); // saved already: not dirty
  await new Promise((r) => setImmediate(r));
  assert.equal(doc.saves, 1);
});

test("deactivation waits for a save's regenerated kernel, saves it, then stops the server", async () => {
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], "/bin/dice-lsp", []), clients));
  const doc = new mock.MockDocument({ toString: () => "file:///p/k.cu" }, 7, false);
  mock.state.textDocuments.push(doc);
  clients[0].answers.set("dice/awaitSave", async () => {
    await new Promise((r) => setTimeout(r, 50)); // still regenerating: the kernel lands, then the answer
    doc.version = 8;
    doc.isDirty = true;
    return { save: true, version: 8 };
  });
  await deactivateRunning();
  assert.deepEqual(clients[0].requests, [{ method: "dice/awaitSave", params: { uri: "file:///p/k.cu" } }]);
  assert.equal(doc.saves, 1);
  assert.equal(clients[0].stopped, 1);
});

test("deactivation waits no longer than its bound for a server that does not answer", async () => {
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], "/bin/dice-lsp", []), clients));
  const doc = new mock.MockDocument({ toString: () => "file:///p/k.cu" }, 7, true);
  mock.state.textDocuments.push(doc);
  clients[0].answers.set("dice/awaitSave", () => new Promise(() => undefined));
  const started = Date.now();
  await deactivateRunning(200);
  const took = Date.now() - started;
  assert.ok(took >= 190 && took < 2000, `took ${took} ms`);
  assert.equal(doc.saves, 0); // no answer: nothing is saved behind the user's back
  assert.equal(clients[0].stopped, 1);
});

test("in an untrusted workspace the server is told: no GPU, no regenerate-on-save", async () => {
  mock.state.trusted = false;
  mock.state.settings.set("dice.gpu.enabled", true);
  mock.state.settings.set("dice.regenerateOnSave", true);
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], "/bin/dice-lsp", []), clients));
  const options = clients[0].clientOptions;
  assert.equal(options.initializationOptions.dice.gpu.enabled, false);
  assert.equal(options.initializationOptions.dice.regenerateOnSave, false);
  const answer = options.middleware.workspace.configuration({ items: [{ section: "dice" }, { section: "other" }] });
  assert.equal(answer[0].gpu.enabled, false);
  assert.equal(answer[1], null);
  assert.match(mock.state.statusItems[0].text, /restricted/);

  // Granting trust pushes the real settings to the server.
  mock.state.trusted = true;
  await mock.state.trustListeners[0]();
  const pushed = clients[0].notifications.at(-1) as { method: string; params: any };
  assert.equal(pushed.method, "workspace/didChangeConfiguration");
  assert.equal(pushed.params.settings.dice.gpu.enabled, true);
});

test("a missing server is a notification with actions, not a crash", async () => {
  mock.state.errorChoice = "Open Settings";
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], undefined, []), clients));
  assert.equal(clients.length, 0);
  assert.equal(mock.state.errors.length, 1);
  assert.deepEqual(mock.state.errors[0].actions, ["Open Settings", "Show Output"]);
  assert.deepEqual(mock.state.executed[0], { command: "workbench.action.openSettings", args: ["dice.server"] });
  assert.match(mock.state.statusItems[0].text, /^\$\(error\)/);
});

test("generate at cursor asks the server for the intent under the cursor", async () => {
  const clients: FakeClient[] = [];
  await activateWith(context(), deps(env([], "/bin/dice-lsp", []), clients));
  mock.state.activeTextEditor = {
    document: { uri: { toString: () => "file:///k.cu" } },
    selection: { active: { line: 7 } },
  };
  await mock.state.commands.get("dice.generateAtCursor")!();
  assert.deepEqual(clients[0].requests[0], {
    method: "workspace/executeCommand",
    params: { command: "dice.generateAt", arguments: [{ uri: "file:///k.cu", line: 7 }] },
  });
});
