"""The shape of a stack's `platform:` config: one pydantic model (model.py), key spelling
(keys.py), and the reference generated from it (reference.py). Imports only `facts`; the
checks that relate several keys live above planning, in `validation`."""

from stackconfig.model import PlatformConfig

__all__ = ["PlatformConfig"]
