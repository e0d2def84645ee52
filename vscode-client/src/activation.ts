// Activation: finds and starts dice-lsp and wires commands, settings, trust and the status bar.
// The language client is injected (see extension.ts), so this module loads without it in tests.

import type * as vscode from "vscode";
import type { LanguageClientOptions } from "vscode-languageclient/node";

import { DiceStatus, GpuState } from "./status";
import { resolveServer, ResolverEnv } from "./serverResolution";
import { readSettings, serverSection, DiceSettings } from "./settings";

/** What the server reports about itself through the `dice/status` notification. */
interface ServerStatus {
  arch?: string;
  gpu?: boolean;
  progress?: string | null;
}

/** The server asks for a second save once the kernels a save regenerated are written. */
interface SaveDocument {
  uri: string;
  version: number;
}

/** The part of a language client the extension uses; tests substitute a fake. */
export interface DiceClient {
  start(): Promise<void>;
  stop(): Promise<void>;
  restart(): Promise<void>;
  onNotification(method: string, handler: (params: never) => void): unknown;
  sendRequest(method: string, params: unknown): Promise<unknown>;
  sendNotification(method: string, params: unknown): Promise<void>;
}

/** The server process to start: a command and its arguments, spoken to over stdio. */
export interface ServerProcess {
  command: string;
  args: string[];
}

export interface Deps {
  vscode: typeof vscode;
  resolverEnv: ResolverEnv;
  createClient(server: ServerProcess, clientOptions: LanguageClientOptions): DiceClient;
}

/** The server's answer to `dice/awaitSave`, once the regenerations a save started have ended. */
interface AwaitSaveAnswer {
  save: boolean;
  version: number | null;
}

/** How long deactivation waits for kernels a save is still regenerating: VS Code gives an
 * extension's deactivate only a few seconds. */
export const QUIT_WAIT_MS = 4000;

let running: { client?: DiceClient; vscode: typeof vscode; dispose(): void } | undefined;

/** Before the server stops: wait (at most `waitMs` in all) for the regenerations that saves
 * started, and save the documents the server asks to, so their kernels reach the disk. When
 * the window closes, VS Code may already have dealt with unsaved documents: a kernel that lands
 * after that stays unsaved (README: regenerate-on-save). */
export async function deactivateRunning(waitMs: number = QUIT_WAIT_MS): Promise<void> {
  const client = running?.client;
  if (client && running) {
    await awaitSaves(running.vscode, client, waitMs);
  }
  await client?.stop();
  running?.dispose();
  running = undefined;
}

/** Ask the server, document by document, whether a save it is still completing wants a second
 * save, within `waitMs` in all; saves those documents. Returns how many it saved. */
export async function awaitSaves(v: typeof vscode, client: DiceClient, waitMs: number): Promise<number> {
  const deadline = Date.now() + waitMs;
  let saved = 0;
  for (const doc of v.workspace.textDocuments) {
    const left = deadline - Date.now();
    if (left <= 0) {
      break;
    }
    const uri = doc.uri.toString();
    const answer = (await within(client.sendRequest("dice/awaitSave", { uri }), left)) as AwaitSaveAnswer | undefined;
    if (answer?.save && answer.version !== null && (await saveIfUnchanged(v, { uri, version: answer.version }))) {
      saved += 1;
    }
  }
  return saved;
}

/** `work`'s result, or undefined when it takes longer than `ms` or fails. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work.catch(() => undefined), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

function settingsOf(v: typeof vscode): DiceSettings {
  const config = v.workspace.getConfiguration("dice");
  return readSettings((key, fallback) => config.get(key, fallback), v.workspace.isTrusted);
}

function gpuState(v: typeof vscode, settings: DiceSettings, serverSaysGpu?: boolean): GpuState {
  if (!v.workspace.isTrusted) {
    return "restricted";
  }
  if (!settings.gpuEnabled) {
    return "off";
  }
  return serverSaysGpu === false ? "unavailable" : "active";
}

export async function activateWith(context: vscode.ExtensionContext, deps: Deps): Promise<void> {
  const v = deps.vscode;
  const output = v.window.createOutputChannel("DICE");
  const status = new DiceStatus(v.window.createStatusBarItem(v.StatusBarAlignment.Right, 100));
  let settings = settingsOf(v);
  status.setArch(settings.arch);
  status.setGpu(gpuState(v, settings));

  let client: DiceClient | undefined;

  const startClient = async (): Promise<void> => {
    settings = settingsOf(v);
    const pythonCandidates = [settings.pythonPath, await pythonExtensionInterpreter(v)].filter(
      (p): p is string => Boolean(p),
    );
    const resolved = await resolveServer(settings.serverPath, pythonCandidates, deps.resolverEnv);
    if ("error" in resolved) {
      status.setFailure(resolved.error);
      output.appendLine(resolved.error);
      const choice = await v.window.showErrorMessage(resolved.error, "Open Settings", "Show Output");
      if (choice === "Open Settings") {
        await v.commands.executeCommand("workbench.action.openSettings", "dice.server");
      } else if (choice === "Show Output") {
        output.show();
      }
      return;
    }
    status.setFailure(undefined);
    output.appendLine(`Starting ${resolved.command} ${resolved.args.join(" ")} (found via ${resolved.source})`);
    const clientOptions: LanguageClientOptions = {
      documentSelector: [
        { scheme: "file", language: "cuda-cpp" },
        { scheme: "file", pattern: "**/*.{cu,cuh}" },
        { scheme: "untitled", language: "cuda-cpp" },
      ],
      initializationOptions: { dice: serverSection(settings) },
      outputChannel: output,
      middleware: {
        workspace: {
          // The server asks for the `dice` section; answer with trust applied, so an untrusted
          // workspace can never switch GPU runs or regenerate-on-save on.
          configuration: (params) =>
            params.items.map((item) => (item.section === "dice" ? serverSection(settingsOf(v)) : null)),
        },
      },
    };
    client = deps.createClient({ command: resolved.command, args: resolved.args }, clientOptions);
    client.onNotification("dice/saveDocument", (p: SaveDocument) => void saveIfUnchanged(v, p));
    client.onNotification("dice/status", (s: ServerStatus) => {
      if (s.arch) {
        status.setArch(s.arch);
      }
      status.setGpu(gpuState(v, settingsOf(v), s.gpu));
      status.setProgress(s.progress ?? undefined);
    });
    await client.start();
    if (running) {
      running.client = client;
    }
  };

  const pushSettings = async (): Promise<void> => {
    settings = settingsOf(v);
    status.setArch(settings.arch);
    status.setGpu(gpuState(v, settings));
    await client?.sendNotification("workspace/didChangeConfiguration", {
      settings: { dice: serverSection(settings) },
    });
  };

  const register = (name: string, fn: (...args: unknown[]) => unknown) =>
    context.subscriptions.push(v.commands.registerCommand(name, fn));

  register("dice.showOutput", () => output.show());
  register("dice.restartServer", async () => {
    if (client) {
      await client.stop();
      client = undefined;
    }
    await startClient();
  });
  register("dice.generateAtCursor", async () => {
    const editor = v.window.activeTextEditor;
    if (!editor || !client) {
      v.window.showInformationMessage("DICE: open a .cu file and place the cursor on a // @dice: intent.");
      return;
    }
    await client.sendRequest("workspace/executeCommand", {
      command: "dice.generateAt",
      arguments: [{ uri: editor.document.uri.toString(), line: editor.selection.active.line }],
    });
  });
  register("dice.acceptGeneration", async () => {
    const editor = v.window.activeTextEditor;
    if (!editor || !client) {
      return;
    }
    await client.sendRequest("workspace/executeCommand", {
      command: "dice.accept",
      arguments: [{ uri: editor.document.uri.toString() }],
    });
  });
  register("dice.regenerateStale", async () => {
    const editor = v.window.activeTextEditor;
    if (!editor || !client) {
      return;
    }
    await client.sendRequest("workspace/executeCommand", {
      command: "dice.regenerateStale",
      arguments: [{ uri: editor.document.uri.toString() }],
    });
  });

  context.subscriptions.push(
    v.workspace.onDidChangeConfiguration((e) => {
      if (e.affectsConfiguration("dice")) {
        void pushSettings();
      }
    }),
    v.workspace.onDidGrantWorkspaceTrust(() => void pushSettings()),
  );

  running = {
    client,
    vscode: v,
    dispose: () => {
      status.dispose();
      output.dispose();
    },
  };
  context.subscriptions.push({ dispose: () => running?.dispose() });
  await startClient();
}

/** Save the document when it is still the version the server wrote its kernels into (the user
 * typed nothing since) and has unsaved changes: regenerate-on-save then reaches the disk. */
export async function saveIfUnchanged(v: typeof vscode, params: SaveDocument): Promise<boolean> {
  const doc = v.workspace.textDocuments.find((d) => d.uri.toString() === params.uri);
  if (!doc || doc.version !== params.version || !doc.isDirty) {
    return false;
  }
  return doc.save();
}

/** The interpreter chosen in the Python extension, when it is installed. */
async function pythonExtensionInterpreter(v: typeof vscode): Promise<string | undefined> {
  const ext = v.extensions.getExtension("ms-python.python");
  if (!ext) {
    return undefined;
  }
  try {
    const api = (await ext.activate()) as {
      environments?: { getActiveEnvironmentPath(): { path: string } };
    };
    return api.environments?.getActiveEnvironmentPath().path;
  } catch {
    return undefined;
  }
}
