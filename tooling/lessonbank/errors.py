"""The package's own errors; only the CLI turns them into exit codes and messages."""

from __future__ import annotations


class BankError(Exception):
    """A problem the user can act on; the message says what to do next."""


class NoBankError(BankError):
    """No bank root was found."""


class LessonFormatError(BankError):
    """A lesson file (or text) cannot be parsed."""

    def __init__(self, message: str, line: int = 1) -> None:
        super().__init__(message)
        self.line = line


class GateRefusal(BankError):
    """A capture gate refused a lesson."""

    def __init__(self, gate: str, message: str) -> None:
        super().__init__(message)
        self.gate = gate


class NotFoundError(BankError):
    """A lesson named by slug or id does not exist."""


class GitError(BankError):
    """A git operation failed or the repository is in the wrong state."""
