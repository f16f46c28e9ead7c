"""VersionedSession: article 003's begin/commit rules."""

from __future__ import annotations

import copy
import dataclasses
import pickle
import random
import threading
import time

import pytest

from lab.errors import ArgumentTypeError, UsageError
from lab.messages import Message, Role, is_whole_pairs
from lab.mutants import VERSIONED_VARIANTS
from lab.sessions.versioned import CommitStatus, Ticket, VersionedSession


def _state(session: VersionedSession) -> tuple[int, tuple[Message, ...], tuple[str, ...]]:
    version, history = session.snapshot()
    return version, history, session.receipt_ids


class TestOutcomeTable:
    def test_out_of_order_commit(self) -> None:
        """Both begin at v0; the fast one commits, the slow one is STALE; history holds only the fast pair."""
        session = VersionedSession("s1")
        slow = session.begin("r-slow", "slow question")
        fast = session.begin("r-fast", "fast question")
        assert session.commit(fast, "new answer", "stop") is CommitStatus.COMMITTED
        assert session.commit(slow, "old answer", "stop") is CommitStatus.STALE
        assert session.snapshot() == (1, (Message(Role.USER, "fast question"), Message(Role.ASSISTANT, "new answer")))

    def test_duplicate(self) -> None:
        """The same ticket with the same answer again is DUPLICATE, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert session.commit(ticket, "a", "stop") is CommitStatus.DUPLICATE

    @pytest.mark.parametrize(("question", "answer"), [("q", "other answer"), ("other question", "a")])
    def test_id_conflict(self, question: str, answer: str) -> None:
        """The same request id with another question or answer is ID_CONFLICT."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED
        reused = session.begin("r1", question)  # the same id again, on the current version
        assert session.commit(reused, answer, "stop") is CommitStatus.ID_CONFLICT

    @pytest.mark.parametrize(
        ("answer", "finish_reason"),
        [("", "stop"), ("   ", "stop"), (None, "stop"), ("a", "length"), ("a", None), ("a", "content_filter")],
    )
    def test_invalid(self, answer: str | None, finish_reason: str | None) -> None:
        """A blank answer or a finish reason other than stop is INVALID."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), answer, finish_reason) is CommitStatus.INVALID

    def test_foreign_ticket_with_equal_version(self) -> None:
        """A ticket of another session is FOREIGN even when the version numbers are equal."""
        one, two = VersionedSession("s1"), VersionedSession("s2")
        ticket = one.begin("r1", "q")
        assert ticket.version == two.version == 0
        assert two.commit(ticket, "a", "stop") is CommitStatus.FOREIGN
        assert two.version == 0

    def test_committed(self) -> None:
        """A valid reply on the current version appends the pair, bumps the version and stores a receipt."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED
        assert _state(session) == (1, (Message("user", "q"), Message("assistant", "a")), ("r1",))


class TestPrecedence:
    def test_foreign_before_invalid(self) -> None:
        """A foreign ticket with an invalid reply is FOREIGN."""
        one, two = VersionedSession("s1"), VersionedSession("s2")
        assert two.commit(one.begin("r", "q"), "", "length") is CommitStatus.FOREIGN

    def test_invalid_before_duplicate(self) -> None:
        """An invalid reply on a committed request id is INVALID, not DUPLICATE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(ticket, "a", "stop")
        assert session.commit(ticket, "a", "length") is CommitStatus.INVALID

    def test_receipt_before_version(self) -> None:
        """A committed ticket re-sent after later commits is DUPLICATE, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(ticket, "a", "stop")
        session.commit(session.begin("r2", "q2"), "a2", "stop")
        assert session.commit(ticket, "a", "stop") is CommitStatus.DUPLICATE

    def test_stale_conflicting_id_is_id_conflict(self) -> None:
        """An old ticket reusing a committed id with another answer is ID_CONFLICT, not STALE."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        session.commit(session.begin("r1", "q"), "first", "stop")
        assert session.commit(ticket, "second", "stop") is CommitStatus.ID_CONFLICT


class TestOwnershipByIdentity:
    """A ticket belongs to the session *object* whose ``begin`` issued it, not to a ``session_id`` string."""

    def test_equal_session_ids_are_foreign_to_each_other(self) -> None:
        """Two sessions named s1 are two states: each refuses the other's ticket, the issuer still accepts it."""
        one, two = VersionedSession("s1"), VersionedSession("s1")
        ticket = one.begin("r1", "q")
        assert ticket.session_id == two.session_id and ticket.version == two.version
        assert two.commit(ticket, "a", "stop") is CommitStatus.FOREIGN
        assert _state(two) == (0, (), ())
        assert one.commit(ticket, "a", "stop") is CommitStatus.COMMITTED
        assert one.commit(two.begin("r2", "q2"), "a2", "stop") is CommitStatus.FOREIGN
        assert _state(one) == (1, (Message("user", "q"), Message("assistant", "a")), ("r1",))

    def test_hand_made_ticket_is_foreign(self) -> None:
        """A ticket built by hand is FOREIGN, even when it equals, field for field, one that begin issues."""
        session = VersionedSession("s1")
        forged = Ticket("s1", 0, "r1", "q", ())
        issued = session.begin("r1", "q")
        assert forged == issued and hash(forged) == hash(issued)
        assert session.commit(forged, "a", "stop") is CommitStatus.FOREIGN
        assert _state(session) == (0, (), ())
        assert session.commit(issued, "a", "stop") is CommitStatus.COMMITTED

    def test_hand_made_retry_is_foreign_not_duplicate(self) -> None:
        """Ownership is row 1: a forged copy of a committed request is FOREIGN before its receipt is looked at."""
        session = VersionedSession("s1")
        session.commit(session.begin("r1", "q"), "a", "stop")
        assert session.commit(Ticket("s1", 0, "r1", "q", ()), "a", "stop") is CommitStatus.FOREIGN
        assert session.commit(Ticket("s1", 1, "r1", "other", session.snapshot()[1]), "b", "stop") is (
            CommitStatus.FOREIGN
        )

    @pytest.mark.parametrize(
        "changes",
        [{}, {"version": 0}, {"session_id": "s1"}, {"question": "another question"}],
        ids=["nothing", "version", "session_id", "question"],
    )
    def test_replaced_ticket_is_foreign(self, changes: dict[str, object]) -> None:
        """``dataclasses.replace`` builds a new ticket that begin never issued: FOREIGN, whatever it changes."""
        session, other = VersionedSession("s1"), VersionedSession("s1")
        for ticket in (session.begin("r1", "q"), other.begin("r1", "q")):
            assert session.commit(dataclasses.replace(ticket, **changes), "a", "stop") is CommitStatus.FOREIGN  # type: ignore[arg-type]
        assert _state(session) == (0, (), ())

    def test_the_owner_cannot_be_replaced_or_assigned(self) -> None:
        """The owner is no field: replace cannot name it, and a frozen ticket refuses to have it assigned."""
        session = VersionedSession("s1")
        issued, forged = session.begin("r1", "q"), Ticket("s1", 0, "r1", "q", ())
        with pytest.raises(TypeError, match="_issuer"):
            dataclasses.replace(issued, _issuer=None)  # type: ignore[arg-type]
        with pytest.raises((AttributeError, TypeError)):
            forged._issuer = issued._issuer  # type: ignore[misc]
        assert session.commit(forged, "a", "stop") is CommitStatus.FOREIGN

    def test_copies_keep_the_owner_and_unpickled_tickets_do_not(self) -> None:
        """An immutable ticket is its own copy; a ticket rebuilt from bytes was not issued by any begin."""
        session = VersionedSession("s1")
        ticket = session.begin("r1", "q")
        assert copy.copy(ticket) is ticket and copy.deepcopy(ticket) is ticket
        rebuilt = pickle.loads(pickle.dumps(ticket))
        assert rebuilt == ticket
        assert session.commit(rebuilt, "a", "stop") is CommitStatus.FOREIGN
        assert session.commit(copy.deepcopy(ticket), "a", "stop") is CommitStatus.COMMITTED

    def test_owner_is_in_no_repr_field_or_serialization(self) -> None:
        """Nothing readable depends on the owner: repr, fields, asdict and pickled state are the same for two
        sessions with the same id, and hold no memory address."""
        one, two = VersionedSession("s1"), VersionedSession("s1")
        first, second = one.begin("r1", "q"), two.begin("r1", "q")
        assert repr(first) == repr(second) == "<Ticket r1 of s1 v0, 0 pairs>"
        assert [f.name for f in dataclasses.fields(first)] == [
            "session_id",
            "version",
            "request_id",
            "question",
            "history",
        ]
        assert dataclasses.asdict(first) == dataclasses.asdict(second)
        assert pickle.dumps(first) == pickle.dumps(second)
        assert first == second
        assert repr(first._issuer) == "<identity of session s1>"  # a debugger shows a name, not an address

    @pytest.mark.parametrize("variant", sorted(VERSIONED_VARIANTS))
    def test_every_variant_decides_ownership_by_identity(self, variant: str) -> None:
        """The mutants break other rules, not this one: same-id and hand-made tickets are FOREIGN for all."""
        cls = VERSIONED_VARIANTS[variant]
        session, twin = cls("s1"), cls("s1")
        assert session.commit(twin.begin("r1", "q"), "a", "stop") is CommitStatus.FOREIGN
        assert session.commit(Ticket("s1", 0, "r1", "q", ()), "a", "stop") is CommitStatus.FOREIGN
        assert session.commit(session.begin("r1", "q"), "a", "stop") is CommitStatus.COMMITTED


class TestArgumentTypes:
    """Caller mistakes raise one clear line naming the parameter; the model's empty replies are statuses."""

    @pytest.mark.parametrize(
        ("arguments", "name"),
        [((None, "q"), "request_id"), (("r", None), "question"), ((7, "q"), "request_id"), (("r", b"q"), "question")],
    )
    def test_begin(self, arguments: tuple[object, object], name: str) -> None:
        """begin refuses a None or non-str request id or question, before its probe point."""
        points: list[str] = []
        session = VersionedSession("s1", probe=points.append)
        with pytest.raises(ArgumentTypeError, match=f"^begin\\(\\) needs {name} to be a str, not ") as raised:
            session.begin(*arguments)  # type: ignore[arg-type]
        assert isinstance(raised.value, UsageError) and isinstance(raised.value, TypeError)
        assert "\n" not in str(raised.value)
        assert points == []

    @pytest.mark.parametrize(
        ("case", "name", "got"),
        [
            ("ticket=None", "ticket", "None"),
            ("ticket=str", "ticket", "str"),
            ("answer=int", "answer", "int"),
            ("answer=bytes", "answer", "bytes"),
            ("finish_reason=int", "finish_reason", "int"),
            ("finish_reason=list", "finish_reason", "list"),
        ],
    )
    def test_commit(self, case: str, name: str, got: str) -> None:
        """commit refuses a non-ticket, or an answer or finish reason that is neither str nor None; nothing moves."""
        points: list[str] = []
        session = VersionedSession("s1", probe=points.append)
        ticket = session.begin("r1", "q")
        arguments = {
            "ticket=None": (None, "a", "stop"),
            "ticket=str": ("r1", "a", "stop"),
            "answer=int": (ticket, 42, "stop"),
            "answer=bytes": (ticket, b"a", "stop"),
            "finish_reason=int": (ticket, "a", 0),
            "finish_reason=list": (ticket, "a", ["stop"]),
        }[case]
        with pytest.raises(ArgumentTypeError, match=f"^commit\\(\\) needs {name} to be .*, not {got}$"):
            session.commit(*arguments)  # type: ignore[arg-type]
        assert points == ["begin:enter"]
        assert _state(session) == (0, (), ())
        assert session.commit(ticket, "a", "stop") is CommitStatus.COMMITTED

    @pytest.mark.parametrize(("answer", "finish_reason"), [(None, "stop"), ("a", None), (None, None)])
    def test_none_from_the_model_is_invalid_not_an_error(self, answer: str | None, finish_reason: str | None) -> None:
        """Article 003: an empty answer or a finish reason other than stop is INVALID; null and omitted count too."""
        session = VersionedSession("s1")
        assert session.commit(session.begin("r1", "q"), answer, finish_reason) is CommitStatus.INVALID
        assert _state(session) == (0, (), ())

    def test_session_id(self) -> None:
        """A session needs a str id; None names the parameter instead of failing on ``None.strip``."""
        with pytest.raises(ArgumentTypeError, match="session_id to be a str, not None"):
            VersionedSession(None)  # type: ignore[arg-type]

    @pytest.mark.parametrize("variant", sorted(VERSIONED_VARIANTS))
    def test_every_variant_names_the_parameter(self, variant: str) -> None:
        """The mutants share the same argument checks, so a None never surfaces as an AttributeError."""
        session = VERSIONED_VARIANTS[variant]("s1")
        with pytest.raises(ArgumentTypeError, match="question"):
            session.begin("r1", None)  # type: ignore[arg-type]
        with pytest.raises(ArgumentTypeError, match="ticket"):
            session.commit(None, "a", "stop")  # type: ignore[arg-type]


class TestNothingChangesUnlessCommitted:
    @pytest.mark.parametrize("case", ["stale", "duplicate", "id_conflict", "invalid", "foreign"])
    def test_non_committed_leaves_state(self, case: str) -> None:
        """Every non-COMMITTED status leaves version, history and receipts unchanged."""
        session = VersionedSession("s1")
        old = session.begin("r-old", "old")
        first = session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        before = _state(session)
        status = {
            "stale": lambda: session.commit(old, "x", "stop"),
            "duplicate": lambda: session.commit(first, "a1", "stop"),
            "id_conflict": lambda: session.commit(first, "other", "stop"),
            "invalid": lambda: session.commit(session.begin("r2", "q2"), "", "stop"),
            "foreign": lambda: session.commit(VersionedSession("s2").begin("r3", "q"), "a", "stop"),
        }[case]()
        assert status.value == case.upper()
        assert _state(session) == before


class TestTrimmingAndReceipts:
    def test_whole_round_trimming(self) -> None:
        """With max_rounds=2 the oldest whole pair is dropped; no answer is left without its question."""
        session = VersionedSession("s1")
        for i in range(1, 4):
            session.commit(session.begin(f"r{i}", f"q{i}"), f"a{i}", "stop")
        version, history = session.snapshot()
        assert version == 3
        assert [m.content for m in history] == ["q2", "a2", "q3", "a3"]
        assert is_whole_pairs(history)

    def test_receipt_eviction_turns_duplicate_into_stale(self) -> None:
        """Once its receipt is evicted, re-committing an old ticket is STALE, no longer DUPLICATE."""
        session = VersionedSession("s1", receipt_capacity=2)
        first = session.begin("r1", "q1")
        session.commit(first, "a1", "stop")
        session.commit(session.begin("r2", "q2"), "a2", "stop")
        assert session.commit(first, "a1", "stop") is CommitStatus.DUPLICATE
        session.commit(session.begin("r3", "q3"), "a3", "stop")
        assert session.receipt_ids == ("r2", "r3")
        assert session.commit(first, "a1", "stop") is CommitStatus.STALE


class TestImmutability:
    def test_ticket_is_frozen_and_isolated(self) -> None:
        """A ticket cannot be changed and its history does not follow later commits."""
        session = VersionedSession("s1")
        session.commit(session.begin("r1", "q1"), "a1", "stop")
        ticket = session.begin("r2", "q2")
        with pytest.raises(dataclasses.FrozenInstanceError):
            ticket.version = 5  # type: ignore[misc]
        assert isinstance(ticket.history, tuple)
        session.commit(ticket, "a2", "stop")
        session.commit(session.begin("r3", "q3"), "a3", "stop")
        assert [m.content for m in ticket.history] == ["q1", "a1"]

    def test_blank_ids_are_refused(self) -> None:
        """begin refuses a blank request id or question with a clear error."""
        session = VersionedSession("s1")
        with pytest.raises(UsageError, match="request_id"):
            session.begin(" ", "q")
        with pytest.raises(UsageError, match="question"):
            session.begin("r", "")

    def test_probe_points(self) -> None:
        """commit calls its probe at enter, after the checks and before the write."""
        points: list[str] = []
        session = VersionedSession("s1", probe=points.append)
        session.commit(session.begin("r", "q"), "a", "stop")
        assert points == ["begin:enter", "commit:enter", "commit:checked", "commit:write"]


class TestStress:
    @pytest.mark.slow
    @pytest.mark.timeout(30)
    def test_free_running_threads(self) -> None:
        """8 threads x 500 begin/commit: version == COMMITTED count, whole pairs always, no answer twice."""
        session = VersionedSession("s1", max_rounds=1_000_000, receipt_capacity=1_000_000)
        results: list[CommitStatus] = []
        whole = [True]
        guard = threading.Lock()

        def worker(n: int) -> None:
            rng = random.Random(n)
            for i in range(500):
                ticket = session.begin(f"t{n}-{i}", f"q{n}-{i}")
                if rng.random() < 0.5:
                    time.sleep(0)
                status = session.commit(ticket, f"a{n}-{i}", "stop")
                if not is_whole_pairs(session.snapshot()[1]):
                    whole[0] = False
                with guard:
                    results.append(status)

        threads = [threading.Thread(target=worker, args=(n,)) for n in range(8)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        committed = results.count(CommitStatus.COMMITTED)
        version, history = session.snapshot()
        assert len(results) == 4000
        assert set(results) <= {CommitStatus.COMMITTED, CommitStatus.STALE}
        assert version == committed == len(history) // 2
        answers = [m.content for m in history if m.role is Role.ASSISTANT]
        assert len(answers) == len(set(answers))
        assert whole[0]
