"""Everything that talks to the API server; the only importer of the kubernetes client."""
