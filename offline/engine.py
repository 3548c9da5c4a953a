"""The offline preview engine: run the real Pulumi program in-process under mocks.

One implementation serves `make preview`, the tests and CI. A run:
1. reads the stack file as the CLI would (`secure:` values become placeholders),
2. resets the Pulumi runtime (fresh event loop, fresh root stack, the program's Pulumi-facing
   modules dropped from `sys.modules`), so one process can preview several stacks,
3. runs `__main__.py` with `runpy` inside `run_pulumi_func`, in preview mode,
4. records every RegisterResource request: type, name, parent, inputs with their wire
   names, dependencies and options (protect, ignoreChanges, ...), and the stack outputs.

Later stages (policy evaluation, reports) consume the returned `Plan`.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import runpy
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pulumi
import pulumi.resource as pulumi_resource
import pulumi.runtime.resource as pulumi_runtime_resource
from google.protobuf import json_format
from pulumi.runtime import mocks as pulumi_mocks
from pulumi.runtime import rpc, settings
from pulumi.runtime.proto import resource_pb2, source_pb2
from pulumi.runtime.stack import run_pulumi_func
from pulumi.runtime.sync_await import _sync_await

from offline.mocks import OfflineMocks
from planning.layers import UNIT_SEPARATOR
from validation.stackfile import StackConfig, project_name, read_stack_config, stack_file

PROJECT_ROOT = Path(__file__).resolve().parent.parent
_SECRET_SIG = rpc._special_sig_key
_SECRET_VALUE = rpc._special_secret_sig


class _Unknown:
    """A value Pulumi does not know during preview (it is computed by the cloud)."""

    def __repr__(self) -> str:
        return "<unknown>"


UNKNOWN = _Unknown()


@dataclass(frozen=True)
class ResourceOptions:
    protect: bool
    ignore_changes: tuple[str, ...]
    replace_on_changes: tuple[str, ...]
    retain_on_delete: bool
    delete_before_replace: bool
    additional_secret_outputs: tuple[str, ...]


@dataclass(frozen=True)
class CapturedResource:
    urn: str
    type: str
    name: str
    parent: str | None
    custom: bool
    # The provider reference ("<provider urn>::<id>"), set when a resource names one explicitly.
    provider: str
    inputs: dict[str, Any]
    dependencies: tuple[str, ...]
    property_dependencies: dict[str, tuple[str, ...]]
    options: ResourceOptions
    # Alias specs as the engine receives them (type tokens of earlier API versions, ...).
    aliases: tuple[str, ...]
    # The request's raw input Struct (wire names, secrets and unknowns as the engine sees
    # them), for consumers such as the policy analyzer.
    raw_inputs: Any = field(repr=False, compare=False)

    @property
    def is_component(self) -> bool:
        return not self.custom


@dataclass(frozen=True)
class CapturedCall:
    """An invoke (`token`, its arguments) or a read of an existing resource (`Resource.get`:
    `token` is the resource type, `resource_id` what it reads); both need permissions too."""

    token: str
    args: dict[str, Any]
    provider: str
    parent: str | None = None
    resource_id: str | None = None

    @property
    def is_read(self) -> bool:
        return self.resource_id is not None


@dataclass
class Plan:
    stack: str
    project: str
    preview: bool
    resources: list[CapturedResource] = field(default_factory=list)
    # Invokes and reads of existing resources, in the order the program made them.
    calls: list[CapturedCall] = field(default_factory=list)
    outputs: dict[str, Any] = field(default_factory=dict)
    # Top-level outputs exported as secrets (a unit's kubeconfig).
    secret_outputs: list[str] = field(default_factory=list)
    error: str | None = None
    # Info and warning messages the program logged (`pulumi.log`), as the CLI shows them.
    diagnostics: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        return self.error is None

    def of_type(self, token: str) -> list[CapturedResource]:
        return [r for r in self.resources if r.type == token]

    def one(self, token: str, name: str | None = None) -> CapturedResource:
        matches = [r for r in self.of_type(token) if name is None or r.name == name]
        if len(matches) != 1:
            raise LookupError(f"expected one {token} named {name!r}, found {[r.name for r in matches]}")
        return matches[0]

    def by_urn(self, urn: str) -> CapturedResource:
        for resource in self.resources:
            if resource.urn == urn:
                return resource
        raise LookupError(urn)

    def children_of(self, urn: str) -> list[CapturedResource]:
        return [r for r in self.resources if r.parent == urn]

    def counts_by_type(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for resource in self.resources:
            counts[resource.type] = counts.get(resource.type, 0) + 1
        return dict(sorted(counts.items()))

    def to_json(self) -> dict[str, Any]:
        return {
            "stack": self.stack,
            "project": self.project,
            "preview": self.preview,
            "error": self.error,
            "counts": self.counts_by_type(),
            "resources": [
                {
                    "urn": r.urn,
                    "type": r.type,
                    "name": r.name,
                    "parent": r.parent,
                    "custom": r.custom,
                    "provider": r.provider,
                    "inputs": _jsonable(r.inputs),
                    "dependencies": list(r.dependencies),
                    "propertyDependencies": {k: list(v) for k, v in r.property_dependencies.items()},
                    "options": {
                        "protect": r.options.protect,
                        "ignoreChanges": list(r.options.ignore_changes),
                        "replaceOnChanges": list(r.options.replace_on_changes),
                        "retainOnDelete": r.options.retain_on_delete,
                        "deleteBeforeReplace": r.options.delete_before_replace,
                        "additionalSecretOutputs": list(r.options.additional_secret_outputs),
                    },
                }
                for r in self.resources
            ],
            "outputs": _jsonable(self.outputs),
        }


def _jsonable(value: Any) -> Any:
    if value is UNKNOWN:
        return "[unknown]"
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_jsonable(v) for v in value]
    return value


def plain_value(value: Any) -> Any:
    """Wire value -> Python: secrets unwrapped, unknowns as UNKNOWN, whole floats as ints."""
    if isinstance(value, dict):
        if value.get(_SECRET_SIG) == _SECRET_VALUE:
            return plain_value(value.get("value"))
        return {k: plain_value(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain_value(v) for v in value]
    if value == rpc.UNKNOWN:
        return UNKNOWN
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _urn_name(urn: str) -> str:
    return urn.rsplit("::", 1)[-1]


class CapturingMonitor(pulumi_mocks.MockMonitor):
    """The mock monitor, plus a record of each registration's full request."""

    def __init__(self, mocks: pulumi_mocks.Mocks):
        super().__init__(mocks)
        self.captured: list[CapturedResource] = []
        self.calls: list[CapturedCall] = []
        self._urns: set[str] = set()
        self.stack_outputs: dict[str, Any] = {}
        self.secret_outputs: list[str] = []
        self.stack_urn: str | None = None
        self._thread_loops: list[asyncio.AbstractEventLoop] = []
        self._thread_loops_lock = threading.Lock()

    def _ensure_thread_loop(self) -> None:
        """The SDK's mock monitor makes an event loop in each executor thread it is called on
        (`pulumi/runtime/sync_await.py`, `_ensure_event_loop`) and never closes it: made here
        instead, so the run closes them (`close_thread_loops`), not the collector at some later
        time (an unclosed loop's finalizer fails when its socket was finalized first)."""
        try:
            asyncio.get_event_loop_policy().get_event_loop()
        except RuntimeError:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            with self._thread_loops_lock:
                self._thread_loops.append(loop)

    def close_thread_loops(self) -> None:
        with self._thread_loops_lock:
            loops, self._thread_loops = self._thread_loops, []
        for loop in loops:
            loop.close()

    def RegisterResource(self, request):
        self._ensure_thread_loop()
        response = super().RegisterResource(request)
        if request.type == "pulumi:pulumi:Stack":
            self.stack_urn = response.urn
            return response
        if response.urn in self._urns:
            # The Pulumi engine refuses a second resource of one URN; so does the preview.
            raise ValueError(f"Duplicate resource URN '{response.urn}'; try giving it a unique name")
        self._urns.add(response.urn)
        self.captured.append(
            CapturedResource(
                urn=response.urn,
                type=request.type,
                name=request.name,
                parent=request.parent or None,
                custom=request.custom,
                provider=request.provider,
                inputs=plain_value(json_format.MessageToDict(request.object)),
                dependencies=tuple(request.dependencies),
                property_dependencies={name: tuple(deps.urns) for name, deps in request.propertyDependencies.items()},
                options=ResourceOptions(
                    protect=request.protect,
                    ignore_changes=tuple(request.ignoreChanges),
                    replace_on_changes=tuple(request.replaceOnChanges),
                    retain_on_delete=request.retainOnDelete,
                    delete_before_replace=request.deleteBeforeReplace,
                    additional_secret_outputs=tuple(request.additionalSecretOutputs),
                ),
                aliases=tuple(sorted(json_format.MessageToJson(a, sort_keys=True) for a in request.aliases)),
                raw_inputs=request.object,
            )
        )
        return response

    def Invoke(self, request):
        self._ensure_thread_loop()
        args = plain_value(json_format.MessageToDict(request.args))
        self.calls.append(CapturedCall(token=request.tok, args=args, provider=request.provider))
        return super().Invoke(request)

    def ReadResource(self, request):
        self._ensure_thread_loop()
        self.calls.append(
            CapturedCall(
                token=request.type,
                args=plain_value(json_format.MessageToDict(request.properties)),
                provider=request.provider,
                parent=request.parent or None,
                resource_id=request.id,
            )
        )
        return super().ReadResource(request)

    def RegisterResourceOutputs(self, request):
        if request.urn == self.stack_urn:
            outputs = json_format.MessageToDict(request.outputs)
            self.secret_outputs = sorted(
                name
                for name, value in outputs.items()
                if isinstance(value, dict) and value.get(_SECRET_SIG) == _SECRET_VALUE
            )
            self.stack_outputs = plain_value(outputs)
        return super().RegisterResourceOutputs(request)


class _ErrorLog(logging.Handler):
    """Collects errors the Pulumi runtime logs instead of raising (e.g. in `apply`), and the
    program's own info and warning diagnostics (`pulumi.log`), which the CLI prints too."""

    def __init__(self) -> None:
        super().__init__(level=logging.INFO)
        self.messages: list[str] = []
        self.diagnostics: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.levelno >= logging.ERROR:
            self.messages.append(record.getMessage())
        else:
            self.diagnostics.append(f"{record.levelname.lower()}: {record.getMessage()}")


# Folders of the project never unloaded between runs: tooling, and the program's layers below
# the components, which hold no state between runs (plain functions and data; `validation`
# reads the Pulumi config only when called) and take most of the re-import time.
# `__main__.py` and `components/` load afresh each run; tests/test_engine.py previews every
# stack twice in one process and compares.
_TOOLING = ("offline", "tests", "scripts", "policies", "facts", "stackconfig", "planning", "validation")


def _program_modules(project_dir: Path) -> Iterator[str]:
    """Modules the program imported from its own folder (not the venv, not tooling)."""
    root = os.path.realpath(project_dir) + os.sep
    tooling = tuple(root + folder + os.sep for folder in _TOOLING)
    environments = tuple(os.path.realpath(p) + os.sep for p in {sys.prefix, sys.base_prefix})
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None)
        if path and path.startswith(root) and not path.startswith(tooling) and not path.startswith(environments):
            yield name


@contextlib.contextmanager
def _skip_unused_alias_urns(monitor: pulumi_mocks.MockMonitor) -> Iterator[None]:
    """Skip work whose result nobody reads, when the monitor takes alias specs.

    `Resource.__init__` turns every alias into a URN Output (azure-native declares one per
    API version: 113 on ManagedCluster), but those URNs are only read when the monitor
    lacks alias-spec support; the real engine and the mock monitor both have it, and send
    the specs instead. This is ~80% of a preview's time. And every registration walks the
    Python stack for its source position (`traceback.extract_stack`, which reads each frame's
    source line: about a tenth of a preview), which a real engine shows in diagnostics and
    nothing offline reads: the captured requests keep no source position. The captured plans
    are the same either way (tests/test_engine.py compares them); pinned SDK internals.
    """
    features = monitor.GetDeploymentInfo(None).supportedFeatures
    if resource_pb2.RESOURCE_MONITOR_FEATURE_ALIAS_SPECS not in features:
        yield
        return
    original = pulumi_resource.collapse_alias_to_urn
    original_trace = pulumi_runtime_resource._get_stack_trace
    pulumi_resource.collapse_alias_to_urn = lambda alias, *_args, **_kwargs: alias
    pulumi_runtime_resource._get_stack_trace = source_pb2.StackTrace
    try:
        yield
    finally:
        pulumi_resource.collapse_alias_to_urn = original
        pulumi_runtime_resource._get_stack_trace = original_trace


# Collect young objects every 10,000 allocations instead of 700 while a program runs; off only
# to prove it changes nothing (tests/test_engine.py).
GC_THRESHOLD = (10_000, 10, 10)
COLLECT_LESS = True


@contextlib.contextmanager
def _collecting_less() -> Iterator[None]:
    """Run a program with the collector scanning less, then as before.

    A preview allocates millions of short-lived objects (Outputs, tasks, protobuf messages)
    beside the SDK's modules (pulumi-azure-native alone is over a million objects), and
    CPython's default thresholds (700, 10, 10) re-scan those modules in every full collection:
    about half of prod's preview (3.3 s -> 1.7 s, issue 34, docs/performance.md). Freezing what
    exists before the run keeps the modules out of the scans; the higher young-generation
    threshold makes fewer collections. Nothing is left uncollected: the run's cycles are
    collected by the collections that still happen, and afterwards the thresholds are restored
    and the frozen objects return to the oldest generation. Only the harness changes: the
    program, the mocks and what is captured do not (the alias shortcut's test previews prod with
    neither and compares).
    """
    if not COLLECT_LESS:
        yield
        return
    previous = gc.get_threshold()
    gc.freeze()
    gc.set_threshold(*GC_THRESHOLD)
    try:
        yield
    finally:
        gc.set_threshold(*previous)
        gc.unfreeze()


def _run_main(program: str) -> None:
    runpy.run_path(program, run_name="__main__")
    # set_mocks finished the root stack before the program ran; register its exports now,
    # as the CLI does after the program returns (pinned SDK internals, covered by tests).
    root: Any = settings.get_root_resource()
    root._outputs_registered = False
    root._finish()


def _drain(loop: asyncio.AbstractEventLoop) -> None:
    """Cancel what a failed run left pending, so closing the loop prints nothing."""
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    for task in pending:
        task.cancel()
    if pending:
        loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
    # Wait for the executor threads still calling the monitor (a failed run leaves some), so none
    # outlives its run: one finishing later would write into the next run's settings, and its
    # thread's event loop (close_thread_loops) would be closed under it.
    loop.run_until_complete(loop.shutdown_default_executor())
    # Failed futures nobody awaited would be reported when collected; mark them retrieved.
    loop.set_exception_handler(lambda _loop, _context: None)


def _describe(error: BaseException) -> str:
    if isinstance(error, pulumi.RunError):
        return str(error)
    return f"{type(error).__name__}: {error}"


def run_program(
    stack_config: StackConfig,
    project_dir: Path = PROJECT_ROOT,
    *,
    preview: bool = True,
    fast_aliases: bool = True,
    cloud: str | None = None,
    stack_outputs: Mapping[str, dict[str, Any]] | None = None,
    stack_secrets: Mapping[str, Sequence[str]] | None = None,
) -> Plan:
    """Run the program once under mocks and return what it registered (`cloud`: see OfflineMocks;
    `stack_outputs`: the outputs of the stacks it references, by stack name, and `stack_secrets`
    the names of those that are secret)."""
    started = time.perf_counter()
    plan = Plan(stack=stack_config.stack, project=stack_config.project, preview=preview)
    monitor = CapturingMonitor(OfflineMocks(cloud, stack_outputs, stack_secrets))
    errors = _ErrorLog()
    logger = logging.getLogger(f"offline.{stack_config.stack}")
    logger.propagate = False
    logger.setLevel(logging.INFO)
    logger.addHandler(errors)

    for module in list(_program_modules(project_dir)):
        del sys.modules[module]
    previous_loop = None
    with contextlib.suppress(RuntimeError):  # no loop yet in this thread
        previous_loop = asyncio.get_event_loop_policy().get_event_loop()
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    previous_cwd = os.getcwd()
    added_path = str(project_dir) not in sys.path
    if added_path:
        sys.path.insert(0, str(project_dir))
    os.chdir(project_dir)
    with _collecting_less():
        try:
            settings.reset_options(
                project=stack_config.project, stack=stack_config.stack, preview=preview, root_directory=str(project_dir)
            )
            pulumi.runtime.set_all_config(dict(stack_config.values), list(stack_config.secret_keys))
            pulumi.runtime.set_mocks(
                monitor.mocks,
                project=stack_config.project,
                stack=stack_config.stack,
                preview=preview,
                logger=logger,
                monitor=monitor,
            )
            program = str(project_dir / "__main__.py")
            shortcut = _skip_unused_alias_urns(monitor) if fast_aliases else contextlib.nullcontext()
            with shortcut:
                _sync_await(run_pulumi_func(lambda: _run_main(program)))
        except BaseException as error:
            if isinstance(error, (KeyboardInterrupt, SystemExit)):
                raise
            plan.error = _describe(error)
        finally:
            os.chdir(previous_cwd)
            if added_path:
                sys.path.remove(str(project_dir))
            _drain(loop)
            loop.close()
            monitor.close_thread_loops()
            asyncio.set_event_loop(previous_loop)
            logger.removeHandler(errors)
            settings.reset_options()
            pulumi.runtime.set_all_config({}, [])
    if plan.error is None and errors.messages:
        plan.error = "\n".join(errors.messages)
    plan.resources = monitor.captured
    plan.calls = monitor.calls
    plan.outputs = monitor.stack_outputs
    plan.secret_outputs = monitor.secret_outputs
    plan.diagnostics = errors.diagnostics
    plan.seconds = time.perf_counter() - started
    return plan


def unit_stack_config(project_dir: Path, stack: str) -> StackConfig:
    """A stack's own config, as the CLI would pass it: a unit stack's file (`Pulumi.prod.data.yaml`,
    which holds its secrets provider) may not exist yet, and then it has no config."""
    if UNIT_SEPARATOR in stack and not stack_file(project_dir, stack).exists():
        return StackConfig(project_name(project_dir), stack, {}, [])
    return read_stack_config(project_dir, stack)


def preview_stack(
    stack: str,
    project_dir: Path = PROJECT_ROOT,
    *,
    preview: bool = True,
    fast_aliases: bool = True,
    cloud: str | None = None,
    stack_outputs: Mapping[str, dict[str, Any]] | None = None,
    stack_secrets: Mapping[str, Sequence[str]] | None = None,
) -> Plan:
    """Preview a stack from its stack file, e.g. `preview_stack("prod.foundation")`."""
    return run_program(
        unit_stack_config(project_dir, stack),
        project_dir,
        preview=preview,
        fast_aliases=fast_aliases,
        cloud=cloud,
        stack_outputs=stack_outputs,
        stack_secrets=stack_secrets,
    )
