"""Controller framework and the built-in controllers (hypernode, podgroup)."""
