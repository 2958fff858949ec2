"""Looped transformers (Yang et al. 2024) learning in-context function classes."""
