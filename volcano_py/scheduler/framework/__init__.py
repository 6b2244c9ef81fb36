"""Volcano's scheduler framework: configuration, plugin/action registries, Session, Statement."""
