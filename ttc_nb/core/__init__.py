"""Recurrent protocol and compute curves, losses, transformer blocks, fixed points and gradients."""
