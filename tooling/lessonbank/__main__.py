"""`python -m lessonbank` runs the `bank` command."""

from lessonbank.cli import main

main()
