"""Reports from committed runs: reproduction tables, the atlas of compute curves, and costs."""
