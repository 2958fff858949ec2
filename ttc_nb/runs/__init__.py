"""Named experiments and presets, run directories, and the provenance each run records."""
