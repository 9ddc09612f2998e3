"""Run a lessonbank hook: `python3 -I -S <this file> [agent [event]]` with the payload on stdin.

`bank install <agent>` points the agent's settings at this file, naming the agent (claude when
none) and, for agents whose payloads carry no event name, the event. It puts the folder that holds
the `lessonbank` package on sys.path itself (`-I -S` leaves out site-packages and the script's
folder), so nothing but the standard library and this package is ever imported.
"""

import sys

# <tooling>/lessonbank/hooks/entry.py: two folders up from this file's folder, however it was named.
sys.path.insert(0, (__file__.rpartition("/")[0] or ".") + "/../..")
try:
    from lessonbank.hooks.dispatch import main
except BaseException:  # an interpreter too old for the package: do nothing rather than fail
    sys.exit(0)
main()
