"""RASP (Weiss et al. 2021): language, interpreter, analysis, training, compiler; tracr's API."""
