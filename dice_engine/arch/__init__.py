"""Architecture tables, named GPUs and the occupancy calculator."""
from .occupancy import Occupancy, occupancy
from .tables import (ARCHS, DEFAULT_ARCH, GPUS, ArchSpec, UnknownTarget, is_arch_name, resolve,
                     supported_targets)

__all__ = ["ARCHS", "DEFAULT_ARCH", "GPUS", "ArchSpec", "Occupancy", "UnknownTarget", "is_arch_name",
           "occupancy", "resolve", "supported_targets"]
