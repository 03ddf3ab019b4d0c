"""Benchmarks: one script per question, each printing a table (see README.md here)."""
