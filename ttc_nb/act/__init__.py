"""Adaptive Computation Time (Graves 2016) and PonderNet (Banino et al. 2021) on synthetic tasks."""
