"""Pure API layer: constants, resources, quantities, selectors and typed views (no I/O)."""
