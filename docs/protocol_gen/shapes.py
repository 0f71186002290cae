"""The one walk over the wire contracts that every protocol output is rendered from.

:func:`walk` takes the generator's tables (each method with its params and result model, the
extra types) and returns a :class:`Protocol`: the method constants of
:mod:`relavium_lsp.server.methods`, the event payloads, every model reachable from them with
its wire fields as :data:`TypeExpr` trees, the named closed sets and unions of the contracts
(module-level ``X = Literal[...]`` and ``X = A | B`` aliases, found by looking) and who writes
each model's JSON. The renderers only format a :class:`Protocol`; none reads an annotation.
"""

from __future__ import annotations

import importlib
import pkgutil
import types
import typing
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any, Literal

from pydantic import BaseModel
from pydantic.fields import FieldInfo

import relavium_lsp.contracts
from relavium_lsp import __version__, errors
from relavium_lsp.contracts import events
from relavium_lsp.contracts.base import WireModel
from relavium_lsp.contracts.versions import PROTOCOL_VERSION
from relavium_lsp.server import methods

Direction = Literal["client → server", "server → client"]
# Who writes a shape's JSON. The server dumps with ``exclude_none``: nulls are omitted and
# defaulted fields are always present. A client may leave out any field the server defaults.
Writer = Literal["server", "client"]
# (method, direction, kind, params, result); None result = no result (a notification), a
# string result = prose for the reference (no model).
Request = tuple[str, Direction, str, type[BaseModel], type[BaseModel] | str | None]


@dataclass(frozen=True)
class Scalar:
    """A JSON scalar: ``string``, ``integer``, ``number``, ``boolean`` or ``any``."""

    name: str


@dataclass(frozen=True)
class Choice:
    """A closed set of values (a ``Literal``); ``alias`` names it when the contracts do."""

    values: tuple[Any, ...]
    alias: str | None = None


@dataclass(frozen=True)
class ModelRef:
    """A JSON object described by a pydantic model."""

    model: type[BaseModel]


@dataclass(frozen=True)
class ArrayOf:
    """A JSON array (``item`` None: of anything)."""

    item: TypeExpr | None


@dataclass(frozen=True)
class MapOf:
    """A JSON object with string keys (``value`` None: of anything)."""

    value: TypeExpr | None


@dataclass(frozen=True)
class OneOf:
    """A union; ``nullable`` when ``None`` is one of its members (not listed in ``members``)."""

    members: tuple[TypeExpr, ...]
    nullable: bool
    alias: str | None = None


TypeExpr = Scalar | Choice | ModelRef | ArrayOf | MapOf | OneOf


@dataclass(frozen=True)
class FieldShape:
    """One field of a model as it appears on the wire."""

    name: str
    wire_name: str
    type: TypeExpr
    required: bool  # pydantic must be given it
    default: Any  # the declared default; a default_factory's value, as the wire carries it
    carries: TypeExpr | None = None  # the real shape of a loosely declared field

    @property
    def nullable(self) -> bool:
        """Whether the field may be null (so the server omits it)."""
        return isinstance(self.type, OneOf) and self.type.nullable

    @property
    def tag(self) -> Any:
        """The value of a discriminator field (a one-value ``Literal`` defaulting to it)."""
        if isinstance(self.type, Choice) and self.type.values == (self.default,):
            return self.default
        return None

    def present_in(self, writers: Iterable[Writer]) -> bool:
        """Whether typed clients may rely on the field being present in a shape's JSON.

        A tag always is. JSON the server writes has every field that is not null; a shape
        only clients write may leave out whatever the server defaults.
        """
        if self.tag is not None:
            return True
        if "server" in writers:
            return not self.nullable
        return self.required


@dataclass(frozen=True)
class ModelShape:
    """A pydantic model as the wire sees it."""

    model: type[BaseModel]
    name: str
    doc: str  # the first line of its docstring
    fields: tuple[FieldShape, ...]

    @property
    def tag(self) -> Any:
        """The value of its ``type`` discriminator, if it has one."""
        for shape in self.fields:
            if shape.wire_name == "type" and shape.tag is not None:
                return shape.tag
        return None


@dataclass(frozen=True)
class MethodRow:
    """One row of the generator's method table."""

    method: str
    direction: Direction
    kind: str
    params: type[BaseModel]
    result: type[BaseModel] | str | None


@dataclass(frozen=True)
class MethodConstant:
    """A constant of :mod:`relavium_lsp.server.methods`, with how the method travels."""

    constant: str
    method: str
    direction: Direction
    kind: str


@dataclass(frozen=True)
class Protocol:
    """Everything the outputs are rendered from."""

    rows: tuple[MethodRow, ...]
    constants: tuple[MethodConstant, ...]
    event_method: str  # the notification that carries events
    events: tuple[ModelShape, ...]  # the payloads, in the union's order
    event_union: str  # the name of the payload union
    envelope: ModelShape  # the stamped event, whose wire form spreads the payload
    reserved_event_types: tuple[str, ...]
    error_codes: tuple[str, ...]
    extra_types: tuple[type[BaseModel], ...]
    models: dict[type[BaseModel], ModelShape]  # every model reached, in the order first met
    writers: dict[type[BaseModel], set[Writer]]
    named: dict[str, Choice | OneOf]  # every named type reached, in the order first met
    package_version: str  # relavium_lsp.__version__: what serverInfo.version says
    protocol_version: int  # contracts.versions.PROTOCOL_VERSION

    @property
    def stamp(self) -> tuple[FieldShape, ...]:
        """The envelope's own fields: what the event bus adds to every payload."""
        return tuple(f for f in self.envelope.fields if not _is_payload(f, self.event_union))


def _is_payload(shape: FieldShape, event_union: str) -> bool:
    return isinstance(shape.type, OneOf) and shape.type.alias == event_union


class _Names:
    """The names the contracts give to closed sets and unions, by value."""

    def __init__(self, modules: Iterable[ModuleType]) -> None:
        self._names: dict[Any, set[str]] = {}
        for module in modules:
            for name, value in vars(module).items():
                if name[:1].isupper() and _nameable(value):
                    self._names.setdefault(_unwrap(value), set()).add(name)

    def name_of(self, annotation: Any) -> str | None:
        try:
            names = self._names.get(annotation, set())
        except TypeError:  # an unhashable annotation has no name
            return None
        if len(names) > 1:
            raise ValueError(f"{annotation} is named {sorted(names)}: keep one alias per type")
        return next(iter(names), None)


def _unwrap(annotation: Any) -> Any:
    while typing.get_origin(annotation) is typing.Annotated:
        annotation = typing.get_args(annotation)[0]
    return annotation


def _is_union(annotation: Any) -> bool:
    return typing.get_origin(annotation) in (typing.Union, types.UnionType)


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _nameable(value: Any) -> bool:
    value = _unwrap(value)
    if typing.get_origin(value) is Literal:
        return True
    if not _is_union(value):
        return False
    members = typing.get_args(value)
    return all(_is_model(m) for m in members) or all(
        typing.get_origin(m) is Literal for m in members
    )


def _contract_modules() -> list[ModuleType]:
    package = relavium_lsp.contracts
    names = sorted(info.name for info in pkgutil.iter_modules(package.__path__))
    modules = [importlib.import_module(f"{package.__name__}.{name}") for name in names]
    return [*modules, errors]


_SCALARS: dict[Any, str] = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    Any: "any",
}


class _Walker:
    def __init__(self, names: _Names, carried: Mapping[tuple[type[BaseModel], str], Any]) -> None:
        self._names = names
        self._carried = carried
        self._shapes: dict[type[BaseModel], ModelShape] = {}
        self.models: dict[type[BaseModel], ModelShape] = {}  # reached, in the order first met
        self.writers: dict[type[BaseModel], set[Writer]] = {}
        self.named: dict[str, Choice | OneOf] = {}

    def type_expr(self, annotation: Any) -> TypeExpr:
        annotation = _unwrap(annotation)
        origin = typing.get_origin(annotation)
        arguments = typing.get_args(annotation)
        if _is_union(annotation):
            core = tuple(a for a in arguments if a is not type(None))
            alias = self._names.name_of(typing.Union[core]) if len(core) > 1 else None  # noqa: UP007
            members = tuple(self.type_expr(a) for a in core)
            return OneOf(members, nullable=len(core) < len(arguments), alias=alias)
        if origin is Literal:
            return Choice(arguments, alias=self._names.name_of(annotation))
        if origin in (list, tuple, Sequence):
            return ArrayOf(self.type_expr(arguments[0]) if arguments else None)
        if origin is dict:
            return MapOf(self.type_expr(arguments[1]) if len(arguments) == 2 else None)
        if _is_model(annotation):
            return ModelRef(annotation)
        return Scalar(_SCALARS.get(annotation, getattr(annotation, "__name__", str(annotation))))

    def shape(self, model: type[BaseModel]) -> ModelShape:
        if model not in self._shapes:
            fields = []
            for name, info in model.model_fields.items():
                carried = self._carried.get((model, name))
                fields.append(
                    FieldShape(
                        name=name,
                        wire_name=(info.alias or name) if issubclass(model, WireModel) else name,
                        type=self.type_expr(info.annotation),
                        required=info.is_required(),
                        default=_declared_default(info),
                        carries=None if carried is None else self.type_expr(carried),
                    )
                )
            doc = (model.__doc__ or "").strip().splitlines()[0]
            self._shapes[model] = ModelShape(model, model.__name__, doc, tuple(fields))
        return self._shapes[model]

    def reach(self, expr: TypeExpr, writer: Writer) -> None:
        """Note every model and named type in ``expr`` as written by ``writer``."""
        for node in _nodes(expr):
            if isinstance(node, Choice | OneOf) and node.alias is not None:
                self.named.setdefault(node.alias, node)
            if isinstance(node, ModelRef):
                self.reach_model(node.model, writer)

    def reach_model(self, model: type[BaseModel], writer: Writer) -> None:
        shape = self.shape(model)
        self.models.setdefault(model, shape)
        writers = self.writers.setdefault(model, set())
        if writer in writers:
            return
        writers.add(writer)
        for field_shape in shape.fields:
            self.reach(field_shape.carries or field_shape.type, writer)


def _nodes(expr: TypeExpr | None) -> Iterator[TypeExpr]:
    if expr is None:
        return
    yield expr
    if isinstance(expr, OneOf):
        for member in expr.members:
            yield from _nodes(member)
    elif isinstance(expr, ArrayOf):
        yield from _nodes(expr.item)
    elif isinstance(expr, MapOf):
        yield from _nodes(expr.value)


def _method_constants(rows: Sequence[MethodRow]) -> tuple[MethodConstant, ...]:
    travel = {row.method: (row.direction, row.kind) for row in rows}
    travel[methods.SESSION_EVENT] = ("server → client", "notification")
    constants = []
    for name, value in vars(methods).items():
        if name.isupper() and isinstance(value, str) and value.startswith("relavium/"):
            if value not in travel:
                raise ValueError(f"methods.{name} ({value}) has no row in the generator's table")
            direction, kind = travel[value]
            constants.append(MethodConstant(name, value, direction, kind))
    return tuple(constants)


def walk(
    requests: Sequence[Request],
    extra_types: Sequence[tuple[type[BaseModel], Writer]],
    carried: Mapping[tuple[type[BaseModel], str], Any],
    extra_named: Sequence[Any],
) -> Protocol:
    """Walk the contracts from the method table, the events and the extra types.

    ``extra_types`` are the shapes outside any method's (``initialize``'s), each with the side
    that writes it. ``carried`` maps (model, field) to the annotation of what a loosely
    declared field really carries (typed clients see that; the reference shows the
    declaration). ``extra_named`` lists named types no field refers to that clients still
    need.
    """
    rows = tuple(MethodRow(*request) for request in requests)
    walker = _Walker(_Names(_contract_modules()), carried)
    for row in rows:
        params_writer: Writer = "client" if row.direction == "client → server" else "server"
        result_writer: Writer = "server" if params_writer == "client" else "client"
        walker.reach_model(row.params, params_writer)
        if isinstance(row.result, type):
            walker.reach_model(row.result, result_writer)
    walker.reach_model(events.StampedEvent, "server")
    for model, writer in extra_types:
        walker.reach_model(model, writer)
    for annotation in extra_named:
        walker.reach(walker.type_expr(annotation), "server")
    envelope = walker.shape(events.StampedEvent)
    payload = next(f for f in envelope.fields if f.name == "payload").type
    if not isinstance(payload, OneOf) or payload.alias is None:
        raise ValueError("StampedEvent.payload must be the named union of event payloads")
    return Protocol(
        rows=rows,
        constants=_method_constants(rows),
        event_method=methods.SESSION_EVENT,
        events=tuple(walker.shape(m.model) for m in payload.members if isinstance(m, ModelRef)),
        event_union=payload.alias,
        envelope=envelope,
        reserved_event_types=tuple(events.RESERVED_EVENT_TYPES),
        error_codes=typing.get_args(events.ErrorCode),
        extra_types=tuple(model for model, _ in extra_types),
        package_version=__version__,
        protocol_version=PROTOCOL_VERSION,
        models=walker.models,
        writers=walker.writers,
        named=walker.named,
    )


def _declared_default(info: FieldInfo) -> Any:
    """The default a reader of the wire sees: a factory's product, models as their JSON."""
    if info.default_factory is None:
        return info.default
    value = info.default_factory()  # type: ignore[call-arg]
    return value.model_dump(mode="json", by_alias=True) if isinstance(value, BaseModel) else value
