"""The KernelBench front end: a task file (`Model`, `get_inputs`, `get_init_inputs`) in, a
self-contained `ModelNew` file whose forward runs DICE kernels out; and KernelBench's
evaluation protocol for such a pair on a GPU.

    from dice_engine.kernelbench import translate
    t = translate("19_ReLU.py", arch="sm_90")
    open("19_ReLU_dice.py", "w").write(t.text)
"""

from .lower import Unmapped
from .task import TaskError
from .translate import BuildError, Translation, translate

__all__ = ["BuildError", "TaskError", "Translation", "Unmapped", "translate"]
