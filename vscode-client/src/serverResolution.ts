// Finding the dice-lsp server: an explicit path, then a Python interpreter, then PATH.

import * as fs from "fs";
import * as path from "path";
import { execFile } from "child_process";

export interface ServerCommand {
  command: string;
  args: string[];
  /** Which rule found it, shown in the output channel. */
  source: "dice.server.path" | "python" | "PATH";
}

export interface ResolutionFailure {
  error: string;
}

export interface ResolverEnv {
  exists(file: string): boolean;
  /** The first executable named `name` on PATH, if any. */
  which(name: string): string | undefined;
  /** Whether `python` can import dice_lsp. */
  canImportServer(python: string): Promise<boolean>;
}

export async function resolveServer(
  serverPath: string,
  pythonCandidates: string[],
  env: ResolverEnv,
): Promise<ServerCommand | ResolutionFailure> {
  if (serverPath) {
    if (!env.exists(serverPath)) {
      return { error: `dice.server.path is set to "${serverPath}", which does not exist.` };
    }
    return { command: serverPath, args: [], source: "dice.server.path" };
  }
  for (const python of pythonCandidates.filter((p) => p)) {
    if (await env.canImportServer(python)) {
      return { command: python, args: ["-m", "dice_lsp"], source: "python" };
    }
  }
  const onPath = env.which("dice-lsp");
  if (onPath) {
    return { command: onPath, args: [], source: "PATH" };
  }
  const tried = pythonCandidates.filter((p) => p);
  const pythons = tried.length ? ` Tried the Python interpreter(s) ${tried.join(", ")}.` : "";
  return {
    error:
      "DICE could not find its language server (dice-lsp)." +
      pythons +
      " Install it with `pip install dice-cuda`, or set dice.server.path / dice.server.pythonPath.",
  };
}

export const nodeResolverEnv: ResolverEnv = {
  exists: (file) => fs.existsSync(file),
  which(name) {
    const exts = process.platform === "win32" ? [".exe", ".cmd", ""] : [""];
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      for (const ext of exts) {
        const candidate = path.join(dir, name + ext);
        if (dir && fs.existsSync(candidate)) {
          return candidate;
        }
      }
    }
    return undefined;
  },
  canImportServer: (python) =>
    new Promise((resolve) => {
      execFile(python, ["-c", "import dice_lsp"], { timeout: 15000 }, (err) => resolve(!err));
    }),
};
