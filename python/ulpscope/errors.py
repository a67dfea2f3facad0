"""The exception the package raises for anything the library refuses."""
from __future__ import annotations


class UlpscopeError(Exception):
    """A failed call into libulpscope, with the library's own message.

    Attributes:
        status: the numeric status code (include/ulpscope/status.h).
        code: its name without the prefix: ``"EPARSE"``, ``"EIO"``, ...
        message: the library's message, naming the file, ``line:column``
            or dataset and what was expected.
    """

    def __init__(self, status: int, code: str, message: str) -> None:
        super().__init__(f"{message} [{code}]" if message else code)
        self.status = status
        self.code = code
        self.message = message
