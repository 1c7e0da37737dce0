"""``Proxy``: the ``webfreeze`` binary as a context manager, and what each client needs to use it."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import IO, Any, Literal

from ._binary import find_webfreeze_bin
from ._errors import StartupTimeout, WebfreezeError, classify

Mode = Literal["live", "record", "replay"]

_SUBCOMMAND: dict[str, str] = {"live": "proxy", "record": "record", "replay": "replay"}
_LISTENING = "listening on "


def _flag_args(options: Mapping[str, Any]) -> list[str]:
    """Keyword arguments as the CLI's flags: ``upstream_ca="a.pem"`` -> ``--upstream-ca a.pem``; a list
    repeats the flag; True gives a bare flag; None and False are left out."""
    out: list[str] = []
    for key, value in options.items():
        flag = "--" + key.replace("_", "-")
        if value is None or value is False:
            continue
        if value is True:
            out.append(flag)
        elif isinstance(value, (list, tuple)):
            for v in value:
                out += [flag, os.fspath(v) if isinstance(v, os.PathLike) else str(v)]
        else:
            out += [flag, os.fspath(value) if isinstance(value, os.PathLike) else str(value)]
    return out


def _error_message(stderr: str) -> str:
    """The binary's ``error: ...`` line(s), else the end of its stderr."""
    lines = stderr.strip().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("error: "):
            return "\n".join(lines[i:])[len("error: ") :]
    return "\n".join(lines[-10:]) or "(no message)"


class Runner:
    """How the package runs the binary: which binary, which store and home (shared by the helpers)."""

    def __init__(
        self,
        *,
        home: str | os.PathLike[str] | None = None,
        store: str | os.PathLike[str] | None = None,
        binary: str | None = None,
    ) -> None:
        self.binary = binary or find_webfreeze_bin()
        self.home = os.fspath(home) if home is not None else None
        self.store = os.fspath(store) if store is not None else None

    def command(self, *args: str) -> list[str]:
        """The full command line for ``webfreeze ARGS``."""
        cmd = [self.binary]
        if self.store:
            cmd += ["--store", self.store]
        return cmd + list(args)

    def environ(self) -> dict[str, str]:
        """The binary's environment: ours, with ``WEBFREEZE_HOME`` when a home was given."""
        env = dict(os.environ)
        if self.home:
            env["WEBFREEZE_HOME"] = self.home
        return env

    def run(self, *args: str) -> str:
        """Run a short command; its stdout, or the binary's error as an exception."""
        cmd = self.command(*args)
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.environ(), check=False)
        if p.returncode != 0:
            raise classify(_error_message(p.stderr), command=cmd, returncode=p.returncode, stderr=p.stderr)
        return p.stdout

    def snapshot_exists(self, name: str) -> bool:
        """Whether the store holds a snapshot by that name (a store that does not exist holds none)."""
        cmd = self.command("snapshots", "show", name, "--json", "--limit", "0")
        p = subprocess.run(cmd, capture_output=True, text=True, env=self.environ(), check=False)
        if p.returncode == 0:
            return True
        message = _error_message(p.stderr)
        if "no snapshot named" in message or "no store here" in message:
            return False
        raise classify(message, command=cmd, returncode=p.returncode, stderr=p.stderr)


class Proxy:
    """The webfreeze proxy in a child process, for the duration of a ``with`` block.

    ``mode`` is ``"live"`` (pass-through), ``"record"`` (live, every exchange stored into ``snapshot``)
    or ``"replay"`` (answered from ``snapshot``; no network unless ``on_miss="live"|"record"``). Other
    keyword arguments are the CLI's options under the same names (see ``webfreeze record --help`` and
    ``webfreeze replay --help``): ``upstream_ca="ca.pem"``, ``resolve=["shop.test:443:127.0.0.1:8443"]``,
    ``rules="rules.json"``, ``report="report.json"``, ``exclude=[...]``, ``label=["task=x"]``...

    The proxy listens on ``127.0.0.1:0``; on exit it is stopped as Ctrl-C stops it, which seals a
    recording, and a failure raises :class:`WebfreezeError` with the binary's message. ``home`` is
    ``$WEBFREEZE_HOME`` for the binary (CA and store), ``store`` a store directory of its own, ``binary`` a
    ``webfreeze`` to run instead of the installed one, ``no_proxy`` hosts :meth:`env` keeps off the proxy.
    """

    def __init__(
        self,
        mode: Mode = "live",
        snapshot: str | None = None,
        *,
        home: str | os.PathLike[str] | None = None,
        store: str | os.PathLike[str] | None = None,
        on_miss: Literal["404", "live", "record"] | None = None,
        binary: str | None = None,
        listen: str = "127.0.0.1:0",
        startup_timeout: float = 60.0,
        no_proxy: Sequence[str] = (),
        **options: Any,
    ) -> None:
        if mode not in _SUBCOMMAND:
            raise ValueError(f"mode must be 'live', 'record' or 'replay', not {mode!r}")
        if mode in ("record", "replay") and not snapshot:
            raise ValueError(f"mode={mode!r} needs snapshot=NAME")
        if mode != "replay" and on_miss is not None:
            raise ValueError("on_miss is for mode='replay'")
        self.mode: Mode = mode
        self.snapshot = snapshot
        self.runner = Runner(home=home, store=store, binary=binary)
        self.startup_timeout = startup_timeout
        self.no_proxy = list(no_proxy)
        args = [_SUBCOMMAND[mode]]
        if snapshot and mode != "live":
            args += ["--snapshot", snapshot]
        if on_miss is not None:
            args += ["--on-miss", on_miss]
        args += ["--listen", listen]
        args += _flag_args(options)
        self._args = args
        self._proc: subprocess.Popen[str] | None = None
        self._stderr: IO[str] | None = None
        self._address: str | None = None
        self._settings: dict[str, Any] | None = None
        self._nss_home: str | None = None
        #: What the binary wrote on stderr, once it has stopped cleanly (its summary of the session).
        self.log = ""

    # -- lifecycle ---------------------------------------------------------------------------------------

    def start(self) -> Proxy:
        """Start the binary and wait for its ``listening on ADDR`` line."""
        if self._proc is not None:
            raise RuntimeError("this Proxy is already started")
        cmd = self.runner.command(*self._args)
        self._stderr = tempfile.TemporaryFile(mode="w+", prefix="webfreeze-stderr-")  # noqa: SIM115 - lives as long as the child
        self._proc = subprocess.Popen(
            cmd,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            text=True,
            env=self.runner.environ(),
            start_new_session=True,
        )
        lines: queue.Queue[str | None] = queue.Queue()
        assert self._proc.stdout is not None
        threading.Thread(target=_pump, args=(self._proc.stdout, lines), daemon=True).start()
        deadline = time.monotonic() + self.startup_timeout
        while True:
            try:
                line = lines.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                self._kill()
                raise StartupTimeout(
                    f"webfreeze did not start listening within {self.startup_timeout:g} s; its stderr:\n"
                    + self._read_stderr(),
                    command=cmd,
                ) from None
            if line is None:  # stdout closed: the process ended before listening
                code = self._proc.wait()
                err = self._read_stderr()
                self._proc = None
                raise classify(_error_message(err), command=cmd, returncode=code, stderr=err)
            if line.startswith(_LISTENING):
                self._address = line[len(_LISTENING) :].strip()
                return self

    def stop(self, timeout: float = 120.0) -> None:
        """Stop as Ctrl-C does (a recording is sealed; a replay writes its report) and check the exit."""
        proc = self._proc
        if proc is None:
            return
        cmd = self.runner.command(*self._args)
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
            try:
                proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                self._kill()
                raise WebfreezeError(
                    f"webfreeze did not stop within {timeout:g} s of Ctrl-C; killed it",
                    command=cmd,
                    stderr=self._read_stderr(),
                ) from None
        self._proc = None
        err = self._read_stderr()
        if self._stderr is not None:
            self._stderr.close()
            self._stderr = None
        if proc.returncode < 0:
            raise WebfreezeError(
                f"webfreeze was ended by signal {-proc.returncode} before it could finish (a recording "
                f"is then marked interrupted); its stderr:\n{err.strip()}",
                command=cmd,
                returncode=proc.returncode,
                stderr=err,
            )
        if proc.returncode != 0:
            raise classify(_error_message(err), command=cmd, returncode=proc.returncode, stderr=err)
        self.log = err

    def __enter__(self) -> Proxy:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        try:
            self.stop()
        except WebfreezeError:
            if exc is None:
                raise  # the proxy's failure is the news; otherwise the block's own exception wins

    def _kill(self) -> None:
        if self._proc is not None and self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()

    def _read_stderr(self) -> str:
        if self._stderr is None:
            return ""
        self._stderr.flush()
        self._stderr.seek(0)
        return self._stderr.read()

    # -- where it is -------------------------------------------------------------------------------------

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        if self._address is None:
            raise RuntimeError("the proxy is not started: use it in a `with` block or call start()")
        return self._address

    @property
    def url(self) -> str:
        """``http://127.0.0.1:PORT``: the proxy URL for any client."""
        return f"http://{self.address}"

    @property
    def running(self) -> bool:
        """Whether the child process is alive."""
        return self._proc is not None and self._proc.poll() is None

    def settings(self) -> dict[str, Any]:
        """``webfreeze env --format json`` for this proxy: variables, Chromium flags, CA files and hash."""
        if self._settings is None:
            args = ["env", "--proxy", self.address, "--format", "json"]
            for h in self.no_proxy:
                args += ["--no-proxy", h]
            self._settings = json.loads(self.runner.run(*args))
        return self._settings

    # -- how each client is told to use it ---------------------------------------------------------------

    @property
    def ca_spki(self) -> str:
        """Base64 SHA-256 of the CA's SPKI (Chromium's ``--ignore-certificate-errors-spki-list``)."""
        return str(self.settings()["ca_spki_sha256"])

    @property
    def ca_certificate(self) -> str:
        """Path of the CA certificate (PEM; never the key)."""
        return str(self.settings()["ca_certificate"])

    def playwright_proxy(self) -> dict[str, str]:
        """The ``proxy`` option for Playwright's ``launch``/``new_context`` (Playwright routes loopback
        through it too). Trust the CA with :meth:`chromium_args` or :meth:`nss_home`."""
        return {"server": self.url}

    def chromium_args(self, *, features: bool = True) -> list[str]:
        """Chromium's flags: the proxy (loopback included), the CA pin, QUIC off, HTTPS-Upgrades off.
        ``features=False`` leaves out the ``--disable-features`` flag for launchers that set their own
        (Chromium keeps only one)."""
        args = [str(a) for a in self.settings()["chromium_args"]]
        if not features:
            args = [a for a in args if not a.startswith("--disable-features=")]
        return args

    def selenium_options(self, options: Any = None) -> Any:
        """Add :meth:`chromium_args` to Selenium ``ChromeOptions`` (a new one when None) and return it."""
        if options is None:
            from selenium.webdriver import ChromeOptions

            options = ChromeOptions()
        for a in self.chromium_args():
            options.add_argument(a)
        return options

    def browser_use_profile_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for browser-use's ``BrowserProfile``: its proxy setting with loopback proxied
        too, the CA pin and QUIC off (browser-use merges ``--disable-features`` itself)."""
        keep = ("--ignore-certificate-errors-spki-list=", "--disable-quic", "--disable-features=")
        return {
            "proxy": {"server": self.url, "bypass": "<-loopback>"},
            "args": [a for a in self.chromium_args() if a.startswith(keep)],
        }

    def env(self) -> dict[str, str]:
        """Variables for subprocesses (``env={**os.environ, **proxy.env()}``): the proxy for HTTP(S) with
        a ``NO_PROXY`` that keeps loopback (chromedriver), the model API (``$OPENAI_BASE_URL`` and
        ``no_proxy=``) out, and a CA bundle of the system's roots plus webfreeze's CA."""
        return {str(k): str(v) for k, v in self.settings()["env"].items()}

    def nss_home(self) -> str:
        """A HOME directory whose NSS database (``.pki/nssdb``) trusts the CA: give it to a browser that
        takes no flags from you (``env={"HOME": proxy.nss_home()}``). Needs ``certutil``
        (``apt-get install -y libnss3-tools``)."""
        if self._nss_home is None:
            home = Path(self.ca_certificate).parent / "nss-home"
            self.runner.run("ca", "install", "--nssdb", str(home / ".pki" / "nssdb"))
            self._nss_home = str(home)
        return self._nss_home

    # -- episodes and the report (replay) ------------------------------------------------------------------

    def new_episode(self) -> None:
        """Start a new episode: sequence cursors back to the first recorded response of each request
        (replay; a no-op in live and record modes, where the origin decides)."""
        if self.mode == "replay":
            self._direct("POST", "/__webfreeze/reset")

    def report(self) -> dict[str, Any]:
        """The replay report so far: hits per layer, misses (with the ones rendering needed), coverage."""
        if self.mode != "replay":
            raise WebfreezeError(
                "report() is for mode='replay'; a recording's summary is in its snapshot "
                "(`webfreeze snapshots show NAME`)"
            )
        result: dict[str, Any] = json.loads(self._direct("GET", "/__webfreeze/report"))
        return result

    def _direct(self, method: str, path: str) -> str:
        opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
        req = urllib.request.Request(
            f"http://{self.address}{path}", method=method, data=b"" if method == "POST" else None
        )
        try:
            with opener.open(req, timeout=30) as r:
                return str(r.read().decode())
        except urllib.error.HTTPError as e:
            raise WebfreezeError(f"{method} {path}: {e.code} {e.read().decode(errors='replace')}") from e


def _pump(stream: Iterable[str], out: queue.Queue[str | None]) -> None:
    for line in stream:
        out.put(line)
    out.put(None)
