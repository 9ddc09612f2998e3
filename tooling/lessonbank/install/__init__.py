"""Connecting a bank to an agent: its settings file gets the hook commands, or loses them.

It may import `bank`, the kernel, `errors` and `config`.
"""
