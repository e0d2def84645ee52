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
}

/** Reads one `dice.*` key; in VS Code this is `workspace.getConfiguration('dice').get`. */
export type SettingReader = <T>(key: string, fallback: T) => T;

/**
 * The effective settings. In an untrusted workspace nothing may execute code on the GPU and
 * saves never regenerate, whatever the settings say (VS Code already ignores workspace values
 * of the executable paths, listed as restrictedConfigurations in package.json).
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
  };
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
  };
}
