"""Architecture tables, named GPUs and the occupancy calculator."""
from .occupancy import Occupancy, occupancy
from .tables import ARCHS, DEFAULT_ARCH, GPUS, ArchSpec, resolve

__all__ = ["ARCHS", "DEFAULT_ARCH", "GPUS", "ArchSpec", "Occupancy", "occupancy", "resolve"]
