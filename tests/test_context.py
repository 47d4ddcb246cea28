"""AgentContext is immutable and PolicyDecision carries a readable reason."""

from __future__ import annotations

import dataclasses
import os
import threading
import warnings

import pytest

from mcs.context import NO_SESSION, AgentContext, PolicyDecision, default_context


def test_defaults_identify_an_anonymous_agent_with_a_fresh_request_id() -> None:
    first, second = AgentContext(), AgentContext()
    assert first.agent_id == "anonymous"
    assert first.model is None
    assert len(first.request_id) == 32
    assert first.request_id != second.request_id


def test_the_pipelines_default_context_is_a_bare_agent_context_with_its_own_request_id() -> None:
    made, bare = default_context(), AgentContext()
    assert made == AgentContext(request_id=made.request_id) and made.request_id != bare.request_id
    assert made.session is NO_SESSION and dict(made.metadata) == {}
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.agent_id = "someone"  # type: ignore[misc]


def test_new_context_builds_what_the_constructor_builds() -> None:
    from mcs.context import new_context

    made = new_context("agent-7", "gpt-x", "req-1", {"env": "prod"})
    assert type(made) is AgentContext and repr(made) == repr(AgentContext("agent-7", "gpt-x", "req-1", {"env": "prod"}))
    assert made == AgentContext(agent_id="agent-7", model="gpt-x", request_id="req-1", metadata={"env": "prod"})
    assert made.session is NO_SESSION and isinstance(made.metadata, type(AgentContext(metadata={"a": "b"}).metadata))
    with pytest.raises(TypeError):
        made.metadata["env"] = "dev"  # type: ignore[index]
    bare = new_context()
    assert bare == AgentContext(request_id=bare.request_id) and len(bare.request_id) == 32
    assert bare.metadata is AgentContext().metadata  # the shared empty mapping
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.agent_id = "someone"  # type: ignore[misc]


def test_request_ids_stay_unique_across_threads_and_batches() -> None:
    ids: list[str] = []

    def draw() -> None:
        ids.extend(AgentContext().request_id for _ in range(700))  # several batches of drawn ids

    threads = [threading.Thread(target=draw) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(set(ids)) == len(ids) == 2800
    assert all(len(id_) == 32 and int(id_, 16) >= 0 for id_ in ids)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_a_forked_child_draws_request_ids_of_its_own() -> None:
    AgentContext()  # the parent holds ids drawn ahead
    read, write = os.pipe()
    with warnings.catch_warnings():  # "multi-threaded process": the child only writes and leaves
        warnings.simplefilter("ignore", DeprecationWarning)
        pid = os.fork()
    if pid == 0:  # the child: report its next id and leave at once
        os.write(write, AgentContext().request_id.encode())
        os._exit(0)
    os.close(write)
    child_id = os.read(read, 64).decode()
    os.close(read)
    os.waitpid(pid, 0)
    assert len(child_id) == 32
    assert child_id != AgentContext().request_id


def test_context_fields_cannot_be_reassigned() -> None:
    context = AgentContext(agent_id="a")
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.agent_id = "b"  # type: ignore[misc]


def test_metadata_is_a_read_only_copy() -> None:
    source = {"tenant": "acme"}
    context = AgentContext(metadata=source)
    source["tenant"] = "evil"
    assert context.metadata["tenant"] == "acme"
    with pytest.raises(TypeError):
        context.metadata["tenant"] = "evil"  # type: ignore[index]


def test_with_request_id_keeps_identity_and_changes_the_request() -> None:
    context = AgentContext(agent_id="a", model="gpt-4o", metadata={"k": "v"})
    fresh = context.with_request_id()
    named = context.with_request_id("req-2")
    assert (fresh.agent_id, fresh.model, dict(fresh.metadata)) == ("a", "gpt-4o", {"k": "v"})
    assert fresh.request_id != context.request_id
    assert named.request_id == "req-2"


def test_allow_and_deny() -> None:
    assert PolicyDecision.allow().allowed is True
    assert PolicyDecision.allow() is PolicyDecision.allow()
    denial = PolicyDecision.deny("only read-only tools after 18:00")
    assert denial.allowed is False
    assert denial.reason == "only read-only tools after 18:00"


def test_a_denial_needs_a_reason() -> None:
    with pytest.raises(ValueError, match="reason"):
        PolicyDecision.deny("")
