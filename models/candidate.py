"""One candidate: a model spec resolved once into what a run needs to know about it and to call it.

:func:`resolve_candidate` turns a spec (``openai:gpt-4o``, ``replay:PATH#CANDIDATE``,
``graph:PATH.py:ATTR``, ``local`` ...) into a :class:`Candidate`: the provider is looked up once
(code, entry points, built-ins: :mod:`wildtoolbench.models.registry`) and the candidate then answers every
question a run asks about its model (the name recorded in results, the concurrency it serves, the
configuration check, the ``candidate`` object of records) and makes its model requests
(:meth:`Candidate.respond`, docs/evaluation.md §3 and §7.1). Nothing is built at resolution: the
chat model or graph is made on the first request, once per event loop for a given provider, target
and settings (clients are never shared across loops; the contexts LangGraph Server makes, one per
run, share it), so resolving a spec is cheap and never starts a server or loads a file.

This module imports no LangChain at start-up (docs/cli.md §1); the calling machinery is in
:mod:`wildtoolbench.models.graph_contract`.
"""

from __future__ import annotations

import functools
import json
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from wildtoolbench.models.registry import MODEL_ALIASES, ConfigurationError, Provider, get_provider, split_spec
from wildtoolbench.models.reply import CandidateReply
from wildtoolbench.models.server_policy import server_settings
from wildtoolbench.models.settings import ModelSettings

if TYPE_CHECKING:  # imported by the first request, not at start-up (asyncio too: docs/cli.md §1)
    import asyncio

    from langchain_core.language_models import BaseChatModel

    from wildtoolbench.models.agent_loop import AgentCall
    from wildtoolbench.models.graph_contract import CandidateCall
    from wildtoolbench.models.transport import RetryPolicy

CHAT_MODEL = "chat_model"
"""Kind of a LangChain chat model candidate (called with the session's tools bound)."""
GRAPH = "graph"
"""Kind of a LangGraph graph candidate (called with ``{"messages", "tools"}``, :mod:`wildtoolbench.models.graph_contract`)."""
RUNNABLE = "runnable"
"""Kind of any other LangChain Runnable candidate (called like a graph)."""

MODEL_SETTINGS = ("temperature", "base_url")
"""Settings a provider builds its model with, which a candidate may not use (:attr:`Candidate.unapplied_settings`);
the others (``timeout``, retries, rate limit, step limit) are the harness's and apply to every candidate."""

RAW_CAPTURED_PROVIDERS = ("langchain", "graph")
"""Providers whose chat models do not keep the raw assistant message: it is read from the HTTP response
(:mod:`wildtoolbench.models.raw_capture`, docs/evaluation.md §8.5)."""


@dataclass(frozen=True, eq=False)
class Candidate:
    """A model spec resolved once (:func:`resolve_candidate`): what a run knows about its candidate and how it calls it.

    Attributes:
        spec: the model spec as given (``openai:gpt-4o``, ``local``, ``graph:examples/tool_agent.py:graph``).
        provider: the provider prefix (``openai``; ``local`` for the alias ``local``).
        target: the part of the spec after ``provider:`` (``gpt-4o``, ``PATH#CANDIDATE``).
        model: the provider's name of the model (``gpt-4o``; a replay's candidate; a bare alias itself).
        name: the ``model_name`` written into result records and metrics: the run's explicit
            model name when given, else :attr:`model`.
        max_concurrency: sessions the provider usefully serves at once (for ``local`` and ``gguf:``
            the llama.cpp server's slots, ``WTB_LOCAL_PARALLEL``, default 1), ``None`` when it
            advertises no limit.
        settings: connection and sampling settings the model is built with.
    """

    spec: str
    provider: str
    target: str
    model: str
    name: str
    max_concurrency: int | None
    settings: ModelSettings
    _provider: Provider = field(repr=False)
    _seen: list[Any] = field(default_factory=list, init=False, repr=False, compare=False)

    @functools.cached_property
    def _build_key(self) -> tuple[Any, ...]:
        """What the built model depends on: the provider, the target and every setting."""
        s = self.settings
        extra = json.dumps(s.extra, sort_keys=True, default=repr)
        key = (self._provider, self.target, s.temperature, s.base_url, s.api_key, s.timeout, s.max_retries, extra)
        try:
            hash(key)
        except TypeError:  # a plug-in provider that cannot be hashed: models of this candidate only
            return (self, *key[1:])
        return key

    @functools.cached_property
    def unapplied_settings(self) -> dict[str, str]:
        """The per-model settings (:data:`MODEL_SETTINGS`) this candidate's model is not built with, each with
        the reason (``{"temperature": "the graph brings its own models ..."}``; docs/settings.md §7.8).

        ``wtb eval`` refuses such an option when it is given, and ``run.json`` records only the settings
        that applied. ``{}`` when every setting applies, or when the provider cannot tell (its own check
        names the problem then).
        """
        if self._provider.unapplied_settings is None:
            return {}
        try:
            found = self._provider.unapplied_settings(self.target, self.settings)
        except (ConfigurationError, ValueError, ImportError):
            return {}
        return {name: str(found[name]) for name in MODEL_SETTINGS if name in found}

    @property
    def endpoint(self) -> str:
        """The key its requests share a rate limit under: the base URL, else the spec (``wildtoolbench.models.transport``)."""
        return self.settings.base_url or self.spec

    def check(self) -> None:
        """Check that the candidate can work, without calling the model (run before any session, docs/cli.md §2).

        Raises:
            ConfigurationError: the provider's own check failed (missing file, unknown candidate,
                missing credentials or package...); the message names the spec or its file.
        """
        if self._provider.check is not None:
            self._provider.check(self.target, self.settings)

    def build(self) -> Any:
        """A new chat model, graph or Runnable for this candidate (``provider.create(target, settings)``).

        Raises:
            ConfigurationError, ValueError, FileNotFoundError ...: whatever the provider raises on a
                spec or settings it cannot build.
        """
        return self._provider.create(self.target, self.settings)

    def _call(self) -> CandidateCall | AgentCall:
        """How the candidate is called in the running event loop (built on its first request there)."""
        import asyncio

        try:
            loop: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
        except RuntimeError:  # a synchronous caller
            loop = None
        key = self._build_key
        with _built_lock:
            per_loop = _built_outside_loops if loop is None else _built.setdefault(loop, {})
            call = per_loop.get(key)
        if call is None:
            made = self._made(self._built())  # outside the lock: a provider may take long (a server start)
            with _built_lock:
                call = per_loop.setdefault(key, made)
        if not self._seen:
            self._seen.append(call.runnable)
        return call

    def _built(self) -> Any:
        """:meth:`build` during a run: a failure is an infrastructure error of the request (docs/evaluation.md §6).

        A model that cannot be built (a missing API key, an agent module that fails, a server that cannot
        start) gave no reply to score: the session goes to ``errors.jsonl`` and is run again on resume,
        as a refused connection is (the same fault rule for every provider, docs/guides/faults.md).

        Raises:
            wildtoolbench.models.transport.ModelRequestError: not retried, naming the error.
        """
        from wildtoolbench.models.transport import ModelRequestError, describe_error

        try:
            return self.build()
        except Exception as exc:  # noqa: BLE001 - any failure to build the candidate
            from wildtoolbench.models.redaction import redact_text

            text = describe_error(exc).removeprefix("error: ")
            raise ModelRequestError(
                1, [redact_text(f"the candidate {self.spec} cannot be built: {text}")], False, {}
            ) from exc

    def _made(self, built: Any) -> CandidateCall | AgentCall:
        """The call of what :meth:`build` made: an agent factory's, else :func:`wildtoolbench.models.graph_contract.call_for`'s."""
        from wildtoolbench.models.graph_contract import call_for
        from wildtoolbench.models.providers.graph import AgentFactory

        if isinstance(built, AgentFactory):
            from wildtoolbench.models.agent_loop import AgentCall

            return AgentCall(built, timeout=self.settings.timeout)
        return call_for(
            built,
            timeout=self.settings.timeout if self.provider == "graph" else None,
            capture=self.provider in RAW_CAPTURED_PROVIDERS,
        )

    def runnable(self) -> Any:
        """The chat model, graph or Runnable that answers in the running event loop (built on first use there).

        Raises:
            wildtoolbench.models.transport.ModelRequestError: :meth:`build` failed (an infrastructure error, :meth:`_built`).
        """
        return self._call().runnable

    @property
    def kind(self) -> str:
        """``"chat_model"``, ``"graph"`` or ``"runnable"``: what answers the requests (see :data:`CHAT_MODEL`).

        Known without building for built-in providers; for ``graph:`` specs the graph is loaded; a
        plug-in provider's kind is what it built, ``"chat_model"`` until it built anything.
        """
        return self.describe()["kind"] or CHAT_MODEL

    def describe(self, *, load: bool = False) -> dict[str, Any]:
        """The ``candidate`` object of result records and traces (docs/evaluation.md §5.5).

        Args:
            load: build the candidate in the running event loop first, so that the kind of what a
                plug-in provider returns is known (then the provider's errors propagate).

        Returns:
            ``{"kind": "chat_model" | "graph" | "runnable", "spec", "model"}`` plus, for ``graph:``
            specs, ``"graph": "PATH.py:ATTR"``. ``model`` is :attr:`model` for a chat model, and for a
            graph the ``CANDIDATE_MODEL`` its module declares (``None`` until known). A ``graph:``
            spec whose graph cannot be loaded gives ``kind`` ``None``; without ``load`` nothing raises.
        """
        if load:
            self.runnable()
        try:
            if self.provider == "graph":
                from wildtoolbench.models.providers import graph

                loaded = graph.load(self.target)
                model = loaded.declared_model
                if model is None and loaded.kind == CHAT_MODEL:
                    model = chat_model_name(loaded.runnable)
                return {"kind": loaded.kind, "spec": self.spec, "graph": self.target, "model": model}
            built = next(iter(self._seen), None)
            if built is not None:
                from wildtoolbench.models.providers.graph import kind_of

                kind = kind_of(built)
                if kind != CHAT_MODEL:
                    return {"kind": kind, "spec": self.spec, "model": None}
            return {"kind": CHAT_MODEL, "spec": self.spec, "model": self.model}
        except (ConfigurationError, ValueError, ImportError):
            return {"kind": None, "spec": self.spec, "model": None}

    async def respond(
        self,
        messages: Sequence[Any],
        tools: list[dict[str, Any]],
        *,
        config: Mapping[str, Any] | None = None,
        metadata: Mapping[str, Any] | None = None,
        retry: RetryPolicy | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> CandidateReply:
        """Send one model request: the messages so far and the session's tools (docs/evaluation.md §3, §7.1).

        A chat model gets ``tools`` bound and is called directly when nothing observes the call,
        else through ``ainvoke`` with ``metadata`` and the run name ``candidate``; a graph or Runnable
        runs as a subgraph with ``config`` plus ``metadata`` (:mod:`wildtoolbench.models.graph_contract`). The request
        goes through :func:`wildtoolbench.models.transport.request_with_retries` (transient failures retried, the
        rate limit of :attr:`endpoint`, each try of a chat model bounded by ``retry.deadline``,
        docs/settings.md §7.1; a ``graph:`` candidate's or an agent's whole call is bounded instead by the
        run's ``--timeout`` as a deadline on the graph's run, docs/evaluation.md §8, and its own models keep
        their clients' timeouts); the candidate is built (once per event loop) before it.

        Args:
            messages: LangChain messages of the step.
            tools: the session's tools as OpenAI function schemas; pass the same list object for every
                request of a session (the binding is reused while it comes back).
            config: the calling node's run config (callbacks, tags, checkpoint namespace).
            metadata: run metadata for the model (``wtb_session_id``, ``wtb_request_index`` ...).
            retry: attempts, backoff, rate limit and deadline (default ``RetryPolicy()``).
            where: what the request is for (task, step), copied into errors.

        Inside :func:`wildtoolbench.models.cache.cache_scope` (``wtb eval --cache``) the reply is looked up first under
        :func:`wildtoolbench.models.cache.request_key` (trial index included) and stored after a request (docs/trials.md §8);
        an agent factory's run keeps state across the steps of a task, so its requests are never cached.

        Returns:
            A :class:`CandidateReply` (``cached`` when it came from the cache: no request was made).

        Raises:
            ModelRequestError: the request failed for good.
            CandidateOutputError: a graph candidate's output has no ``AIMessage`` last (``rejected``).
            ModelRequestError too, not retried, when the candidate cannot be built (:meth:`build` raised).
        """
        import dataclasses

        from wildtoolbench.models.cache import TRIAL_KEY, current_cache, current_trial, request_key
        from wildtoolbench.models.graph_contract import ChatModelCall
        from wildtoolbench.models.transport import ModelRequestError, RetryPolicy, request_with_retries

        try:
            call = self._call()
        except ModelRequestError as exc:  # the candidate cannot be built (:meth:`_built`)
            exc.where = dict(where or {})
            raise
        meta = dict(metadata or {})
        cache = current_cache()
        key = None
        if cache is not None and _keeps_no_state(
            call
        ):  # docs/trials.md §8: a reply already paid for is served from the cache
            trial = current_trial() or int(meta.get(TRIAL_KEY) or 1)
            key = request_key(self, messages, tools, meta, trial)
            hit = cache.get(key)
            if hit is not None:
                return hit
        policy = retry or RetryPolicy()
        if not isinstance(call, ChatModelCall) and policy.deadline is not None:
            # a graph's step may make many requests of its own models: the graph's run has its own deadline
            # (RunnableCall / AgentCall), its models keep their clients' timeouts
            policy = dataclasses.replace(policy, deadline=None)
        else:  # the local llama.cpp models declare a least deadline (docs/settings.md §7.1)
            policy = policy.with_deadline_at_least(getattr(call.runnable, "least_deadline", None))
        reply = await request_with_retries(
            lambda: call.send(messages, tools, config, meta),
            policy,
            endpoint=self.endpoint,
            where=where,
        )
        answer = call.read(reply, where)
        if cache is not None and key is not None:
            from wildtoolbench.models.providers.replay import REQUEST_INDEX_KEY, SESSION_KEY

            about = {"spec": self.spec, "session": meta.get(SESSION_KEY), "request_index": meta.get(REQUEST_INDEX_KEY)}
            try:
                cache.put(key, answer, trial=trial, about=about)
            except OSError:  # a full or read-only cache never changes a result: the reply is only not kept
                cache.note_write_error()
        return answer


def _keeps_no_state(call: Any) -> bool:
    """Whether a reply of ``call`` may be served from the cache: every call but an agent factory's (its run
    lives across the steps of a task, docs/trials.md §8)."""
    from wildtoolbench.models.agent_loop import AgentCall

    return not isinstance(call, AgentCall)


# The built candidates of each event loop by what they depend on (Candidate._build_key): contexts with the
# same spec and settings (LangGraph Server makes one per run) share one model per loop, and a model is
# never shared across loops (its HTTP clients are bound to the loop that first used them).
_built: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[Any, ...], CandidateCall]] = (
    weakref.WeakKeyDictionary()
)
_built_outside_loops: dict[tuple[Any, ...], CandidateCall] = {}
_built_lock = threading.Lock()


def chat_model_name(model: Any) -> str | None:
    """The model name a LangChain chat model carries (``model_name`` or ``model``), else ``None``."""
    for attr in ("model_name", "model"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return None


def resolve_candidate(spec: str, settings: ModelSettings | None = None, *, name: str | None = None) -> Candidate:
    """Resolve ``spec`` once into a :class:`Candidate`; nothing is built, no file is read, no model is called.

    Args:
        spec: ``"<provider>:<name>"`` (``openai:gpt-4o-mini``) or a bare alias of
            :data:`wildtoolbench.models.registry.MODEL_ALIASES` (``local``).
        settings: connection and sampling settings (default :class:`ModelSettings`).
        name: the ``model_name`` to record instead of the provider's (empty or ``None``: the provider's).

    Returns:
        The candidate; :attr:`Candidate.model` is the alias itself for a bare alias, the provider's
        ``model_name(target)`` when it has one (``replay:PATH#CANDIDATE`` -> ``CANDIDATE``), else the
        part after ``provider:``.

    Raises:
        ConfigurationError: a spec that is not ``provider:name`` or names an unknown provider (the
            message quotes the spec, or names the provider and the known ones).
        wildtoolbench.models.server_policy.PolicyError: on a server, a base URL the deployment does not accept
            (:func:`wildtoolbench.models.server_policy.server_settings`, docs/settings.md §8).
    """
    prefix, target = split_spec(spec)
    provider = get_provider(prefix)
    if spec in MODEL_ALIASES:
        model = spec
    elif provider.model_name is not None:
        model = provider.model_name(target)
    else:
        model = target
    return Candidate(
        spec=spec,
        provider=prefix,
        target=target,
        model=model,
        name=name or model,
        max_concurrency=provider.max_concurrency,
        settings=server_settings(settings or ModelSettings()),  # on a server: keys only where configured
        _provider=provider,
    )


# --------------------------------------------------------------------------- one question about a spec


def check_model(spec: str, settings: ModelSettings | None = None) -> None:
    """Check that ``spec`` can work with ``settings`` without calling the model (:meth:`Candidate.check`).

    Raises:
        ConfigurationError: malformed spec, unknown provider, or the provider's own check failed
            (missing file, unknown candidate, missing credentials, missing package...).
    """
    resolve_candidate(spec, settings).check()


def model_name_for(spec: str) -> str:
    """Name recorded for model ``spec`` (:attr:`Candidate.model`): a bare alias (``local``) itself, the provider's
    ``model_name(name)`` if it has one (``replay:PATH#CANDIDATE`` -> ``CANDIDATE``), else the part after ``provider:``.

    Raises:
        ConfigurationError: malformed spec or unknown provider.
    """
    return resolve_candidate(spec).model


def max_concurrency(spec: str) -> int | None:
    """How many sessions the provider of ``spec`` usefully serves at once; ``None`` = no limit advertised.

    ``gguf:`` and ``local`` say how many slots their llama.cpp server has (``WTB_LOCAL_PARALLEL``,
    default 1: more conversations than slots only queue, and interleaved ones lose the slot's
    prompt-prefix reuse). Batch runners use it as their default concurrency. Nothing is built (no
    model, no server).

    Raises:
        ConfigurationError: malformed spec or unknown provider.
    """
    return resolve_candidate(spec).max_concurrency


def resolve_model(spec: str, settings: ModelSettings | None = None) -> BaseChatModel:
    """Build the chat model named by ``spec`` (a new one at each call: :meth:`Candidate.build`).

    Args:
        spec: ``"<provider>:<name>"``, e.g. ``openai:gpt-4o-mini``, or a bare alias from
            :data:`wildtoolbench.models.registry.MODEL_ALIASES` (``local``).
        settings: connection and sampling settings (defaults: :class:`ModelSettings`).

    Returns:
        A LangChain ``BaseChatModel`` (tools are bound by the caller); for ``graph:`` specs the graph.

    Raises:
        ConfigurationError: malformed spec or unknown provider prefix; whatever the provider raises.
    """
    return resolve_candidate(spec, settings).build()


def describe_candidate(spec: str) -> dict[str, Any]:
    """The ``candidate`` object of result records and traces for ``spec``; never raises.

    :meth:`wildtoolbench.models.candidate.Candidate.describe` of the resolved spec (docs/evaluation.md §5.5): ``{"kind",
    "spec", "graph"?, "model"}``; a spec that cannot be resolved gives ``kind`` ``None``.
    """
    try:
        return resolve_candidate(spec).describe()
    except (ConfigurationError, ValueError, ImportError):
        return {"kind": None, "spec": spec, "model": None}
