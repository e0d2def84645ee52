"""GPU verification and measurement: a crash-proof pool of warm child processes that checks
candidates against the reference evaluator and times them, plus compute-sanitizer and Nsight
Compute findings and `doctor()`."""
from .doctor import doctor
from .metrics import Ceilings
from .pool import GpuRunner
from .profiler import profile, profile_command
from .report import VERDICTS, RunReport
from .sanitizer import sanitize, sanitize_command

__all__ = ["Ceilings", "GpuRunner", "RunReport", "VERDICTS", "doctor", "profile", "profile_command",
           "sanitize", "sanitize_command"]
