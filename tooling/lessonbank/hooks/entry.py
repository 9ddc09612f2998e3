"""Run a lessonbank hook: `python3 -I -S <this file> [agent [event]]` with the payload on stdin.

`bank install <agent>` points the agent's settings at this file, naming the agent (claude when
none) and, for agents whose payloads carry no event name, the event. It puts the folder that holds
the `lessonbank` package on sys.path itself (`-I -S` leaves out site-packages and the script's
folder), so nothing but the standard library and this package is ever imported.

The process is short and its garbage small, so the cyclic collector is off (it ran a dozen times
over the compiled index's objects), and it ends with `posix._exit` once `main` has flushed its
answer: tearing the interpreter down (freeing every module and object, a last collection) cost
about a sixth of a whole call. Every file the hooks write is written with `posix` calls and closed
before `main` returns, so nothing is left in a buffer.
"""

import gc
import sys

gc.disable()
# <tooling>/lessonbank/hooks/entry.py: two folders up from this file's folder, however it was named.
sys.path.insert(0, (__file__.rpartition("/")[0] or ".") + "/../..")
try:
    from lessonbank.hooks import loader

    loader.install()
    from lessonbank.hooks.dispatch import main
except BaseException:  # the package cannot load (a broken or half-removed install): fail open, print nothing
    sys.exit(0)
main()
import posix  # noqa: E402 - only once main is done

posix._exit(0)
