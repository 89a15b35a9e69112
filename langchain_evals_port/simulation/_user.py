"""The simulated user: a script, an LLM playing a persona, or a function.

Every kind answers the same question — given the transcript so far and the number of
completed turns, what does the user say next? — and ``None`` means it has nothing more to
say, which ends the run with ``stop_reason="script_exhausted"``.
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeAlias

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import Runnable

from langchain_evals_port.core import to_langchain_messages

from ._app import with_id
from ._calls import RUN_ASYNC, call_async, call_sync

UserTurn: TypeAlias = "str | BaseMessage | dict[str, Any]"
"""A user message: text, a LangChain message or a message dict (OpenAI or LangChain style)."""
UserFunction: TypeAlias = Callable[
    [list[BaseMessage], int], "UserTurn | Awaitable[UserTurn | None] | None"
]
"""``(transcript, completed turns) -> next user message`` (or None to stop); may be async."""

OPENING_REQUEST = (
    "Nobody has spoken yet. Write the first message you send, in character, and nothing else."
)
"""Sent to an LLM user's model when nobody has spoken yet, so that it opens the conversation."""


def user_message(turn: UserTurn) -> BaseMessage:
    """``turn`` as a LangChain message with an id (text becomes a ``HumanMessage``)."""
    if isinstance(turn, str):
        return HumanMessage(content=turn, id=str(uuid.uuid4()))
    return with_id(to_langchain_messages(turn)[0])


def persona_view(system_prompt: str, trajectory: Sequence[BaseMessage]) -> list[BaseMessage]:
    """The transcript as the user's model sees it: roles flipped, tool traffic hidden.

    The app's messages become human messages and the user's own become AI messages, after
    the persona's system prompt. Tool results, system messages and AI messages that only
    call tools are left out: the person being simulated never sees them. An empty history
    gets ``OPENING_REQUEST`` so that the model opens the conversation.
    """
    view: list[BaseMessage] = [SystemMessage(content=system_prompt)]
    for message in trajectory:
        # Only the text: provider blocks such as tool_use are tool traffic, and the person
        # being simulated reads words.
        text = message.text.strip()
        if message.type == "human":
            view.append(AIMessage(content=message.text))
        elif message.type == "ai" and text:
            view.append(HumanMessage(content=message.text))
    if len(view) == 1:
        view.append(HumanMessage(content=OPENING_REQUEST))
    return view


class SimulatedUser:
    """The other side of a simulated conversation.

    Build one with ``SimulatedUser.scripted``, ``SimulatedUser.llm`` or
    ``SimulatedUser.from_function``; ``respond``/``arespond`` give its next message.

    Example:
        >>> user = SimulatedUser.scripted(["Hi!", "Bye."])
        >>> user.respond([], 0).content, user.respond([], 2)
        ('Hi!', None)
    """

    def __init__(self, function: UserFunction) -> None:
        self._function = function

    @classmethod
    def scripted(cls, turns: Sequence[UserTurn]) -> SimulatedUser:
        """A user that says ``turns`` in order, one per turn, and then has nothing to say.

        Args:
            turns: The user's messages: text or message objects/dicts.
        """
        # Checked now so a malformed turn fails at construction; each run still gets fresh
        # ids, or an app remembering the previous run would take them for old messages.
        for turn in turns:
            user_message(turn)
        script = list(turns)

        def next_turn(trajectory: list[BaseMessage], turn: int) -> BaseMessage | None:
            return user_message(script[turn]) if turn < len(script) else None

        return cls(next_turn)

    @classmethod
    def llm(
        cls,
        system_prompt: str,
        model: BaseChatModel | Runnable[Any, Any] | str,
        fixed_responses: Sequence[UserTurn] = (),
    ) -> SimulatedUser:
        """A user played by a chat model following ``system_prompt``.

        The model sees the conversation from the user's side (see ``persona_view``), and
        opens it when the history is empty.

        Args:
            system_prompt: The persona and goal of the user, e.g. "You are a customer
                whose parcel never arrived."
            model: A chat model, or a ``"provider:model"`` string resolved with
                ``init_chat_model`` (the ``langchain`` extra) on first use.
            fixed_responses: Messages said first, one per turn, before the model speaks.
        """
        if not isinstance(model, (str, Runnable)):
            raise TypeError(
                "model must be a LangChain chat model or a 'provider:model' string, "
                f"got {type(model).__name__}"
            )
        fixed = SimulatedUser.scripted(fixed_responses)
        resolved: list[Runnable[Any, Any]] = []

        def chat_model() -> Runnable[Any, Any]:
            if not resolved:
                resolved.append(_chat_model(model))
            return resolved[0]

        def next_turn(trajectory: list[BaseMessage], turn: int) -> Any:
            if (message := fixed.respond(trajectory, turn)) is not None:
                return message
            return chat_model().invoke(persona_view(system_prompt, trajectory))

        async def anext_turn(trajectory: list[BaseMessage], turn: int) -> Any:
            if (message := fixed.respond(trajectory, turn)) is not None:
                return message
            return await chat_model().ainvoke(persona_view(system_prompt, trajectory))

        return _LLMUser(next_turn, anext_turn)

    @classmethod
    def from_function(cls, function: UserFunction) -> SimulatedUser:
        """A user whose next message comes from ``function(transcript, turn)``.

        ``function`` may be async; returning None ends the run (``"script_exhausted"``).
        """
        return cls(function)

    def respond(self, trajectory: list[BaseMessage], turn: int) -> BaseMessage | None:
        """The user's next message after ``turn`` completed turns, or None when done."""
        return _as_user_message(call_sync(self._function, trajectory, turn, hint=RUN_ASYNC))

    async def arespond(self, trajectory: list[BaseMessage], turn: int) -> BaseMessage | None:
        """The user's next message, asynchronously."""
        return _as_user_message(await call_async(self._function, trajectory, turn))


class _LLMUser(SimulatedUser):
    # A chat model has a native async path, which a single function could not reach.
    def __init__(
        self, function: UserFunction, afunction: Callable[[list[BaseMessage], int], Any]
    ) -> None:
        super().__init__(function)
        self._afunction = afunction

    async def arespond(self, trajectory: list[BaseMessage], turn: int) -> BaseMessage | None:
        """The user's next message, from the model's async path."""
        return _as_user_message(await self._afunction(trajectory, turn))


def _as_user_message(turn: Any) -> BaseMessage | None:
    if turn is None:
        return None
    if isinstance(turn, AIMessage):
        # The model speaks as the user: its reply is the user's message.
        return HumanMessage(content=turn.content, id=str(uuid.uuid4()))
    return user_message(turn)


def _chat_model(model: BaseChatModel | Runnable[Any, Any] | str) -> Runnable[Any, Any]:
    if isinstance(model, Runnable):
        return model
    try:
        from langchain.chat_models import init_chat_model
    except ImportError as error:
        raise ImportError(
            f"resolving the simulated user's model {model!r} from a string needs the "
            "'langchain' package: pip install 'langchain-evals-port[langchain]' "
            "(or pass a chat model instance)"
        ) from error
    return init_chat_model(model)
