"""Check what the program hands to Helm charts and CRDs against what they actually read.

- Helm: every value path the program sets must exist in the chart's default values, unless
  it lies under a free-form default (`{}` or a list), which the chart passes through.
- CRDs: a custom resource validates against the CRD's OpenAPI schema for its apiVersion,
  with unknown fields rejected: the API server would silently prune them, so a misspelled
  field would do nothing in the cluster.
"""

from __future__ import annotations

import re
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import yaml


def unread_values(values: dict[str, Any], defaults: dict[str, Any], path: str = "") -> list[str]:
    """Value paths that are not keys of the chart's defaults (so nothing reads them)."""
    unread = []
    for key, value in values.items():
        where = f"{path}.{key}" if path else key
        if key not in defaults:
            unread.append(where)
            continue
        default = defaults[key]
        if isinstance(value, dict) and isinstance(default, dict) and default:
            unread += unread_values(value, default, where)
    return unread


@cache
def chart_defaults(values_file: Path) -> dict[str, Any]:
    return yaml.safe_load(values_file.read_text())


CONSTRAINT_KEYWORDS = frozenset({"oneOf", "anyOf", "allOf", "not"})


def _strict(schema: Any) -> Any:
    """The schema with `additionalProperties: false` wherever the API server would prune."""
    if isinstance(schema, list):
        return [_strict(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    # oneOf/anyOf/allOf/not branches only constrain (which fields must be set); the API server
    # prunes by the structural `properties` alone, so the branches must not reject fields.
    strict = {key: value if key in CONSTRAINT_KEYWORDS else _strict(value) for key, value in schema.items()}
    if (
        "properties" in schema
        and "additionalProperties" not in schema
        and not schema.get("x-kubernetes-preserve-unknown-fields")
    ):
        strict["additionalProperties"] = False
    return strict


@cache
def _crd_schemas(crd_file: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """{(apiVersion, kind): strict openAPIV3Schema} for every served version in a CRD file."""
    schemas = {}
    for document in yaml.safe_load_all(crd_file.read_text()):
        if not document or document.get("kind") != "CustomResourceDefinition":
            continue
        spec = document["spec"]
        for version in spec["versions"]:
            if version.get("served"):
                api_version = f"{spec['group']}/{version['name']}"
                schema = _strict(version["schema"]["openAPIV3Schema"])
                # apiVersion, kind and metadata are implied at the root of every structural schema
                # (kubernetes.io/docs/tasks/extend-kubernetes/custom-resources/custom-resource-definitions,
                # "Specifying a structural schema"); some CRDs (Flink's) leave them out.
                root = schema.setdefault("properties", {})
                root.setdefault("apiVersion", {"type": "string"})
                root.setdefault("kind", {"type": "string"})
                root.setdefault("metadata", {"type": "object"})
                schemas[(api_version, spec["names"]["kind"])] = schema
    return schemas


def _go_pattern(validator: Any, pattern: str, instance: Any, schema: Any) -> Any:
    """`pattern` as the API server reads it (Go's RE2): a leading `^(?i)` (Kueue's AdmissionCheck
    kind) sets a flag after the anchor, which Python's `re` accepts only first."""
    if pattern.startswith("^(?i)"):
        pattern = "(?i)^" + pattern[len("^(?i)") :]
    if validator.is_type(instance, "string") and not re.search(pattern, instance):
        yield jsonschema.ValidationError(f"{instance!r} does not match {pattern!r}")


_CrdValidator = jsonschema.validators.extend(jsonschema.Draft7Validator, {"pattern": _go_pattern})


def manifest_of(inputs: dict[str, Any]) -> dict[str, Any]:
    """A captured CustomResource's inputs as the object the API server receives."""
    return {key: inputs[key] for key in ("apiVersion", "kind", "metadata", "spec") if key in inputs}


def crd_problems(manifest: dict[str, Any], crd_files: list[Path]) -> list[str]:
    """Schema violations of one custom resource ({apiVersion, kind, metadata, spec})."""
    wanted = (str(manifest.get("apiVersion")), str(manifest.get("kind")))
    for crd_file in crd_files:
        schema = _crd_schemas(crd_file).get(wanted)
        if schema is not None:
            validator = _CrdValidator(schema)
            return sorted(
                f"{'.'.join(str(p) for p in error.absolute_path) or '<root>'}: {error.message}"
                for error in validator.iter_errors(manifest)
            )
    return [f"no served CRD version defines {wanted[1]} in {wanted[0]}"]
