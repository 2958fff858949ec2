"""RASP (Weiss et al. 2021): the language, interpreter, analysis, trained transformers, compiler."""
