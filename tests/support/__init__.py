"""Helpers the tests share, each with its own tests (tests/test_support.py)."""
