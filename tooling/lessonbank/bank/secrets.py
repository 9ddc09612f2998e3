"""Secret detection for everything that enters the bank: detect-secrets' detectors plus the formats it misses.

Two sources of findings, merged: the provider regexes of Yelp's detect-secrets (AWS, GitHub, GitLab,
Slack, Stripe, SendGrid, PyPI, Twilio, Azure storage, JWT, npm, Mailchimp, Telegram, Discord,
Artifactory, Cloudant, IBM, Softlayer, basic auth in URLs), run on overlapping windows because some of
them backtrack quadratically; its high-entropy and keyword detectors are left out (bank.secret_library).
And this module's own patterns, for the shapes it does not know or finds only in part (fine-grained
GitHub tokens, Hugging Face, Databricks, DigitalOcean, Docker Hub, OpenAI and Anthropic keys, GCP key
ids and OAuth secrets, Azure AD secrets and SAS signatures, Django keys, `Authorization:` headers,
passwords of any length after a secret-sounding name, private key blocks, …), each skipped when the
text holds none of its literals (`_HINTS`).

A value that only names where a secret is kept stays: `$VAR`, `${VAR}`, `$(cmd)`, `%VAR%`,
`${{ secrets.X }}`, `<placeholder>`, `os.environ[...]`, `settings.X`, masked `****`, and prose such as
"the secret: run the migrations". Only the CLI loads this module (capture, scan); the hooks never do.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

from lessonbank.bank import secret_library

MARKER = "[REDACTED:{kind}]"

# A name that says it holds a secret ends in one of these: DB_PASSWORD, PGPASSWORD, stripe.webhook_secret,
# X-Auth-Token. The short ones only as a whole part of the name (not "compass", "oauth").
_SECRET_NAME = (
    r"(?:pass(?:word|wd|phrase)|pwd|secret|token|api[_.-]?key|apikey|access[_.-]?key(?:[_.-]?id)?"
    r"|(?:secret|private|account|master|signing|encryption|license)[_.-]?key|credentials?"
    r"|(?<![A-Za-z0-9])(?:pass|pw|auth|pat|dsn))"
)
_SECRET_FIRST = "pstamelcd"  # the letters _SECRET_NAME's words begin with (a test checks it)
_VALUE = r"(?P<v>[^\s\"'`,;]+)"

# (kind, pattern). A pattern's group `v`, when it has one, is the secret; otherwise the whole match.
# Multi-line shapes (key blocks) come first: they are matched on the whole text.
# fmt: off
_OWN: list[tuple[str, str]] = [
    ("private key", r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----.*?(?:-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("private key", r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC: *\S+|\Z)"),
    ("age secret key", r"\bAGE-SECRET-KEY-1[0-9A-Z]{58}\b"),
    ("anthropic key", r"\bsk-ant-[\w-]{16,}"),
    ("openai key", r"\bsk-(?:proj-|svcacct-|admin-|None-)?[A-Za-z0-9_-]{20,}"),
    ("aws access key", r"\b(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[0-9A-Z]{16}\b"),
    ("github token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("gitlab token", r"\bgl(?:pat|dt|ft|rt|ptt|cbt|imt|oas|soat|agent)-[\w-]{20,}"),
    ("slack token", r"\bxox[abposre]-[\w-]{10,}|\bxapp-\d-[\w-]{10,}"),
    ("slack webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[\w/+-]{20,}"),
    ("stripe key", r"\b(?:[sr]k|pk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}"),
    ("google api key", r"\bAIza[\w-]{35}"),
    ("google oauth secret", r"\bGOCSPX-[\w-]{24,}|\bya29\.[\w-]{20,}"),
    ("gcp private key id", r"(?i)[\"']?private_key_id[\"']?\s*[:=]\s*[\"']?(?P<v>[0-9a-f]{40})\b"),
    ("azure storage key", r"(?i)\b(?:Account|SharedAccess)Key\s*=\s*(?P<v>[A-Za-z0-9+/]{20,}={0,2})"),
    ("azure sas signature", r"[?&]sig=(?P<v>[\w%+/=-]{20,})"),
    ("azure ad secret", r"(?<![\w~.-])[\w~.-]{3}\dQ~[\w~.-]{31,34}(?![\w~.-])"),
    ("sendgrid key", r"\bSG\.[\w-]{16,32}\.[\w-]{16,64}"),
    ("pypi token", r"\bpypi-[A-Za-z0-9_-]{50,}"),
    ("hugging face token", r"\bhf_[A-Za-z0-9]{30,}\b"),
    ("databricks token", r"\bdapi[0-9a-f]{32}(?:-\d+)?\b"),
    ("twilio key", r"\b(?:AC|SK)[0-9a-f]{32}\b"),
    ("django secret key", r"\bdjango-insecure-[^\s\"'`]+"),
    ("digitalocean token", r"\bdo[opr]_v1_[0-9a-f]{64}\b"),
    ("docker hub token", r"\bdckr_pat_[\w-]{20,}"),
    ("npm token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("jwt", r"\beyJ[\w-]{8,}\.eyJ[\w-]{8,}\.[\w-]{8,}"),
    ("mailchimp key", r"\b[0-9a-f]{32}-us\d{1,2}\b"),
    ("mailgun key", r"\bkey-[0-9a-f]{32}\b"),
    ("shopify token", r"\bshp(?:at|ss|ca|pa)_[0-9a-fA-F]{32}\b"),
    ("square token", r"\bsq0(?:atp|csp)-[\w-]{22,}|\bEAAA[\w-]{60}"),
    ("discord webhook", r"https://(?:ptb\.|canary\.)?discord(?:app)?\.com/api/webhooks/\d+/(?P<v>[\w-]{20,})"),
    ("telegram bot token", r"(?<!\d)\d{8,10}:AA[\w-]{33}(?![\w-])"),
    ("atlassian token", r"\bATATT3[\w=-]{60,}"),
    ("vault token", r"\bhv[sbr]\.[\w-]{24,}"),
    ("terraform token", r"\b[A-Za-z0-9]{14}\.atlasv1\.[\w=-]{60,}"),
    ("doppler token", r"\bdp\.(?:st|sa|ct|pt|scim|audit)\.(?:[\w-]+\.)?[A-Za-z0-9]{40,}"),
    ("linear key", r"\blin_(?:api|oauth)_[A-Za-z0-9]{40}\b"),
    ("grafana token", r"\bgl(?:sa|c)_[\w=+/-]{32,}"),
    ("new relic key", r"\bNR(?:AK|AA|II|JS|RA)-[A-Z0-9]{27}\b"),
    ("postman key", r"\bPMAK-[0-9a-f]{24}-[0-9a-f]{34}\b"),
    ("alibaba key", r"\bLTAI[A-Za-z0-9]{12,20}\b"),
    ("pulumi token", r"\bpul-[0-9a-f]{40}\b"),
    ("supabase token", r"\bsbp_[0-9a-f]{40}\b"),
    ("sentry token", r"\bsntr[ysu]_[\w=+/-]{40,}"),
    ("notion token", r"\bntn_[A-Za-z0-9]{40,}|\bsecret_[A-Za-z0-9]{43}\b"),
    ("planetscale token", r"\bpscale_(?:tkn|pw|oauth)_[\w.-]{32,}"),
    ("fly token", r"\bfo1_[\w-]{40,}"),
    ("render key", r"\brnd_[A-Za-z0-9]{32}\b"),
    ("password in url", r"(?<=://)[^/\s:@]*:(?!//)(?P<p>[^/\s@]+)(?=@)"),
    ("authorization header", r"(?i)\bauthorization\s*[:=]\s*[\"']?(?:basic|bearer|token|ssws|digest|apikey)\s+(?P<v>[^\s\"'`,;]+)"),
    ("bearer token", r"(?i)(?<=\bbearer )(?P<v>[\w~+/.-]{16,}=*)"),
    ("okta token", r"\bSSWS\s+(?P<v>[\w-]{20,})"),
    ("mysql password", r"\bmysql(?:dump|admin)?\b[^\n|;&]{0,200}?\s-p(?P<v>[^\s-][^\s]*)"),
    ("password option", r"(?<![\w-])--?(?:password|passwd|pass|passphrase|token|api-key|secret)[= ](?P<v>[^\s\"'-][^\s\"']*)"),
    # Password arguments of common CLIs whose flag names no secret: redis-cli -a, sshpass -p, docker
    # login -p, htpasswd -b <file> <user> <password>, mysql-style -p<password> is above.
    ("cli password", r"\b(?:redis-cli|valkey-cli|keydb-cli)\b[^\n|;&]{0,200}?\s(?:-a|--pass)\s+[\"']?(?P<v>[^\s\"'-][^\s\"']*)"),
    ("cli password", r"\bsshpass\b[^\n|;&]{0,50}?\s-p\s*[\"']?(?P<v>[^\s\"'-][^\s\"']*)"),
    ("cli password", r"\b(?:docker|podman|nerdctl|helm)\s+(?:registry\s+)?login\b[^\n|;&]{0,200}?\s-p\s+[\"']?(?P<v>[^\s\"'-][^\s\"']*)"),
    ("cli password", r"\bhtpasswd\s+(?:-[a-zA-Z]*b[a-zA-Z]*\s+)(?:-\S+\s+)*(?:\S+\s+){2}[\"']?(?P<v>[^\s\"'-][^\s\"']*)"),
    ("cli password", r"\b(?:openssl|pkcs12|keytool)\b[^\n|;&]{0,200}?\s-(?:passin|passout|storepass|keypass|srcstorepass|deststorepass)\s+(?:pass:)?(?!(?:env|file|fd):|stdin\b)(?P<v>[^\s\"'-][^\s\"']*)"),
    # Prose that gives a password away: "the root password is Tr0ub4dor3", "passphrase was: x9!k…".
    ("password in prose", r"(?i)\b(?:password|passphrase|passwd|pin code)\s+(?:is|was|will be|=)\s*:?\s+[\"'`]?(?P<v>[^\s\"'`,;]{6,})"),
    ("user password", r"\b(?:curl|wget|http)\b[^\n|;&]{0,200}?\s(?:-u|--user)\s+[\"']?[^\s:\"']+:(?P<v>[^\s\"']+)"),
    # Matched from the name's last part (the whole name is read backwards in `_name`): linear time.
    # The look-ahead (the first letters of _SECRET_NAME's words) lets the engine pass over every
    # other position without trying each word: a third of the time, the same matches.
    ("secret assignment", rf"(?i)(?=[{_SECRET_FIRST}])(?P<kw>{_SECRET_NAME})[\"'\]]?\s*(?::=|=>|[:=])\s*[\"'`]?{_VALUE}"),
]
# fmt: on

# Assignment-like kinds whose value may be a reference or placeholder rather than a secret.
_VALUE_KINDS = {
    "secret assignment", "password option", "user password", "mysql password", "authorization header",
    "bearer token", "okta token", "password in url", "cli password", "password in prose",
}  # fmt: skip
# Kinds whose value is a token by position (after `Bearer`): a dotted value there is a token with
# a dot in it (`abc.def123…`), not a reference such as `settings.TOKEN`.
_TOKEN_KINDS = {"authorization header", "bearer token", "okta token"}
# A base64 run long enough to hide a `KEY=value` line (`echo REJfUEFTU1dPUkQ9… | base64 -d`).
_BASE64 = re.compile(r"(?<![\w+/=])[A-Za-z0-9+/]{16,}={0,2}(?![\w+/=])")
_REFERENCE = re.compile(
    r"""^(?:
        \$.*                                  # $VAR ${VAR} $(cmd) $$VAR ${{ secrets.X }}
        |%[\w.-]+%                            # %VAR%
        |\{\{.*|\{%.*|\{[\w.-]*\}?            # {{ jinja }} {name}
        |<[^>]*>?|\[[^\]]*\]?                 # <placeholder> [REDACTED:...] [name]
        |\*+|x+|X+|\.+|•+|-+|_+|\#+|\?+       # masked
        |(?:true|false|null|none|nil|yes|no|on|off|required|optional|empty|unset|string|str|int)
        |[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+(?:\(.*|\[.*)?     # settings.SECRET_KEY  getpass.getpass()
        |[A-Za-z_]\w*[(\[].*                  # getpass()  environ['X']
    )$""",
    re.X | re.I,
)
_PLACEHOLDER = re.compile(r"(?i)\byour[_-]|[_-]here\b|^(?:example|placeholder|dummy|fake|sample)\b|\bREDACTED\b")
_ENV_NAME = re.compile(r"[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+")  # DB_PASSWORD: names a variable, holds no value


@dataclass(frozen=True)
class Found:
    """One secret: where it is in the text and what kind it is."""

    start: int
    end: int
    kind: str


# Literals (lower case) one of which a kind's text must hold: a pattern whose literals are all absent is
# not run. Kinds not named here always run.
_HINTS: dict[str, tuple[str, ...]] = {
    "private key": ("private key", "putty-user-key"), "age secret key": ("age-secret-key",), "anthropic key": ("sk-ant",),
    "openai key": ("sk-",), "aws access key": ("akia", "asia", "abia", "acca", "a3t"), "github token": ("gh", "github_pat"),
    "gitlab token": ("gl",), "slack token": ("xox", "xapp"), "slack webhook": ("hooks.slack",),
    "stripe key": ("k_live", "k_test", "whsec_"), "google api key": ("aiza",), "google oauth secret": ("gocspx", "ya29"),
    "gcp private key id": ("private_key_id",), "azure storage key": ("accountkey", "sharedaccesskey"),
    "azure sas signature": ("sig=",), "azure ad secret": ("q~",), "sendgrid key": ("sg.",), "pypi token": ("pypi-",),
    "hugging face token": ("hf_",), "databricks token": ("dapi",), "twilio key": ("ac", "sk"),
    "django secret key": ("django-insecure",), "digitalocean token": ("_v1_",), "docker hub token": ("dckr_pat",),
    "npm token": ("npm_",), "jwt": ("eyj",), "mailchimp key": ("-us",), "mailgun key": ("key-",),
    "shopify token": ("shp",), "square token": ("sq0", "eaaa"), "discord webhook": ("discord",),
    "telegram bot token": (":aa",), "atlassian token": ("atatt3",), "vault token": ("hvs.", "hvb.", "hvr."),
    "terraform token": ("atlasv1",), "doppler token": ("dp.",), "linear key": ("lin_",), "grafana token": ("glsa_", "glc_"),
    "new relic key": ("nrak-", "nraa-", "nrii-", "nrjs-", "nrra-"), "postman key": ("pmak-",), "alibaba key": ("ltai",),
    "pulumi token": ("pul-",), "supabase token": ("sbp_",), "sentry token": ("sntr",), "notion token": ("ntn_", "secret_"),
    "planetscale token": ("pscale_",), "fly token": ("fo1_",), "render key": ("rnd_",), "password in url": ("://",),
    "authorization header": ("authorization",), "bearer token": ("bearer",), "okta token": ("ssws",),
    "mysql password": ("mysql",), "user password": ("-u",), "password option": ("-pass", "-token", "-api-key", "-secret"),
    "cli password": ("redis-cli", "valkey-cli", "keydb-cli", "sshpass", "login", "htpasswd", "openssl", "pkcs12", "keytool"),
    "password in prose": ("password", "passphrase", "passwd", "pin code"),
    "secret assignment": ("pass", "pwd", "pw", "secret", "token", "key", "auth", "credential", "pat", "dsn"),
}  # fmt: skip


# `_OWN` with its hints, each compiled on first use: a capture's texts hold the hints of a handful.
_OWN_KINDS = [(at, kind, _HINTS.get(kind, ())) for at, (kind, _) in enumerate(_OWN)]


@cache
def _own_pattern(at: int) -> re.Pattern[str]:
    _kind, pattern = _OWN[at]
    return re.compile(pattern, re.S)


# Some of the library's regexes backtrack quadratically (OpenAI's, npm's, the JWT one): they run on
# windows of the text, which overlap by more than any such secret is long.
WINDOW, OVERLAP = 512, 192


def _windows(text: str) -> Iterator[tuple[int, str]]:
    """(offset, piece) covering `text` in overlapping windows."""
    if len(text) <= WINDOW:
        yield 0, text
        return
    for at in range(0, len(text) - OVERLAP, WINDOW - OVERLAP):
        yield at, text[at : at + WINDOW]


def _span(m: re.Match[str]) -> tuple[int, int]:
    """The secret in a match: group `v`, else the longest group of 8 or more characters, else the whole."""
    if "v" in m.re.groupindex and m.group("v") is not None:
        return m.span("v")
    best = max(
        (m.span(i) for i in range(1, (m.re.groups or 0) + 1) if m.group(i) is not None),
        key=lambda s: s[1] - s[0],
        default=None,
    )
    if best is not None and best[1] - best[0] >= 8:
        return best
    return m.span()


def _name(text: str, at: int) -> tuple[int, str] | None:
    """Where the name ending at `at` starts; None when it is itself a reference (`${TOKEN:-x}`)."""
    start = at
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_.-"):
        start -= 1
    if start > 0 and text[start - 1] in "$%{":
        return None
    return start, text[start:at]


def _kept(text: str, start: int, end: int, m: re.Match[str] | None, kind: str = "") -> bool:
    """Is this assignment-like value a reference, a placeholder or prose rather than a secret?"""
    value = text[start:end].strip("\"'`").rstrip(")]}.,:;!?")
    if len(value) < 3 or _PLACEHOLDER.search(value) or _ENV_NAME.fullmatch(value):
        return True
    if _REFERENCE.match(value) and not (kind in _TOKEN_KINDS and "." in value and any(c.isdigit() for c in value)):
        return True
    if kind == "password in prose" and all(c.isalnum() and not c.isdigit() for c in value):
        return True  # "the password is required", "the passphrase was rotated": words, not a password
    if re.fullmatch(_SECRET_NAME, value, re.I):  # password=password, token=token: a variable passed on
        return True
    after = text[end : end + 1]
    if after in ("(", "["):  # a call or a lookup: connect(password=get_password())
        return True
    if m is not None and "kw" in m.re.groupindex:
        named = _name(text, m.start())
        if named is None:
            return True
        name_start, name = named[0], named[1] + m.group("kw")
        if value.lower() == name.lower():
            return True  # DB_PASSWORD=DB_PASSWORD
        before = text[max(0, name_start - 5) : name_start].lower()
        if re.search(r"\b(?:the|a|an|your|our|no)\s+$", before) and value.isalpha():
            return True
    # Prose: "the secret: run the migrations first" — a colon, a plain word, more words.
    colon = re.search(r":[ \t]+[\"']?$", text[max(0, start - 4) : start])
    return bool(colon and value.isalpha() and value.islower() and re.match(r" +[a-z]", text[end : end + 3]))


def find(text: str) -> list[Found]:
    """Every secret in `text`, as non-overlapping spans in order."""
    spans: list[Found] = []
    lower = text.lower()
    for at, kind, hints in _OWN_KINDS:
        if hints and not any(h in lower for h in hints):
            continue
        for m in _own_pattern(at).finditer(text):
            start, end = _span(m)
            if kind == "password in url":  # user and password go, unless the password is a reference
                if _kept(text, *m.span("p"), None):
                    continue
                start, end = m.span()
            elif end <= start or (kind in _VALUE_KINDS and _kept(text, start, end, m, kind)):
                continue
            spans.append(Found(start, end, kind))
    spans.extend(_encoded(text))
    # A window is part of the text: a pattern whose run is not in the text matches in none of them.
    longest = max(map(len, text.split()), default=0)  # cut where secret_library's spaces are
    regexes = [
        e for e in secret_library.table()
        if (not e.hint or e.hint in lower) and (not e.run or (e.word <= longest and secret_library.regex(e.run, e.flags).search(text)))
    ]  # fmt: skip
    for offset, piece in _windows(text) if regexes else ():
        low = piece.lower()
        for entry in regexes:
            if entry.hint and entry.hint not in low:
                continue
            for m in secret_library.regex(entry.pattern, entry.flags).finditer(piece):
                start, end = _span(m)
                # Library matches stop at white space (npm's pattern runs to the end of the line).
                cut = re.search(r"[\s\"'`]", piece[start:end])
                end = start + cut.start() if cut and cut.start() > 0 else end
                if end <= start or (entry.kind == "password in url" and _kept(piece, start, end, None)):
                    continue
                spans.append(Found(offset + start, offset + end, entry.kind))
    return _merge(spans)


def _encoded(text: str) -> list[Found]:
    """Base64 runs that decode to text holding a secret (a `.env` line piped through base64)."""
    out = []
    for m in _BASE64.finditer(text):
        try:
            decoded = base64.b64decode(m.group(0) + "=" * (-len(m.group(0)) % 4), validate=True).decode("ascii")
        except (ValueError, UnicodeDecodeError):
            continue
        if decoded.isprintable() or all(c.isprintable() or c in "\n\r\t" for c in decoded):
            inner = find(decoded)
            if inner:
                out.append(Found(m.start(), m.end(), f"base64 {inner[0].kind}"))
    return out


def _merge(spans: list[Found]) -> list[Found]:
    """Overlapping spans joined; the joined span takes the kind of its longest part."""
    out: list[Found] = []
    longest: list[int] = []
    for f in sorted(spans, key=lambda s: (s.start, -s.end)):
        if out and f.start < out[-1].end:
            last = out[-1]
            kind = f.kind if f.end - f.start > longest[-1] else last.kind
            longest[-1] = max(longest[-1], f.end - f.start)
            out[-1] = Found(last.start, max(last.end, f.end), kind)
        else:
            out.append(f)
            longest.append(f.end - f.start)
    return out


def redact_secrets(text: str, marker: str = MARKER) -> tuple[str, dict[str, int]]:
    """`text` with every secret replaced by `[REDACTED:kind]`, and how many of each kind."""
    counts: dict[str, int] = {}
    if not text:
        return text, counts
    parts: list[str] = []
    at = 0
    for f in find(text):
        parts.append(text[at : f.start])
        parts.append(marker.format(kind=f.kind))
        counts[f.kind] = counts.get(f.kind, 0) + 1
        at = f.end
    parts.append(text[at:])
    return "".join(parts), counts
