"""Architecture tables, named GPUs and the occupancy calculator."""
from .tables import ARCHS, DEFAULT_ARCH, GPUS, ArchSpec, resolve

__all__ = ["ARCHS", "DEFAULT_ARCH", "GPUS", "ArchSpec", "resolve"]
