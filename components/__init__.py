"""Pulumi components, one module per capability. Nothing is registered at import time."""
