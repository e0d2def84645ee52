// Reading DICE's settings, and what Workspace Trust takes away from them.

export interface DiceSettings {
  serverPath: string;
  pythonPath: string;
  arch: string;
  nvccPath: string;
  nvccFlags: string[];
  includePaths: string[];
  gpuEnabled: boolean;
  budget: number;
  regenerateOnSave: boolean;
  /** Write each better kernel as it is found (one undo step per round) instead of once. */
  streamEdits: boolean;
  /** dice.llm.* as the server reads them; `use` is "off" in an untrusted workspace. */
  llm: Record<string, unknown>;
}

/** The dice.llm keys passed to the server (design.md §6). */
export const LLM_KEYS = [
  "use", "backend", "baseUrl", "model", "apiKeyEnv", "modelPath", "trustRemoteCode", "timeout",
  "maxTokens", "temperature", "rounds", "diffusionSteps", "blockLength",
] as const;

/** Reads one `dice.*` key; in VS Code this is `workspace.getConfiguration('dice').get`. */
export type SettingReader = <T>(key: string, fallback: T) => T;

/**
 * The effective settings. In an untrusted workspace nothing may execute code on the GPU, saves
 * never regenerate and no model is asked, whatever the settings say (VS Code already ignores
 * workspace values of the executable paths and model endpoints, listed as
 * restrictedConfigurations in package.json).
 */
export function readSettings(get: SettingReader, trusted: boolean): DiceSettings {
  return {
    serverPath: get("server.path", ""),
    pythonPath: get("server.pythonPath", ""),
    arch: get("arch", "sm_90"),
    nvccPath: get("nvccPath", ""),
    nvccFlags: get<string[]>("nvccFlags", []),
    includePaths: get<string[]>("includePaths", []),
    gpuEnabled: trusted && get("gpu.enabled", false),
    budget: get("budget", 24),
    regenerateOnSave: trusted && get("regenerateOnSave", true),
    streamEdits: get("streamEdits", false),
    llm: readModelSettings(get, trusted),
  };
}

function readModelSettings(get: SettingReader, trusted: boolean): Record<string, unknown> {
  const llm: Record<string, unknown> = {};
  for (const key of LLM_KEYS) {
    const value = get<unknown>(`llm.${key}`, undefined);
    if (value !== undefined && value !== null && value !== "") {
      llm[key] = value;
    }
  }
  if (!trusted) {
    llm.use = "off";
  }
  return llm;
}

/** The `dice` section as the server expects it, in initializationOptions and workspace/configuration. */
export function serverSection(s: DiceSettings): Record<string, unknown> {
  return {
    arch: s.arch,
    nvccPath: s.nvccPath || null,
    nvccFlags: s.nvccFlags,
    includePaths: s.includePaths,
    gpu: { enabled: s.gpuEnabled },
    budget: s.budget,
    regenerateOnSave: s.regenerateOnSave,
    streamEdits: s.streamEdits,
    llm: s.llm,
  };
}
