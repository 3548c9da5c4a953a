"""Offline policy review: the CrossGuard packs under `policies/`, run in-process.

The Pulumi CLI starts each pack's `__main__.py`, whose `PolicyPack` serves pulumi-policy's
analyzer over gRPC, then calls `Configure` (the `--policy-pack-config` file), `Analyze` for each
resource and `AnalyzeStack` once. This module calls the same analyzer object
(`pulumi_policy.policy._PolicyAnalyzerServicer`) with the same protobuf messages, built from the
requests the offline engine captured, so a policy behaves here as it does in `pulumi preview`:
unknown values raise inside the policy and come back as "can't run policy ... during preview",
secrets are unwrapped by the SDK, and the enforcement level of each violation is the analyzer's.

`"all"` in a config file sets the level of every policy the file does not name, as the CLI
does (the analyzer leaves that to the CLI). The file is checked more strictly than the CLI
checks it: unknown policies and unknown properties are errors here, as in the stack config, so
a typo cannot silently leave a policy at its default. Waivers are listed with every review, and
an expired one fails it. Differences that remain: the CLI analyzes inputs after the provider's
`Check` (with provider defaults), while these are the program's inputs (the policies never rely
on a default), and the mocks know every resource ID, so a first real preview can report more
"can't run during preview" advisories than this one.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime
import functools
import importlib
import inspect
import json
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jsonschema
import pulumi_policy.policy as pulumi_policy_module
import yaml
from google.protobuf import json_format, struct_pb2
from pulumi.runtime.proto import analyzer_pb2
from pulumi_policy import EnforcementLevel, Policy, StackValidationPolicy
from pulumi_policy.deserialize import deserialize_properties as _deserialize_properties
from pulumi_policy.policy import (
    PolicyResource,
    StackValidationArgs,
    _NotApplicableError,
    _PolicyAnalyzerServicer,
)
from pulumi_policy.proxy import UnknownValueError
from pulumi_policy.proxy import unknown_checking_proxy as _unknown_checking_proxy

from offline.engine import PROJECT_ROOT, CapturedResource, Plan

POLICIES_DIR = PROJECT_ROOT / "policies"
_LEVELS = {level.value: level for level in EnforcementLevel}
_LEVEL_TO_PROTO = {
    EnforcementLevel.ADVISORY: analyzer_pb2.ADVISORY,
    EnforcementLevel.MANDATORY: analyzer_pb2.MANDATORY,
    EnforcementLevel.REMEDIATE: analyzer_pb2.REMEDIATE,
    EnforcementLevel.DISABLED: analyzer_pb2.DISABLED,
}


class PolicyConfigError(ValueError):
    """An enforcement file names an unknown policy, level or property."""


@dataclass(frozen=True)
class Pack:
    name: str
    version: str
    directory: Path
    policies: tuple[Policy, ...]
    # The Pulumi projects it reviews (the package's PROJECTS): "platform", "delivery".
    projects: tuple[str, ...] = ("platform",)

    @property
    def policy_names(self) -> tuple[str, ...]:
        return tuple(p.name for p in self.policies)

    def config_file(self, environment: str) -> Path:
        return self.directory / "config" / f"{environment}.json"


@functools.cache
def _load_packs(directory: Path) -> tuple[Pack, ...]:
    packs = []
    for manifest in sorted(directory.glob("*/PulumiPolicy.yaml")):
        pack_dir = manifest.parent
        version = str(yaml.safe_load(manifest.read_text())["version"])
        # The pack's policies live in its one package, beside __main__.py (which would block).
        (package,) = [init.parent.name for init in pack_dir.glob("*/__init__.py")]
        if str(pack_dir) not in sys.path:
            sys.path.append(str(pack_dir))
        module = importlib.import_module(package)
        packs.append(Pack(module.PACK_NAME, version, pack_dir, tuple(module.POLICIES), tuple(module.PROJECTS)))
    return tuple(packs)


def load_packs(directory: Path = POLICIES_DIR, project: str = "platform") -> tuple[Pack, ...]:
    """The packs that review `project` ("platform": the environments' stacks; "delivery": delivery/)."""
    return tuple(pack for pack in _load_packs(directory.resolve()) if project in pack.projects)


@dataclass(frozen=True)
class Waiver:
    pack: str
    policy: str
    level: str
    reason: str
    approved_by: str
    expires: datetime.date | None

    def expired(self, today: datetime.date) -> bool:
        return self.expires is not None and self.expires < today


@dataclass(frozen=True)
class PackConfig:
    """One pack's enforcement for one environment: each policy's level and properties."""

    pack: Pack
    source: str
    levels: dict[str, EnforcementLevel]
    properties: dict[str, dict[str, Any]]
    waivers: tuple[Waiver, ...] = ()

    def request(self) -> analyzer_pb2.ConfigureAnalyzerRequest:
        request = analyzer_pb2.ConfigureAnalyzerRequest()
        for name, level in self.levels.items():
            config = analyzer_pb2.PolicyConfig(enforcementLevel=_LEVEL_TO_PROTO[level])
            config.properties.update(self.properties.get(name, {}))
            request.policyConfig[name].CopyFrom(config)
        return request


def _level(value: Any, where: str, problems: list[str]) -> EnforcementLevel | None:
    if value in _LEVELS:
        return _LEVELS[value]
    problems.append(f"{where}: {value!r} is not an enforcement level ({', '.join(_LEVELS)})")
    return None


def parse_pack_config(pack: Pack, document: dict[str, Any], source: str) -> PackConfig:
    """Expand a `--policy-pack-config` document for `pack`; every problem at once."""
    problems: list[str] = []
    policies = {p.name: p for p in pack.policies}
    default = EnforcementLevel.MANDATORY
    if "all" in document:
        default = _level(document["all"], f"{source}: all", problems) or default
    # "all" sets every policy the file does not name; without it, a policy's own level or mandatory.
    levels = {name: default if "all" in document else (p.enforcement_level or default) for name, p in policies.items()}
    properties: dict[str, dict[str, Any]] = {}
    waivers = []
    for key, value in document.items():
        where = f"{source}: {key}"
        if key == "all":
            continue
        if key not in policies:
            problems.append(f"{where}: not a policy of pack {pack.name}")
            continue
        if isinstance(value, str):
            levels[key] = _level(value, where, problems) or levels[key]
            continue
        if not isinstance(value, dict):
            problems.append(f"{where}: expected an enforcement level or an object")
            continue
        settings = dict(value)
        if "enforcementLevel" in settings:
            levels[key] = _level(settings.pop("enforcementLevel"), f"{where}.enforcementLevel", problems) or levels[key]
        schema = policies[key].config_schema
        known = schema.properties if schema else {}
        validator = jsonschema.Draft7Validator(
            {
                "type": "object",
                "properties": known,
                "additionalProperties": False,
                "required": list(schema.required or []) if schema else [],
            },
            format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER,
        )
        for error in validator.iter_errors(settings):
            path = ".".join(str(p) for p in error.absolute_path)
            problems.append(f"{where}{'.' + path if path else ''}: {error.message}")
        properties[key] = settings
        if "waiver" in settings:
            waiver = settings["waiver"]
            expires = waiver.get("expires")
            waivers.append(
                Waiver(
                    pack.name,
                    key,
                    levels[key].value,
                    str(waiver.get("reason", "")),
                    str(waiver.get("approvedBy", "")),
                    datetime.date.fromisoformat(expires) if isinstance(expires, str) and len(expires) == 10 else None,
                )
            )
    if problems:
        raise PolicyConfigError("\n".join(problems))
    # Defaults from each policy's schema, as policies read them.
    for name, policy in policies.items():
        schema_properties = policy.config_schema.properties if policy.config_schema else {}
        defaults = {k: v["default"] for k, v in schema_properties.items() if "default" in v}
        merged = {**defaults, **properties.get(name, {})}
        merged.pop("waiver", None)
        if merged:
            properties[name] = merged
        else:
            properties.pop(name, None)
    return PackConfig(pack, source, levels, properties, tuple(waivers))


def load_pack_config(pack: Pack, environment: str) -> PackConfig:
    path = pack.config_file(environment)
    try:
        document = json.loads(path.read_text())
    except FileNotFoundError:
        raise PolicyConfigError(f"{path.relative_to(PROJECT_ROOT)}: missing (every environment has one)") from None
    except json.JSONDecodeError as error:
        raise PolicyConfigError(f"{path.relative_to(PROJECT_ROOT)}: not JSON: {error}") from None
    return parse_pack_config(pack, document, str(path.relative_to(PROJECT_ROOT)))


@dataclass(frozen=True)
class Violation:
    pack: str
    version: str
    policy: str
    level: str  # advisory | mandatory (a remediate policy that still fails reports mandatory)
    severity: str
    urn: str
    resource_type: str
    resource_name: str
    message: str  # the policy's description, then what this resource does wrong

    @property
    def during_preview(self) -> bool:
        """Not a violation yet: the policy needs a value Pulumi only knows after `up`."""
        return "during preview:" in self.message and self.message.startswith("can't run policy")


@dataclass(frozen=True)
class Remediation:
    pack: str
    policy: str
    urn: str
    resource_name: str


@dataclass
class Review:
    stack: str
    environment: str
    configs: list[PackConfig]
    violations: list[Violation] = field(default_factory=list)
    remediations: list[Remediation] = field(default_factory=list)
    today: datetime.date = field(default_factory=datetime.date.today)
    seconds: float = 0.0

    @property
    def waivers(self) -> list[Waiver]:
        return [w for config in self.configs for w in config.waivers]

    @property
    def expired_waivers(self) -> list[Waiver]:
        return [w for w in self.waivers if w.expired(self.today)]

    def at(self, level: str) -> list[Violation]:
        return [v for v in self.violations if v.level == level]

    @property
    def mandatory(self) -> list[Violation]:
        return self.at("mandatory")

    @property
    def advisory(self) -> list[Violation]:
        return self.at("advisory")

    @property
    def passed(self) -> bool:
        return not self.mandatory and not self.expired_waivers

    def fired(self) -> set[tuple[str, str]]:
        """(policy, level) pairs that fired: what tests compare."""
        return {(v.policy, v.level) for v in self.violations}


def _options(resource: CapturedResource) -> analyzer_pb2.AnalyzerResourceOptions:
    options = resource.options
    return analyzer_pb2.AnalyzerResourceOptions(
        protect=options.protect,
        ignoreChanges=list(options.ignore_changes),
        deleteBeforeReplace=options.delete_before_replace,
        deleteBeforeReplaceDefined=options.delete_before_replace,
        additionalSecretOutputs=list(options.additional_secret_outputs),
        parent=resource.parent or "",
    )


def _provider(plan: Plan, resource: CapturedResource) -> analyzer_pb2.AnalyzerProviderResource | None:
    """The explicit provider a resource names ("<provider urn>::<id>"), as the CLI sends it."""
    if not resource.provider:
        return None
    urn = resource.provider.rsplit("::", 1)[0]
    try:
        provider = plan.by_urn(urn)
    except LookupError:
        return None
    return analyzer_pb2.AnalyzerProviderResource(
        type=provider.type, properties=provider.raw_inputs, urn=provider.urn, name=provider.name
    )


def _analyzed(plan: Plan) -> list[CapturedResource]:
    # The engine does not run analyzers on provider resources.
    return [r for r in plan.resources if not r.type.startswith("pulumi:providers:")]


def _diagnostics(response, pack: Pack, plan: Plan, default_urn: str = "") -> list[Violation]:
    violations = []
    for diagnostic in response.diagnostics:
        urn = diagnostic.urn or default_urn
        try:
            resource = plan.by_urn(urn)
            kind, name = resource.type, resource.name
        except LookupError:
            kind, name = "pulumi:pulumi:Stack", f"{plan.project}-{plan.stack}"
        violations.append(
            Violation(
                pack=diagnostic.policyPackName or pack.name,
                version=diagnostic.policyPackVersion or pack.version,
                policy=diagnostic.policyName,
                level=analyzer_pb2.EnforcementLevel.Name(diagnostic.enforcementLevel).lower(),
                severity=analyzer_pb2.PolicySeverity.Name(diagnostic.severity).removeprefix("POLICY_SEVERITY_").lower(),
                urn=urn,
                resource_type=kind,
                resource_name=name,
                message=diagnostic.message,
            )
        )
    return violations


# Analyze results by pack, its configuration and the exact request: a resource policy sees only
# the one resource it is given, so a plan that differs from an earlier one in one resource is
# reviewed by re-running the resource policies on that resource alone (stack policies always
# run). The tests review many one-property variants of the same plan.
_ANALYZED: dict[tuple[str, bytes, bytes], list[Violation]] = {}
_ANALYZED_LIMIT = 50_000


def _analyze(analyzer, request, pack: Pack, config_key: bytes, plan: Plan, urn: str) -> list[Violation]:
    key = (pack.name, config_key, request.SerializeToString(deterministic=True))
    found = _ANALYZED.get(key)
    if found is None:
        found = _diagnostics(analyzer.Analyze(request, None), pack, plan, urn)
        if len(_ANALYZED) >= _ANALYZED_LIMIT:
            _ANALYZED.clear()
        _ANALYZED[key] = found
    return list(found)


class _MemoizedStructs:
    """`json_format` and `deserialize_properties` as pulumi-policy's analyzer sees them during a
    review, memoized per distinct properties Struct (its exact bytes).

    AnalyzeStack converts and deserializes every resource's properties (and its provider's) once
    per stack policy (pulumi_policy/policy.py, pinned at 1.21.0), which is most of a review's
    time. Both results are only read: `deserialize_properties` builds new dicts and lists from
    the converted ones, and `unknown_checking_proxy` copies every dict and list of the
    deserialized ones into the proxies policies see (pulumi_policy/proxy.py, `_proxy_helper`).
    So one conversion per distinct Struct gives the same answer; a test compares reviews with
    and without the memo. The proxies themselves are rebuilt the same way for every stack policy
    (most of what remains of a review's time, issue 34); they too are made once per
    deserialized dict this memo holds. Policies only read them (the one remediation, the tags',
    copies the properties into a new dict), as the comparison test holds.
    """

    def __init__(self) -> None:
        self.converted: dict[bytes, dict[str, Any]] = {}
        # Deserialized results by the id of a converted dict this memo holds (so ids stay unique).
        self.deserialized: dict[int, dict[str, Any]] = {}
        # Their unknown-checking proxies, by the id of the deserialized dict.
        self.proxies: dict[int, Any] = {}
        self.held: set[int] = set()

    def __getattr__(self, name: str) -> Any:
        return getattr(json_format, name)

    def MessageToDict(self, message: Any, **options: Any) -> Any:
        if options or not isinstance(message, struct_pb2.Struct):
            return json_format.MessageToDict(message, **options)
        key = message.SerializeToString(deterministic=True)
        found = self.converted.get(key)
        if found is None:
            if len(self.converted) >= _ANALYZED_LIMIT:
                self.converted.clear()
                self.deserialized.clear()
                self.proxies.clear()
                self.held.clear()
            found = self.converted[key] = json_format.MessageToDict(message)
            deserialized = self.deserialized[id(found)] = _deserialize_properties(found)
            self.held.add(id(deserialized))
        return found

    def unknown_checking_proxy(self, props: dict[str, Any]) -> Any:
        """Of a dict this memo deserialized: its proxy, made once; else as pulumi-policy."""
        if id(props) not in self.held:
            return _unknown_checking_proxy(props)
        found = self.proxies.get(id(props))
        if found is None:
            found = self.proxies[id(props)] = _unknown_checking_proxy(props)
        return found

    def deserialize_properties(self, props: dict[str, Any], proxy_secrets: bool = False) -> dict[str, Any]:
        """Of a dict this memo converted: its deserialized form, made once; else as pulumi-policy."""
        found = None if proxy_secrets else self.deserialized.get(id(props))
        return found if found is not None else _deserialize_properties(props, proxy_secrets)


_STRUCTS = _MemoizedStructs()
# Off only to prove the memo and the shared stack resources change nothing (tests/test_policies.py).
MEMOIZE_STRUCTS = True


class _Analyzer(_PolicyAnalyzerServicer):
    """pulumi-policy's analyzer, with `AnalyzeStack` building the stack's resources once.

    pulumi-policy 1.21.0 (`pulumi_policy/policy.py`, `AnalyzeStack`) rebuilds every resource
    (options, provider, parent and dependency links) for each stack policy in turn: 19 policies
    over prod's thousand resources, most of a review's time once the Structs are memoized. The
    list it builds depends only on the request, so this builds it once, then runs each policy
    exactly as upstream does (enforcement level, configuration, stack tags, the "can't run during
    preview" advisory, not-applicable). Policies only read what they are given; a test compares
    the verdicts with upstream's method.
    """

    def AnalyzeStack(self, request, _context):
        if not MEMOIZE_STRUCTS:
            return super().AnalyzeStack(request, _context)
        self._configure_runtime_settings()
        response = analyzer_pb2.AnalyzeResponse()
        policies = [
            (policy, level)
            for policy in self._PolicyAnalyzerServicer__policies
            if isinstance(policy, StackValidationPolicy)
            and (level := self._get_enforcement_level(policy)) != EnforcementLevel.DISABLED
        ]
        if not policies:
            return response
        resources = self._stack_resources(request)
        pack_name = self._PolicyAnalyzerServicer__policy_pack_name
        pack_version = self._PolicyAnalyzerServicer__policy_pack_version
        stack_tags = self._PolicyAnalyzerServicer__stack_tags
        for policy, level in policies:
            # Stack policies cannot be remediated, so upstream treats the level as mandatory.
            level = EnforcementLevel.MANDATORY if level == EnforcementLevel.REMEDIATE else level
            report = self._create_report_violation(response, policy.name, policy.description, level, policy.severity)
            args = StackValidationArgs(resources, self._get_policy_config(policy.name), stack_tags)
            try:
                result = policy.validate(args, report)
                if inspect.isawaitable(result):
                    loop = asyncio.new_event_loop()
                    loop.run_until_complete(asyncio.Task(result, loop=loop))
                    loop.close()
            except UnknownValueError as error:
                response.diagnostics.append(
                    analyzer_pb2.AnalyzeDiagnostic(
                        policyName=policy.name,
                        policyPackName=pack_name,
                        policyPackVersion=pack_version,
                        message=(
                            f"can't run policy '{policy.name}' from policy pack "
                            f"'{pack_name}@v{pack_version}' during preview: {error.message}"
                        ),
                        urn="",
                        description=policy.description,
                        enforcementLevel=self._map_enforcement_level(EnforcementLevel.ADVISORY),
                    )
                )
            except _NotApplicableError as error:
                response.not_applicable.append(
                    analyzer_pb2.PolicyNotApplicable(policy_name=policy.name, reason=error.reason or "")
                )
        return response

    def _stack_resources(self, request) -> list[PolicyResource]:
        """The resources upstream's loop builds for each stack policy, with their links."""
        by_urn: dict[str, PolicyResource] = {}
        linked = []
        for r in request.resources:
            props = unknown_checking_proxy_of(r.properties)
            opts = self._get_resource_options(r)
            provider = self._get_provider_resource(r)
            resource = PolicyResource(r.type, props, r.urn, r.name, opts, provider, None, [], {})
            by_urn[resource.urn] = resource
            linked.append((resource, r))
        for resource, r in linked:
            if r.parent in by_urn:
                resource.parent = by_urn[r.parent]
            resource.dependencies.extend(by_urn[d] for d in r.dependencies if d in by_urn)
            for key, deps in r.propertyDependencies.items():
                resource.property_dependencies[key] = [by_urn[d] for d in deps.urns if d in by_urn]
        return [resource for resource, _ in linked]


def unknown_checking_proxy_of(properties: struct_pb2.Struct) -> Any:
    """A Struct's properties as a stack policy sees them (upstream's conversion, memoized)."""
    deserialized = _STRUCTS.deserialize_properties(_STRUCTS.MessageToDict(properties))
    return _STRUCTS.unknown_checking_proxy(deserialized)


@contextlib.contextmanager
def _memoized_structs() -> Iterator[None]:
    if not MEMOIZE_STRUCTS:
        yield
        return
    pulumi_policy_module.json_format = _STRUCTS
    pulumi_policy_module.deserialize_properties = _STRUCTS.deserialize_properties
    pulumi_policy_module.unknown_checking_proxy = _STRUCTS.unknown_checking_proxy
    try:
        yield
    finally:
        pulumi_policy_module.json_format = json_format
        pulumi_policy_module.deserialize_properties = _deserialize_properties
        pulumi_policy_module.unknown_checking_proxy = _unknown_checking_proxy


def review_plan(
    plan: Plan,
    environment: str,
    *,
    configs: list[PackConfig] | None = None,
    today: datetime.date | None = None,
    project: str = "platform",
) -> Review:
    """Evaluate every pack of `project` against `plan` with `environment`'s enforcement files."""
    started = time.perf_counter()
    packs = load_packs(project=project)
    configs = configs if configs is not None else [load_pack_config(pack, environment) for pack in packs]
    review = Review(plan.stack, environment, configs, today=today or datetime.date.today())
    resources = _analyzed(plan)
    for config in configs:
        pack = config.pack
        analyzer = _Analyzer(pack.name, pack.version, list(pack.policies), EnforcementLevel.MANDATORY)
        configure = config.request()
        analyzer.Configure(configure, None)
        analyzer.ConfigureStack(
            analyzer_pb2.AnalyzerStackConfigureRequest(stack=plan.stack, project=plan.project, dry_run=plan.preview),
            None,
        )
        remediates = EnforcementLevel.REMEDIATE in config.levels.values()
        config_key = configure.SerializeToString(deterministic=True)
        stack_resources = []
        for resource in resources:
            provider, options = _provider(plan, resource), _options(resource)
            request = analyzer_pb2.AnalyzeRequest(
                type=resource.type,
                properties=resource.raw_inputs,
                urn=resource.urn,
                name=resource.name,
                options=options,
                provider=provider,
            )
            if remediates:
                # As the CLI does: remediations rewrite the inputs before they are analyzed.
                for remediation in analyzer.Remediate(request, None).remediations:
                    if remediation.properties.fields:
                        request.properties.CopyFrom(remediation.properties)
                        review.remediations.append(
                            Remediation(pack.name, remediation.policyName, resource.urn, resource.name)
                        )
            with _memoized_structs():
                review.violations += _analyze(analyzer, request, pack, config_key, plan, resource.urn)
            stack_resources.append(
                analyzer_pb2.AnalyzerResource(
                    type=resource.type,
                    properties=request.properties,
                    urn=resource.urn,
                    name=resource.name,
                    options=options,
                    provider=provider,
                    parent=resource.parent or "",
                    dependencies=list(resource.dependencies),
                    propertyDependencies={
                        key: analyzer_pb2.AnalyzerPropertyDependencies(urns=list(urns))
                        for key, urns in resource.property_dependencies.items()
                    },
                )
            )
        with _memoized_structs():
            response = analyzer.AnalyzeStack(analyzer_pb2.AnalyzeStackRequest(resources=stack_resources), None)
        review.violations += _diagnostics(response, pack, plan)
    review.seconds = time.perf_counter() - started
    return review


# The delivery project's enforcement: policies/<pack>/config/delivery.json of its packs.
DELIVERY_ENFORCEMENT = "delivery"


def review_delivery(plan: Plan, *, today: datetime.date | None = None) -> Review:
    """The packs of the delivery project (PROJECTS includes "delivery") on a delivery stack's plan."""
    return review_plan(plan, DELIVERY_ENFORCEMENT, today=today, project="delivery")
