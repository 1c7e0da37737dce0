"""Finding the ``webfreeze`` binary the wheel installed (as ruff and uv find theirs)."""

from __future__ import annotations

import os
import shutil
import sys
import sysconfig
from pathlib import Path

from ._errors import BinaryNotFound

#: Environment variable naming a binary to use instead of the installed one (a development build).
BIN_ENV = "WEBFREEZE_BIN"


def find_webfreeze_bin() -> str:
    """Return the path of the ``webfreeze`` binary.

    Looks at ``$WEBFREEZE_BIN``, then the scripts directory of this interpreter's install scheme (where pip
    put the wheel's binary), the user scheme, and finally ``PATH``.
    """
    override = os.environ.get(BIN_ENV)
    if override:
        if Path(override).is_file() and os.access(override, os.X_OK):
            return override
        raise BinaryNotFound(f"${BIN_ENV} is {override!r}, which is not an executable file")
    exe = "webfreeze" + sysconfig.get_config_var("EXE") if sysconfig.get_config_var("EXE") else "webfreeze"
    candidates = [Path(sysconfig.get_path("scripts")) / exe]
    user_scheme = _user_scheme()
    if user_scheme:
        candidates.append(Path(sysconfig.get_path("scripts", scheme=user_scheme)) / exe)
    # A virtualenv whose interpreter was started by its full path without activation.
    candidates.append(Path(sys.executable).parent / exe)
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("webfreeze")
    if found:
        return found
    looked = ", ".join(str(c) for c in candidates)
    raise BinaryNotFound(
        f"the webfreeze binary was not found (looked in {looked} and PATH); reinstall the wheel with "
        f"`pip install --force-reinstall webfreeze`, or set ${BIN_ENV} to a binary"
    )


def _user_scheme() -> str | None:
    if sys.version_info >= (3, 10):
        return sysconfig.get_preferred_scheme("user")
    return "posix_user" if os.name == "posix" else "nt_user"
