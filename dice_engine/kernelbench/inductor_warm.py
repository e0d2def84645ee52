"""Fill Inductor's on-disk caches for tasks that will be timed beside `torch.compile`.

    python -m dice_engine.kernelbench.inductor_warm TASK.py...

Compiling a task's Model takes seconds of CPU (Triton's code generation); the evaluation child
pays it in its warm-up, inside the GPU's queue. Run beforehand, several of these processes at a
time on a many-core machine, it leaves the FX-graph and Triton caches filled, so the timed run
only looks them up. Each task is compiled as the evaluation child will compile it: the same
exact-fp32 flags, the same seeded inputs, under no_grad. One JSON line per task on stdout with
its seconds, or the error; nothing here is a measurement.
"""

from __future__ import annotations

import json
import sys
import time

import torch

from .eval_child import SEED, exact_fp32, load_module, task_inputs


def warm(task_path: str) -> dict[str, object]:
    start = time.perf_counter()
    task = load_module(task_path, "kernelbench_task")
    torch.manual_seed(SEED)
    model = task.Model(*task.get_init_inputs()).cuda()
    compiled = torch.compile(model)
    with torch.no_grad():
        compiled(*task_inputs(task, SEED))
    torch.cuda.synchronize()
    return {"task": task_path, "seconds": round(time.perf_counter() - start, 2)}


def main(paths: list[str]) -> int:
    exact_fp32()
    for path in paths:
        try:
            line = warm(path)
        except Exception as e:  # a task Inductor cannot compile is timed (and fails) later
            line = {"task": path, "error": f"{type(e).__name__}: {' '.join(str(e).split())[:200]}"}
        print(json.dumps(line), flush=True)
        torch._dynamo.reset()
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
