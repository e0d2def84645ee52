// A stand-in for the `vscode` module: VS Code itself cannot run in CI (no binary on npm or
// Debian), so unit tests run the extension against this recording mock instead.

type Handler = (...args: unknown[]) => unknown;

export const state = {
  settings: new Map<string, unknown>(),
  trusted: true,
  commands: new Map<string, Handler>(),
  executed: [] as Array<{ command: string; args: unknown[] }>,
  errors: [] as Array<{ message: string; actions: string[] }>,
  infos: [] as string[],
  errorChoice: undefined as string | undefined,
  statusItems: [] as MockStatusItem[],
  output: [] as string[],
  outputShown: 0,
  configListeners: [] as Handler[],
  trustListeners: [] as Handler[],
  activeTextEditor: undefined as unknown,
  textDocuments: [] as MockDocument[],
};

/** An open document: `save()` records the save and clears the dirty flag. */
export class MockDocument {
  saves = 0;
  constructor(readonly uri: { toString(): string }, public version: number, public isDirty: boolean) {}
  async save(): Promise<boolean> {
    this.saves += 1;
    this.isDirty = false;
    return true;
  }
}

export function reset(): void {
  state.settings.clear();
  state.trusted = true;
  state.commands.clear();
  state.executed = [];
  state.errors = [];
  state.infos = [];
  state.errorChoice = undefined;
  state.statusItems = [];
  state.output = [];
  state.outputShown = 0;
  state.configListeners = [];
  state.trustListeners = [];
  state.activeTextEditor = undefined;
  state.textDocuments = [];
}

export class MockStatusItem {
  text = "";
  tooltip: unknown = undefined;
  command: unknown = undefined;
  visible = false;
  show(): void {
    this.visible = true;
  }
  dispose(): void {
    this.visible = false;
  }
}

export enum StatusBarAlignment {
  Left = 1,
  Right = 2,
}

const disposable = { dispose: () => undefined };

export const window = {
  createOutputChannel: (_name: string) => ({
    appendLine: (line: string) => state.output.push(line),
    append: (text: string) => state.output.push(text),
    show: () => {
      state.outputShown += 1;
    },
    dispose: () => undefined,
  }),
  createStatusBarItem: () => {
    const item = new MockStatusItem();
    state.statusItems.push(item);
    return item;
  },
  showErrorMessage: async (message: string, ...actions: string[]) => {
    state.errors.push({ message, actions });
    return state.errorChoice;
  },
  showInformationMessage: async (message: string) => {
    state.infos.push(message);
    return undefined;
  },
  get activeTextEditor() {
    return state.activeTextEditor;
  },
};

export const workspace = {
  getConfiguration: (section: string) => ({
    get: <T>(key: string, fallback: T): T => {
      const full = `${section}.${key}`;
      return state.settings.has(full) ? (state.settings.get(full) as T) : fallback;
    },
  }),
  get isTrusted() {
    return state.trusted;
  },
  get textDocuments() {
    return state.textDocuments;
  },
  onDidChangeConfiguration: (fn: Handler) => {
    state.configListeners.push(fn);
    return disposable;
  },
  onDidGrantWorkspaceTrust: (fn: Handler) => {
    state.trustListeners.push(fn);
    return disposable;
  },
};

export const commands = {
  registerCommand: (name: string, fn: Handler) => {
    state.commands.set(name, fn);
    return disposable;
  },
  executeCommand: async (command: string, ...args: unknown[]) => {
    state.executed.push({ command, args });
    return undefined;
  },
};

export const extensions = {
  getExtension: (_id: string) => undefined,
};
