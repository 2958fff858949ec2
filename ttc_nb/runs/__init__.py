"""Named experiments with their presets, and the run directories that record what a result needs."""
