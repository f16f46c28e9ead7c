"""The scripted transport double."""

from __future__ import annotations

import threading

import pytest

from lab.errors import UsageError
from lab.messages import ChatRequest, Message
from lab.transport.contract import FailureKind, Reply, TransportFailure
from lab.transport.scripted import Held, ScriptedTransport


def _request(question: str) -> ChatRequest:
    return ChatRequest("m", (Message("user", question),))


class TestScriptedTransport:
    def test_replies_and_faults_in_order(self) -> None:
        """Steps come back in script order; faults are raised with their kind."""
        script = [Reply("a"), FailureKind.HTTP_429, TransportFailure(FailureKind.HTTP_STATUS, 503)]
        transport = ScriptedTransport(script)
        assert transport.send(_request("1")) == Reply("a", "stop")
        with pytest.raises(TransportFailure) as first:
            transport.send(_request("2"))
        assert first.value.kind is FailureKind.HTTP_429
        with pytest.raises(TransportFailure) as second:
            transport.send(_request("3"))
        assert (second.value.kind, second.value.status) == (FailureKind.HTTP_STATUS, 503)
        assert transport.calls == 3

    def test_records_exact_bodies(self) -> None:
        """Every request body is recorded byte for byte."""
        transport = ScriptedTransport([Reply("a")])
        request = _request("好")
        transport.send(request)
        assert transport.requests == [request.body]

    def test_exhausted_script_is_a_clear_error(self) -> None:
        """A call beyond the script names the transport and the call number."""
        transport = ScriptedTransport([], name="slow")
        with pytest.raises(UsageError, match="'slow' has no step left for call 1"):
            transport.send(_request("q"))

    def test_by_question(self) -> None:
        """With by_question the reply depends on the question, not on call order."""
        transport = ScriptedTransport(by_question={"b": Reply("B"), "a": Reply("A")})
        assert transport.send(_request("a")).content == "A"
        assert transport.send(_request("b")).content == "B"
        with pytest.raises(UsageError, match="no reply for question 'c'"):
            transport.send(_request("c"))

    @pytest.mark.timeout(5)
    def test_held_step_waits(self) -> None:
        """A held step is delivered only after its gate opens."""
        gate = threading.Event()
        transport = ScriptedTransport([Held(Reply("late"), until=gate)])
        got: list[Reply] = []
        worker = threading.Thread(target=lambda: got.append(transport.send(_request("q"))))
        worker.start()
        worker.join(0.05)
        assert got == [] and worker.is_alive()
        gate.set()
        worker.join(5)
        assert got == [Reply("late")]
