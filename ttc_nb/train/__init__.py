"""Training: the config, the loop `fit`, processes and deadlines, and the files a run writes."""
