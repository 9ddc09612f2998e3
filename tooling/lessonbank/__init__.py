"""lessonbank: a git-versioned bank of lessons that coding agents learned in a project.

Nothing is imported here on purpose: the hook hot path imports submodules of this
package and must not pay for anything it does not use.
"""

__version__ = "0.1.0"
