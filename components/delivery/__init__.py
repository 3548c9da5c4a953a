"""The delivery project's components (delivery/__main__.py): the state backend, and per
environment the identities, roles and grants planning/delivery.py decides."""
