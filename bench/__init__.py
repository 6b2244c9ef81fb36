"""Benchmarks: each module prints its figures and ratios against a baseline run alongside."""
