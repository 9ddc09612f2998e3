"""The hook process's import of this package's own modules, straight from their current bytecode cache.

Each standard import runs importlib's generic path search and loader (about 0.3 M instructions,
most of it Python code, per module), and a hook call loads a dozen of the package's modules. This
finder, first on sys.meta_path in the hook process only (entry.py installs it), looks for a
`lessonbank.` submodule only in its parent package's folder, and loads it from the `__pycache__`
file importlib itself wrote when that file is current by importlib's own test: the magic number,
timestamp mode, and the source's mtime and size in its header. Anything else (no cache yet, a stale
or hash-based one, an unreadable file, an optimized interpreter) is left to the standard finders,
which compile and cache it as usual. Standard library only.
"""

import _frozen_importlib_external
import _imp
import marshal
import posix
import sys

_ModuleSpec = type(sys.__spec__)  # importlib's ModuleSpec, without importing importlib


class Finder:
    """A sys.meta_path finder and loader for `lessonbank.*` modules with a current bytecode cache."""

    def __init__(self, tag: str, magic: bytes) -> None:
        self.suffix = "." + tag + ".pyc"
        self.magic = magic
        self.listings: dict[str, frozenset[str]] = {}  # folder -> its names, listed once per process

    def find_spec(self, name: str, path: "list[str] | None" = None, target: object = None) -> object:
        """The spec of a submodule whose cache is current, else None (the standard finders go on)."""
        if not path or not name.startswith("lessonbank."):
            return None
        folder, stem = path[0], name.rpartition(".")[2]
        names = self.listings.get(folder)
        if names is None:
            try:
                names = self.listings[folder] = frozenset(posix.listdir(folder))
            except OSError:
                return None
        if stem in names:  # a package before a module of the same name, as importlib has it
            package, folder = True, folder + "/" + stem
            source, cached = folder + "/__init__.py", folder + "/__pycache__/__init__" + self.suffix
        elif stem + ".py" in names:
            package = False
            source, cached = folder + "/" + stem + ".py", folder + "/__pycache__/" + stem + self.suffix
        else:
            return None
        try:
            st = posix.stat(source)
        except OSError:
            return None
        code = self._code(cached, st)
        if code is None:
            return None
        # As importlib does: a package moved with its caches still names its own files in tracebacks.
        _imp._fix_co_filename(code, source)  # type: ignore[attr-defined]
        spec = _ModuleSpec(name, self, origin=source, is_package=package)  # type: ignore[arg-type]
        spec.has_location = True
        spec.cached = cached
        spec.loader_state = code
        if package:
            spec.submodule_search_locations = [folder]
        return spec

    def _code(self, cached: str, st: posix.stat_result) -> object:
        """The code object in `cached` when its header says it was compiled from this source."""
        # statedir.read_text's loop, not a call to it: this finder runs before any lessonbank module
        # is loaded, and importing one here would take importlib's slow path it exists to skip.
        try:
            fd = posix.open(cached, posix.O_RDONLY)
        except OSError:
            return None
        try:
            chunks = []
            while True:
                chunk = posix.read(fd, 1 << 20)
                if not chunk:
                    break
                chunks.append(chunk)
            data = b"".join(chunks)
            if (
                data[:4] != self.magic
                or data[4:8] != b"\x00\x00\x00\x00"  # timestamp-based (flags 0)
                or int.from_bytes(data[8:12], "little") != int(st.st_mtime) & 0xFFFFFFFF
                or int.from_bytes(data[12:16], "little") != st.st_size & 0xFFFFFFFF
            ):
                return None
            return marshal.loads(memoryview(data)[16:])
        except (OSError, ValueError, EOFError, TypeError):
            return None
        finally:
            posix.close(fd)

    def create_module(self, spec: object) -> None:
        """The default module object."""
        return None

    def exec_module(self, module: object) -> None:
        """Run the module's code in it."""
        exec(module.__spec__.loader_state, module.__dict__)  # type: ignore[attr-defined]


def install() -> None:
    """Put the finder first on sys.meta_path (once), unless this interpreter caches no bytecode
    under the plain name (no cache tag, or -O)."""
    tag = sys.implementation.cache_tag
    if tag is None or sys.flags.optimize or any(isinstance(f, Finder) for f in sys.meta_path):
        return
    sys.meta_path.insert(0, Finder(tag, _frozen_importlib_external.MAGIC_NUMBER))  # type: ignore[arg-type]
