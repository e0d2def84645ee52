"""(being written)"""
from .base import Sketch

SKETCHES: list[Sketch] = []
