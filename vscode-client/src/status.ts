// The status-bar item: target arch, GPU runner state, trust, and generation progress.

export interface StatusItem {
  text: string;
  tooltip?: string | unknown;
  command?: string | unknown;
  show(): void;
  dispose(): void;
}

export type GpuState = "active" | "off" | "unavailable" | "restricted";

export class DiceStatus {
  private arch = "sm_90";
  private gpu: GpuState = "off";
  private progress: string | undefined;
  private failed: string | undefined;

  constructor(private readonly item: StatusItem) {
    item.command = "dice.showOutput";
    this.render();
    item.show();
  }

  setArch(arch: string): void {
    this.arch = arch;
    this.render();
  }

  setGpu(state: GpuState): void {
    this.gpu = state;
    this.render();
  }

  /** A line such as "round 3/8 · 41.2 µs"; undefined when no generation runs. */
  setProgress(progress: string | undefined): void {
    this.progress = progress;
    this.render();
  }

  setFailure(message: string | undefined): void {
    this.failed = message;
    this.render();
  }

  private render(): void {
    const gpuText: Record<GpuState, string> = {
      active: "GPU",
      off: "no GPU runs",
      unavailable: "no GPU found",
      restricted: "restricted",
    };
    const parts = [`DICE ${this.arch}`, gpuText[this.gpu]];
    if (this.progress) {
      parts.push(this.progress);
    }
    const icon = this.failed ? "$(error)" : this.progress ? "$(sync~spin)" : "$(circuit-board)";
    this.item.text = `${icon} ${parts.join(" · ")}`;
    const gpuTip: Record<GpuState, string> = {
      active: "Kernels are verified and timed on the local GPU.",
      off: "GPU runs are off (dice.gpu.enabled): kernels are scored by the cost model.",
      unavailable: "No GPU runner was found: kernels are scored by the cost model.",
      restricted: "Untrusted workspace: no GPU runs and no regenerate-on-save.",
    };
    this.item.tooltip = this.failed ?? `Target ${this.arch}. ${gpuTip[this.gpu]} Click for the DICE output.`;
  }

  dispose(): void {
    this.item.dispose();
  }
}
