"""Secrets kept out of what the hooks write (checks.jsonl, pending blocks, hook.log): standard library only.

The hooks cannot load the capture gate (`bank.secrets`: `re` and detect-secrets cost more than a
whole hook call), so they scrub with a word-by-word pass over the text: the value after a
secret-named flag or assignment (`--password x`, `DB_TOKEN=x`, `-passin pass:x`), the password
argument of CLIs whose flag names no secret (`sshpass -p`, `redis-cli -a`, `docker login -p`,
`mysql -px`, `htpasswd -b f user x`), a URL's password, the token after `Bearer`, a password
given in prose ("the password is x"), and any word carrying a known credential prefix. A value
that only names where a secret is (`$VAR`, `${VAR}`) is kept. `bank capture` runs the full gate
on anything that becomes a lesson.
"""

MARK = "[REDACTED]"
_NAMES = ("pass", "pwd", "secret", "token", "apikey", "api_key", "api-key", "credential", "auth", "private_key")
_FLAGS = frozenset(
    "--password --passwd --pass --passphrase --token --secret --api-key --apikey --auth-token --access-token "
    "-passin -passout -storepass -keypass -srcstorepass -deststorepass".split()
)
# The CLIs whose -p / -a takes a password, and the flag.
_CLI_FLAGS = {"sshpass": "-p", "redis-cli": "-a", "valkey-cli": "-a", "keydb-cli": "-a", "login": "-p"}
_PREFIXES = (
    "ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_", "glpat-", "sk-", "sk_live_", "rk_live_", "xoxb-",
    "xoxp-", "xoxa-", "AKIA", "ASIA", "hf_", "npm_", "dckr_pat_", "pypi-", "eyJ", "AIza", "GOCSPX-", "SG.",
    "dop_v1_", "doo_v1_", "shpat_", "glsa_", "sbp_", "ntn_", "whsec_", "xapp-", "dp.st.", "lin_api_", "PMAK-",
    "LTAI", "AGE-SECRET-KEY-", "sk_test_", "rk_test_", "https://hooks.slack.com/", "https://discord.com/api/webhooks/",
    "https://discordapp.com/api/webhooks/",
)  # fmt: skip


def _reference(value: str) -> bool:
    """Does this value only name where a secret is, or hold none (a placeholder, a mask, a word)?"""
    value = value.strip("\"'`(),;")
    if len(value) < 6 or value[0] in "$%<{[" or value.startswith(("pass:$", "env:", "file:", "fd:", "stdin")):
        return True
    low = value.lower()
    if "your" in low or "here" in low or "example" in low or all(c in "*xX.\u2022-_#?" for c in value):
        return True
    if "(" in value or "[" in value:
        return True  # a call or a lookup: os.environ['TOKEN'], secrets.token_hex(32)
    if value.isalpha() and (value.islower() or _secret_name(value)):
        return True  # a word: "the password is required", password=password
    dotted = value.replace(".", "").replace("_", "")
    return "." in value and dotted.isalpha()  # settings.API_TOKEN


def _secret_name(name: str) -> bool:
    low = name.strip("\"'`").lower()
    return any(part in low for part in _NAMES) and "tokeniz" not in low


def _word(word: str) -> str:
    """One word with a secret it holds replaced: `NAME=value`, `--flag=value`, a URL password, a prefix."""
    name, sep, value = word.partition("=")
    if sep and value and not _reference(value) and (_secret_name(name) or name in _FLAGS):
        return name + sep + MARK
    at = word.find("://")
    if at >= 0:
        rest = word[at + 3 :]
        creds, found, host = rest.partition("@")
        user, colon, password = creds.partition(":")
        if found and colon and "/" not in creds and not _reference(password):
            return word[: at + 3] + user + ":" + MARK + "@" + host
    bare = word.strip("\"'`(),;.:")
    if len(bare) >= 20 and any(bare.startswith(p) or ("=" + p) in bare for p in _PREFIXES):
        return word.replace(bare, MARK)
    return word


def scrub(text: str) -> str:
    """`text` with every secret this pass recognises replaced by [REDACTED] (lines and spacing kept)."""
    if not text:
        return text
    out = []
    block = False
    for line in text.split("\n"):
        if "PRIVATE KEY" in line and "-----BEGIN" in line:
            block = True
        if block:
            out.append(MARK if line.strip() and "-----" not in line else line)
            block = "-----END" not in line
            continue
        out.append(_line(line))
    return "\n".join(out)


_SCHEMES = frozenset(("basic", "bearer", "token", "digest", "ssws", "apikey"))


def _line(line: str) -> str:
    words = line.split(" ")
    bare = [w.strip("\"'`").lower() for w in words]
    cli = {_CLI_FLAGS[w] for w in bare if w in _CLI_FLAGS}
    if "curl" in bare or "wget" in bare:
        cli |= {"-u", "--user"}
    out = []
    hide_next = False
    for n, word in enumerate(words):
        low = bare[n]
        if hide_next and word and low not in _SCHEMES:
            hidden = word.partition(":")[2] if bare[n - 1] in ("-u", "--user") else word
            if not _reference(hidden):
                out.append(word.replace(hidden.strip("\"'`(),;"), MARK))
                hide_next = False
                continue
        if word and low not in _SCHEMES:
            hide_next = False
        out.append(_word(word))
        if low in _FLAGS or low in cli or low in _SCHEMES or low in ("authorization:", "x-auth-token:") or low.endswith(":") and _secret_name(low[:-1]) or low in ("=", ":") and n and _secret_name(bare[n - 1]):
            hide_next = True
        elif low.startswith("-p") and len(low) > 2 and "mysql" in " ".join(bare[:n]):
            out[-1] = word[:2] + MARK
        elif low in ("is", "was", "is:", "was:") and n and bare[n - 1] in ("password", "passphrase", "passwd"):
            hide_next = True
        elif low == "htpasswd" and n + 4 < len(words) and "b" in bare[n + 1]:
            words[n + 4] = MARK if not _reference(words[n + 4]) else words[n + 4]
    return " ".join(out)
