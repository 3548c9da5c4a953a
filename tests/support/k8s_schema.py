"""kubernetes_validate's check of an object against its Kubernetes version's schema, with each
schema compiled once per run instead of once per object.

`kubernetes_validate.validate` re-reads and parses the schema and its several-megabyte
`_definitions.json` for every object it checks, which was most of the time of the tests that
validate every object of a plan (issue 34). This builds the same Draft 2020-12 validator over
the same files (kubernetes_validate/utils.py, `validate`, at the pinned version) and keeps it;
the version and file resolution are kubernetes_validate's own.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import jsonschema
import kubernetes_validate
from kubernetes_validate import utils
from referencing import Registry, Resource


@functools.cache
def _validator(desired_version: str, kind: str, api_version: str, strict: bool) -> Any:
    version = [v for v in utils.all_versions() if utils.major_minor(v) <= utils.major_minor(desired_version)][-1]
    group_version = re.sub(r"^([^./]*)(?:\.[^/]*)?/", r"\1-", api_version)
    schema_dir = f"v{version}-local" + ("-strict" if strict else "")
    schema = utils.schema_contents(
        f"kubernetes-json-schema/{schema_dir}/{kind.lower()}-{group_version}.json", desired_version
    )
    definitions = _definitions(schema_dir, desired_version)
    registry = Resource.from_contents(definitions) @ (Resource.from_contents(schema) @ Registry())
    return jsonschema.validators.Draft202012Validator(schema, registry=registry), utils.major_minor(version)


@functools.cache
def _definitions(schema_dir: str, desired_version: str) -> Any:
    return utils.schema_contents(f"kubernetes-json-schema/{schema_dir}/_definitions.json", desired_version)


def validate(data: dict[str, Any], desired_version: str, strict: bool = False) -> str:
    """As kubernetes_validate.validate: the schema version used, or its ValidationError."""
    desired_version = desired_version.removeprefix("v")
    validator, version = _validator(desired_version, data["kind"], data["apiVersion"], strict)
    try:
        validator.validate(data)
    except jsonschema.ValidationError as error:
        raise kubernetes_validate.ValidationError(error, version=version) from None
    return str(version)
