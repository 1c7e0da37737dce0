"""The exceptions the package raises. Each carries the binary's own message."""

from __future__ import annotations


class WebfreezeError(RuntimeError):
    """The webfreeze binary failed; ``str(e)`` is its message (what failed and what to do)."""

    def __init__(
        self, message: str, *, command: list[str] | None = None, returncode: int | None = None, stderr: str = ""
    ) -> None:
        super().__init__(message)
        #: The command line that failed.
        self.command = command or []
        #: Its exit code (1: the operation failed, 2: a usage error), None if it did not exit.
        self.returncode = returncode
        #: Everything it wrote on stderr.
        self.stderr = stderr


class BinaryNotFound(WebfreezeError):
    """The ``webfreeze`` binary is not installed where the package looks for it."""


class SnapshotNotFound(WebfreezeError):
    """The snapshot to replay is not in the store."""


class StoreBusy(WebfreezeError):
    """Another process has the store open for writing (one writer per store)."""


class StartupTimeout(WebfreezeError):
    """The proxy did not print ``listening on ADDR`` in time."""


def classify(message: str, *, command: list[str], returncode: int | None, stderr: str) -> WebfreezeError:
    """The most specific exception for what the binary said."""
    kind: type[WebfreezeError] = WebfreezeError
    if "no snapshot named" in message or "no store here" in message:
        kind = SnapshotNotFound
    elif "is open for writing by another process" in message:
        kind = StoreBusy
    return kind(message, command=command, returncode=returncode, stderr=stderr)
