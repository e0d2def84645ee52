// DICE for VS Code: the extension's entry point. All generation and analysis logic lives in
// the dice-lsp server; this file only supplies the real VS Code API and language client.

import * as vscode from "vscode";
import { LanguageClient, TransportKind } from "vscode-languageclient/node";

import { activateWith, deactivateRunning, DiceClient } from "./activation";
import { nodeResolverEnv } from "./serverResolution";

export function activate(context: vscode.ExtensionContext): Promise<void> {
  return activateWith(context, {
    vscode,
    resolverEnv: nodeResolverEnv,
    createClient: (server, clientOptions) =>
      new LanguageClient(
        "dice",
        "DICE",
        { command: server.command, args: server.args, transport: TransportKind.stdio },
        clientOptions,
      ) as unknown as DiceClient,
  });
}

export function deactivate(): Promise<void> {
  return deactivateRunning();
}
