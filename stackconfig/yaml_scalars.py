"""Plain YAML scalars that readers disagree on, in a stack file.

YAML 1.1 (PyYAML, and the offline preview) reads `yes`, `no`, `on`, `off` as booleans and `0777`
as octal 511; YAML 1.2 (the Pulumi CLI's Go reader, gopkg.in/yaml.v3, for untyped values)
reads `yes` as text. Either way the stack file does not say what its author meant, and the
config model would quietly take `maxCount: yes` as 1 or `prefix: yes` as "true". Such a value
is refused with its key: write true/false or the number, or quote text.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

import yaml

from stackconfig.keys import NAMESPACE, key

# libyaml's parser where PyYAML has it: the same nodes, styles included, many times faster (every
# unit of an environment reads its file).
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

_BOOLEAN_WORDS = re.compile(r"^(y|Y|yes|Yes|YES|n|N|no|No|NO|on|On|ON|off|Off|OFF)$")
_OTHER_NUMBERS = re.compile(
    r"^[-+]?(0[0-9_]+|0[oO][0-7_]+|0[xX][0-9a-fA-F_]+|0[bB][01_]+|[1-9][0-9_]*(:[0-5]?[0-9])+|[1-9][0-9]*(_[0-9]+)+|[0-9]+[eE][-+]?[0-9]+)$"
)


def _reason(text: str) -> str | None:
    if _BOOLEAN_WORDS.match(text):
        return f"{text} is a boolean to some YAML readers and text to others; write true or false, or quote text"
    if _OTHER_NUMBERS.match(text):
        return (
            f"{text} is read differently by YAML 1.1 and 1.2 (octal, hexadecimal, base 60, with "
            "underscores or an exponent without a point); write a plain decimal number, or quote text"
        )
    return None


def _walk(node: yaml.Node, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], yaml.ScalarNode]]:
    if isinstance(node, yaml.MappingNode):
        for name, value in node.value:
            yield from _walk(value, path + (name.value,))
    elif isinstance(node, yaml.SequenceNode):
        for index, value in enumerate(node.value):
            yield from _walk(value, path + (index,))
    elif isinstance(node, yaml.ScalarNode) and not node.style:  # plain: None, or "" from libyaml
        yield path, node


def ambiguous_scalars(text: str) -> list[tuple[str, str]]:
    """(config key, reason) for every plain scalar under `config:` that YAML readers disagree on."""
    try:
        document = yaml.compose(text, Loader=_LOADER)
    except yaml.YAMLError as error:
        return [("stack file", f"is not valid YAML: {error}")]
    if not isinstance(document, yaml.MappingNode):
        return []
    found = []
    for name, value in document.value:
        if name.value != "config":
            continue
        for path, scalar in _walk(value, ()):
            reason = _reason(scalar.value)
            if reason is None:
                continue
            head, *rest = path
            namespace, _, first = str(head).partition(":") if ":" in str(head) else (NAMESPACE, "", str(head))
            where = key(first, *rest) if namespace == NAMESPACE else ".".join([str(head), *map(str, rest)])
            found.append((where, reason))
    return found
