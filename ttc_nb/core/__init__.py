"""Recurrent protocol and compute curves, shared losses, transformer blocks, fixed-point solvers."""
