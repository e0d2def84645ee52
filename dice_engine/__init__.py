"""DICE engine: intents in CUDA files → verified, hardware-adapted kernels; diagnostics for any CUDA code."""
