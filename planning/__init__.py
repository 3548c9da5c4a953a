"""Pure plans over the validated config: addresses, capacity, names, roles, queues, manifests.

Every function here is a plain function over plain values (the config model of `stackconfig`,
the facts of `facts`), tested on its own; nothing imports Pulumi or anything above this layer
(`validation`, `components`). tests/test_layers.py holds the layering.
"""
