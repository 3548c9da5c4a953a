"""Pure planning logic: AKS limits, address arithmetic, naming and role IDs.

Nothing here imports Pulumi; every function is a plain function over plain values, tested
on its own (tests/test_planning_*.py).
"""
