"""Admission webhooks: the router, the Flask app factory and the HyperNode rules."""
