"""End-to-end tests: the real Claude Code CLI against a scripted model server."""
