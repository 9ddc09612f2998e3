"""detect-secrets' provider regexes as one table, worked out once and kept in the user's cache folder.

bank.secrets runs them beside its own patterns. Each entry carries what lets a text pass over it
unsearched: the literal every match holds and the run of characters every match holds.
"""

from __future__ import annotations

import contextlib
import marshal
import os
import re
import sys
from collections.abc import Iterator
from functools import cache
from typing import Any, NamedTuple

from lessonbank.state import statedir, userdirs


class Entry(NamedTuple):
    """One detect-secrets regex and what a text must hold for it to match."""

    kind: str
    pattern: str
    flags: int
    hint: str  # the longest literal every match holds, lower-cased ("" when none is known)
    run: str  # a regex for a run of characters every match holds ("" when none is known)
    word: int  # how long that run is when it holds no white space (0 otherwise)


@cache
def regex(pattern: str, flags: int) -> re.Pattern[str]:
    """A table regex (a pattern or a run), compiled once per process."""
    # Kept here, not in `re`'s cache: that holds 512, and a `bank index` from nothing compiles
    # thousands of trigger regexes between two lessons' checks, so every check compiled them again.
    return re.compile(pattern, flags)


# detect-secrets plugin class -> our kind name (the rest keep the library's own name, lower-cased).
_KINDS = {
    "AWSKeyDetector": "aws access key", "GitHubTokenDetector": "github token",
    "GitLabTokenDetector": "gitlab token", "SlackDetector": "slack token", "StripeDetector": "stripe key",
    "SendGridDetector": "sendgrid key", "PypiTokenDetector": "pypi token", "TwilioKeyDetector": "twilio key",
    "AzureStorageKeyDetector": "azure storage key", "JwtTokenDetector": "jwt", "NpmDetector": "npm token",
    "MailchimpDetector": "mailchimp key", "TelegramBotTokenDetector": "telegram bot token",
    "DiscordBotTokenDetector": "discord token", "BasicAuthDetector": "password in url",
    "PrivateKeyDetector": "private key", "OpenAIDetector": "openai key", "SquareOAuthDetector": "square token",
    "ArtifactoryDetector": "artifactory token", "CloudantDetector": "cloudant key",
    "IbmCloudIamDetector": "ibm cloud key", "IbmCosHmacDetector": "ibm cos key", "SoftlayerDetector": "softlayer key",
}  # fmt: skip
# Left out: the high-entropy detectors (they flag commit hashes, digests and UUIDs: 39 of our 40
# look-alikes), the public-IP one (not a secret), and the keyword detector, whose regexes take
# 0.5 s on one 1,000-character line and minutes on 30 KB (our own assignment rule covers it).
_LEFT_OUT = {"Base64HighEntropyString", "HexHighEntropyString", "IPPublicDetector", "KeywordDetector"}

# The table, kept in the user's cache folder: importing the plugins (their modules compile
# every regex) and finding each regex's literal take 30-80 ms, most of the secrets gate of a capture.
# It is keyed by the plugin folder (path, mtime) and by this module's and the
# regex compiler's own files (path, mtime, size: they work out each regex's literal hint, and a
# wrong hint would skip a regex), so a new detect-secrets or a new lessonbank works it out again.
LIBRARY_CACHE = "detect-secrets-regexes.marshal"
_LIBRARY_FORMAT = 2


@cache
def table() -> list[Entry]:
    """detect-secrets' provider regexes as `Entry`s: each compiled (`regex`) only when a text holds
    its hint and its run.

    detect-secrets is imported on first use, so that commands which never redact do not pay for it; read from the
    user's cache when it was worked out before. The hint is the longest literal every match of
    the pattern must contain, lower-cased ("" when there is none): a text without it cannot match,
    so the pattern is not run on it (the scan redacts thousands of short texts, and most hold no
    secret at all). The run (regex_compiler.required_run) is a regex for a run of characters every
    match holds, such as the 44 characters of an IBM key ("" when none is known): the same, for
    patterns whose literals are not all written out. `word`: how long that run is when it holds no
    white space (0 otherwise), so a text whose words are all shorter is passed over unsearched.
    """
    path = userdirs.user_cache(LIBRARY_CACHE)
    key = _key() if path is not None else None
    if key is not None and path is not None:
        try:
            with open(path, "rb") as handle:
                stored = marshal.load(handle)
            if isinstance(stored, tuple) and len(stored) == 2 and stored[0] == key:
                return [Entry(*entry) for entry in stored[1]]
        except (OSError, ValueError, EOFError, TypeError):
            pass
    with _requests_deferred():  # the plugin modules are imported by the call, not the import
        from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class

        classes: list[Any] = list(get_mapping_from_secret_type_to_class().values())
    from lessonbank.matching import regex_compiler  # here: a table read back needs no compiler

    regexes: list[Entry] = []
    spaces = [c for c in map(chr, range(0x3100)) if c.isspace()]  # what str.split cuts at (none past U+3000)
    for cls in sorted(classes, key=lambda c: c.__name__):
        if cls.__name__ in _LEFT_OUT:
            continue
        kind = _KINDS.get(cls.__name__, str(cls.secret_type).lower())
        for rx in getattr(cls, "denylist", ()):
            chars, count = regex_compiler.required_run(rx.pattern, rx.flags)
            run = f"[{chars}]{{{count}}}" if count else ""
            spaced = not count or any(re.fullmatch(f"[{chars}]", c, rx.flags) for c in spaces)
            regexes.append(Entry(kind, rx.pattern, rx.flags, _required_literal(rx), run, 0 if spaced else count))
    if key is not None and path is not None:
        with contextlib.suppress(OSError, ValueError):  # only speed is lost
            statedir.write_atomic(path, marshal.dumps((key, tuple(map(tuple, regexes)))))
    return regexes


def _key() -> tuple | None:
    """What the table depends on: the plugin folder (its path and mtime: a new version
    replaces its files) and this module's choices; None when detect-secrets is not found."""
    import importlib.util

    try:
        spec = importlib.util.find_spec("detect_secrets")
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    folder = list(spec.submodule_search_locations)[0] + "/plugins"
    try:
        mtime = os.stat(folder).st_mtime_ns
    except OSError:
        return None
    try:
        # regex_compiler is not imported here: a cache hit needs no compiler
        compiler = os.path.dirname(os.path.dirname(statedir.__file__)) + "/matching/regex_compiler.py"
        own = tuple((f, os.stat(f).st_mtime_ns, os.stat(f).st_size) for f in (__file__, compiler))
    except OSError:
        return None
    return (_LIBRARY_FORMAT, folder, mtime, own)  # `own` covers this module's tables (_LEFT_OUT, _KINDS) too


@contextlib.contextmanager
def _requests_deferred() -> Iterator[None]:
    """While detect-secrets loads its plugins, `import requests` gives a stand-in (PEP 562
    `__getattr__`) that imports the real package on first use after that.

    The plugins import requests only to verify a secret online, which this module never asks
    for; importing it (urllib3, charset_normalizer, idna, http.cookiejar) was most of
    `bank capture`'s start-up. While loading, an attribute is wanted only by a return annotation
    (`-> requests.Response`, evaluated when the function is defined): it gets a placeholder class.
    """
    if "requests" in sys.modules:
        yield
        return
    import importlib
    import types

    stand_in = types.ModuleType("requests")
    loading = True

    def attribute(name: str) -> Any:
        if loading:
            return type(name, (), {"__module__": "requests"})
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]
        return getattr(importlib.import_module("requests"), name)

    stand_in.__getattr__ = attribute  # type: ignore[method-assign]
    sys.modules["requests"] = stand_in
    try:
        yield
    finally:
        loading = False
        if sys.modules.get("requests") is stand_in:
            del sys.modules["requests"]


def _required_literal(rx: re.Pattern[str]) -> str:
    """The longest literal every match of `rx` contains, lower-cased; "" when none is known."""
    from lessonbank.matching import regex_compiler

    try:
        _, runs = regex_compiler.compile_pattern(rx.pattern)
    except Exception:  # a construct the compiler does not read: always run the pattern
        return ""
    return max(runs, key=len).lower() if runs else ""
