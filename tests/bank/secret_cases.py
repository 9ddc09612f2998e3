"""Generated credentials in each provider's published shape, and look-alikes that are not secrets.

Every value is FAKE: built at import time from a seeded random generator and split prefixes, so the
repository holds no string that a secret scanner would take for a credential. A case is
(name, lesson text, the random parts that must not survive redaction).
"""

from __future__ import annotations

import base64
import random
import string

_RNG = random.Random(20261130)
UP = string.ascii_uppercase
LOW = string.ascii_lowercase
DIG = string.digits
HEX = "0123456789abcdef"
ALNUM = UP + LOW + DIG
B64 = ALNUM + "+/"
URLSAFE = ALNUM + "-_"


def r(n: int, alphabet: str = ALNUM) -> str:
    """n random characters of `alphabet` (always at least one letter and one digit when both exist)."""
    while True:
        out = "".join(_RNG.choice(alphabet) for _ in range(n))
        letters = any(c.isalpha() for c in alphabet)
        digits = any(c.isdigit() for c in alphabet)
        if n < 6 or (
            (not letters or any(c.isalpha() for c in out)) and (not digits or any(c.isdigit() for c in out))
        ):
            return out


def j(*parts: str) -> str:
    """Parts joined: keeps prefixes split in the source."""
    return "".join(parts)


def _b64(nbytes: int) -> str:
    return base64.b64encode(bytes(_RNG.randrange(256) for _ in range(nbytes))).decode()


def _b64url(nbytes: int) -> str:
    return base64.urlsafe_b64encode(bytes(_RNG.randrange(256) for _ in range(nbytes))).decode().rstrip("=")


def _pem(kind: str, body_lines: int = 4) -> tuple[str, str]:
    body = "\n".join(_b64(48) for _ in range(body_lines))
    dashes = "-" * 5
    return f"{dashes}BEGIN {kind}{dashes}\n{body}\n{dashes}END {kind}{dashes}", body.splitlines()[1]


def _jwt() -> tuple[str, str]:
    head = base64.urlsafe_b64encode(b'{"alg":"HS256","typ":"JWT"}').decode().rstrip("=")
    claims = (
        base64.urlsafe_b64encode(f'{{"sub":"{r(10, DIG)}","name":"{r(8, LOW)}"}}'.encode())
        .decode()
        .rstrip("=")
    )
    sig = _b64url(32)
    return f"{head}.{claims}.{sig}", sig


def _cases() -> list[tuple[str, str, tuple[str, ...]]]:
    c: list[tuple[str, str, tuple[str, ...]]] = []

    def add(name: str, text: str, *secrets: str) -> None:
        c.append((name, text, secrets))

    v = r(16, UP + DIG)
    add("aws access key id", f"the deploy used {j('AK', 'IA')}{v} from the CI vars", v)
    v = r(16, UP + DIG)
    add("aws temporary key id", f"aws_access_key_id = {j('AS', 'IA')}{v}", v)
    v = r(40, B64)
    add("aws secret access key", f"export AWS_SECRET_ACCESS_KEY={v}", v)
    v = r(40, B64)
    add("aws secret in credentials file", f"[default]\naws_secret_access_key = {v}", v)
    v = r(36)
    add("github classic token", f"git clone https://{j('gh', 'p_')}{v}@github.com/org/repo", v)
    v = r(36)
    add("github oauth token", f"GH_TOKEN={j('gh', 'o_')}{v} gh pr list", v)
    v = r(36)
    add("github app token", f"the installation token {j('gh', 's_')}{v} expired", v)
    v = r(36)
    add("github user-to-server token", f"token {j('gh', 'u_')}{v}", v)
    v1, v2 = r(22), r(59, ALNUM + "_")
    add("github fine-grained token", f"use {j('github', '_pat_')}{v1}_{v2} for the API", v1, v2)
    v = r(20, URLSAFE)
    add(
        "gitlab personal token",
        f"curl --header 'PRIVATE-TOKEN: {j('gl', 'pat-')}{v}' https://gitlab.com/api/v4",
        v,
    )
    v = r(24)
    add("slack bot token", f"SLACK_BOT_TOKEN={j('xo', 'xb-')}{r(11, DIG)}-{r(12, DIG)}-{v}", v)
    v = r(32, HEX)
    add("slack user token", f"the old {j('xo', 'xp-')}{r(11, DIG)}-{r(11, DIG)}-{r(12, DIG)}-{v} token", v)
    v = r(24)
    add(
        "slack webhook",
        f"post to https://hooks.slack.com/services/T{r(8, UP + DIG)}/B{r(10, UP + DIG)}/{v}",
        v,
    )
    v = r(24)
    add("stripe live secret key", f"STRIPE_KEY={j('sk', '_live_')}{v}", v)
    v = r(24)
    add("stripe test secret key", f"use {j('sk', '_test_')}{v} in the sandbox", v)
    v = r(24)
    add("stripe restricted key", f"{j('rk', '_live_')}{v}", v)
    v = r(35, URLSAFE)
    add("google api key", f"maps need key={j('AI', 'za')}{v}", v)
    v = r(40, HEX)
    add("gcp service account key id", f'"type": "service_account", "private_key_id": "{v}",', v)
    pem, line = _pem(j("PRIV", "ATE KEY"))
    add("gcp service account private key", f'"private_key": "{pem}"'.replace("\n", "\\n"), line)
    v = r(24)
    add("gcp oauth client secret", f"client_secret={j('GOC', 'SPX-')}{v}", v)
    pem, line = _pem(j("RSA PRIV", "ATE KEY"))
    add("rsa private key", f"the key file held\n{pem}\nand was committed", line)
    pem, line = _pem(j("OPENSSH PRIV", "ATE KEY"))
    add("openssh private key", pem, line)
    pem, line = _pem(j("EC PRIV", "ATE KEY"), 2)
    add("ec private key", pem, line)
    pem, line = _pem(j("PGP PRIVATE", " KEY BLOCK"))
    add("pgp private key block", pem, line)
    v = _b64(64)
    add(
        "azure storage account key",
        f"DefaultEndpointsProtocol=https;AccountName=shopdata;{j('Account', 'Key=')}{v};EndpointSuffix=core.windows.net",
        v[:40],
    )
    v = r(43, URLSAFE).replace("-", "%2B")
    add("azure sas signature", f"https://shop.blob.core.windows.net/c?sv=2022-11-02&ss=b&sp=r&sig={v}", v)
    v = j(r(3), "8Q~", r(31, URLSAFE + "~."))
    add("azure ad client secret", f"AZURE_CLIENT_SECRET={v}", v)
    v1, v2 = r(22, URLSAFE), r(43, URLSAFE)
    add("sendgrid key", f"the mailer used {j('S', 'G.')}{v1}.{v2}", v1, v2)
    v = j("AgEIcHlwaS5vcmc", _b64url(60))
    add("pypi token", f"twine upload -u __token__ -p {j('py', 'pi-')}{v}", v[15:])
    v = r(34, UP + LOW)
    add("hugging face token", f"HF_TOKEN={j('h', 'f_')}{v} huggingface-cli login", v)
    v = r(32, HEX)
    add("databricks token", f"databricks configure --token {j('da', 'pi')}{v}", v)
    v = r(32, HEX)
    add("twilio account sid", f"TWILIO_ACCOUNT_SID={j('A', 'C')}{v}", v)
    v = r(32, HEX)
    add("twilio api key", f"the api key {j('S', 'K')}{v} belongs to the sms service", v)
    v = r(32, HEX)
    add("twilio auth token", f"TWILIO_AUTH_TOKEN={v}", v)
    v = r(50, LOW + DIG + "!@#%^&*(-_=+)")
    add("django secret key", f"SECRET_KEY={j('django-', 'insecure-')}{v}", v[:20], v[20:])
    v = base64.b64encode(f"{r(6, LOW)}:{r(10)}".encode()).decode()
    add("authorization basic", f"curl -H 'Authorization: Basic {v}' https://api.example.com", v)
    v = r(40, URLSAFE)
    add("authorization bearer", f"Authorization: Bearer {v}", v)
    v = r(5, LOW + DIG)
    add("short password", f"the staging db password={v} works only from the VPN", v)
    v = r(5, LOW + DIG)
    add("short password in yaml", f"db:\n  password: {v}\n  user: app", v)
    v = r(12)
    add("password in json", f'{{"username": "app", "password": "{v}"}}', v)
    v = r(64, HEX)
    add("digitalocean token", f"doctl auth init -t {j('do', 'p_v1_')}{v}", v)
    v = r(64, HEX)
    add("digitalocean oauth token", f"{j('do', 'o_v1_')}{v}", v)
    v = r(27, URLSAFE)
    add("docker hub token", f"docker login -u app -p {j('dckr', '_pat_')}{v}", v)
    v = r(36)
    add("npm token", f"//registry.npmjs.org/:_authToken={j('np', 'm_')}{v}", v)
    v = r(48, URLSAFE)
    add("openai project key", f"OPENAI_API_KEY={j('sk', '-proj-')}{v}", v)
    v = r(48)
    add("openai legacy key", f"use {j('sk', '-')}{v} for the embeddings", v)
    v = r(93, URLSAFE)
    add("anthropic key", f"x-api-key: {j('sk-', 'ant-', 'api03-')}{v}AA", v)
    v, sig = _jwt()
    add("json web token", f"the session cookie was {v}", sig)
    v = r(32, HEX)
    add("mailchimp key", f"MAILCHIMP_API_KEY={v}-us{r(2, DIG)}", v)
    v = r(32, HEX)
    add("mailgun key", f"api:{j('ke', 'y-')}{v}", v)
    v = r(32, HEX)
    add("shopify access token", f"X-Shopify-Access-Token: {j('sh', 'pat_')}{v}", v)
    v = r(22, URLSAFE)
    add("square access token", f"SQUARE_TOKEN={j('sq0', 'atp-')}{v}", v)
    v1, v2 = r(18, DIG), r(68, URLSAFE)
    add("discord webhook", f"https://discord.com/api/webhooks/{v1}/{v2}", v2)
    v = r(33, URLSAFE)
    add("telegram bot token", f"https://api.telegram.org/bot{r(10, DIG)}:AA{v}/sendMessage", v)
    v = f"{r(8, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(4, HEX)}-{r(12, HEX)}"
    add("heroku api key", f"HEROKU_API_KEY={v}", v)
    v = r(180, URLSAFE)
    add("atlassian api token", f"JIRA_TOKEN={j('ATA', 'TT3xFfGF0')}{v}", v)
    v = r(14)
    add("postgres url password", f"DATABASE_URL=postgres://app:{v}@db.internal:5432/shop", v)
    v = r(14)
    add("mongodb url password", f"mongodb+srv://reader:{v}@cluster0.mongodb.net/test", v)
    v = r(16)
    add("redis url password", f"redis://:{v}@cache:6379/0", v)
    v = r(20)
    add("yaml secret", f"stripe:\n  webhook_secret: {v}", v)
    v = r(18)
    add("env db password", f"DB_PASSWORD={v}", v)
    v = r(16)
    add("pgpassword", f"PGPASSWORD={v} psql -h db -U app", v)
    v = r(12)
    add("mysql inline password", f"mysql -u root -p{v} shop < dump.sql", v)
    v = r(12)
    add("curl user password", f"curl -u admin:{v} https://jenkins.internal/api", v)
    v = r(90, URLSAFE)
    add("hashicorp vault token", f"VAULT_TOKEN={j('hv', 's.')}{v}", v)
    v = r(14)
    add("terraform cloud token", f'token = "{v}.{j("atlas", "v1")}.{r(67)}"', v)
    v = r(40)
    add("doppler token", f"{j('dp', '.st.')}{j('dev', '.')}{v}", v)
    v = r(40)
    add("linear api key", f"LINEAR_KEY={j('lin', '_api_')}{v}", v)
    v = r(32)
    add("grafana service account token", f"{j('gl', 'sa_')}{v}_{r(8, HEX)}", v)
    v = r(27, UP + DIG)
    add("new relic user key", f"NEW_RELIC_API_KEY={j('NR', 'AK-')}{v}", v)
    v = r(32, HEX)
    add("datadog api key", f"DD_API_KEY={v}", v)
    v1, v2 = r(24, HEX), r(34, HEX)
    add("postman api key", f"{j('PM', 'AK-')}{v1}-{v2}", v1, v2)
    v = r(40, URLSAFE)
    add("cloudflare api token", f"CLOUDFLARE_API_TOKEN={v}", v)
    v = r(20)
    add("alibaba access key id", f"{j('LT', 'AI')}{v}", v)
    v = r(40, HEX)
    add("pulumi token", f"PULUMI_ACCESS_TOKEN={j('pu', 'l-')}{v}", v)
    v = r(40, HEX)
    add("supabase token", f"{j('sb', 'p_')}{v}", v)
    v = r(58, UP + "234567")
    add("age secret key", f"{j('AGE-SECRET', '-KEY-1')}{v}", v)
    v = r(40, URLSAFE)
    add("okta api token", f"Authorization: SSWS 00{v}", v)
    v = r(43, URLSAFE)
    add("sentry auth token", f"SENTRY_AUTH_TOKEN={j('sntry', 's_')}{v}", v)
    v = r(52, LOW + "234567")
    add("azure devops pat", f"AZURE_DEVOPS_EXT_PAT={v}", v)
    v = r(43, URLSAFE)
    add("slack app token", f"{j('xa', 'pp-')}1-A{r(10, UP + DIG)}-{r(13, DIG)}-{v}", v)
    v = r(40, ALNUM)
    add("notion token", f"NOTION_TOKEN={j('nt', 'n_')}{v}", v)
    v = r(12)
    add("password in url", f"git remote add origin https://deploy:{v}@git.example.com/shop.git", v)
    v = r(10)
    add("quoted password assignment", f'password = "{v}"', v)
    v = r(24)
    add("client secret assignment", f"OAUTH_CLIENT_SECRET='{v}'", v)
    v = r(30, URLSAFE)
    add("api key assignment", f"export PAYMENTS_API_KEY={v}", v)
    v = r(32)
    add("access token header", f"X-Auth-Token: {v}", v)
    # Password arguments of common command-line tools, whose flag names no secret.
    v = r(14)
    add("redis-cli password", f"redis-cli -h cache.internal -p 6379 -a {v} ping", v)
    v = r(14)
    add("valkey-cli password", f"valkey-cli --pass {v} info", v)
    v = r(12)
    add("sshpass password", f"sshpass -p {v} ssh deploy@10.0.0.5 uptime", v)
    v = r(12)
    add("sshpass quoted password", f"sshpass -p '{v}' scp build.tar host:/srv", v)
    v = r(18)
    add("docker login password", f"docker login -u ci -p {v} registry.example.com", v)
    v = r(18)
    add("podman login password", f"podman login registry.example.com -u ci -p {v}", v)
    v = r(18)
    add("helm registry login password", f"helm registry login ghcr.io -u bot -p {v}", v)
    v = r(12)
    add("htpasswd batch password", f"htpasswd -b /etc/nginx/.htpasswd admin {v}", v)
    v = r(12)
    add("htpasswd create batch password", f"htpasswd -cbB .htpasswd ops {v}", v)
    v = r(16)
    add("gpg passphrase", f"gpg --batch --yes --passphrase {v} -d secrets.tar.gpg", v)
    v = r(16)
    add("gpg passphrase with equals", f"gpg --pinentry-mode loopback --passphrase={v} --decrypt x.gpg", v)
    v = r(14)
    add("openssl passin", f"openssl rsa -in key.pem -passin pass:{v} -out plain.pem", v)
    v = r(14)
    add("keytool storepass", f"keytool -list -keystore app.jks -storepass {v}", v)
    # Prose that gives a password away.
    v = r(12)
    add("password in prose", f"the root password is {v} on the staging box", v)
    v = r(12)
    add("passphrase in prose", f"The passphrase was: {v}", v)
    # A .env line piped through base64, and a bearer token with a dot in it.
    v = r(20)
    add("base64 env line", "echo " + base64.b64encode(f"DB_PASSWORD={v}\n".encode()).decode() + " | base64 -d > .env", v)
    v = r(24)
    add("base64 api key line", base64.b64encode(f"STRIPE_API_KEY={v}".encode()).decode(), v)
    v = r(10) + "." + r(22)
    add("bearer token with a dot", f'curl -H "Authorization: Bearer {v}" https://api.example.com/v1/me', v)
    v = r(8) + "." + r(20)
    add("bare bearer with a dot", f"send Bearer {v} in the header", v)
    return c


SECRETS = _cases()

# Text that looks like a credential but is not one: references, placeholders, prose, ids and digests.
LOOK_ALIKES: list[tuple[str, str]] = [
    ("env reference", "API_KEY=$API_KEY"),
    ("braced env reference", "password=${DB_PASSWORD}"),
    ("command substitution", "pwd=$(pwd)"),
    ("secret as a word in prose", "the secret: run the migrations before the seed script"),
    ("github actions secret", "token: ${{ secrets.GITHUB_TOKEN }}"),
    ("gh auth token substitution", "export GH_TOKEN=$(gh auth token)"),
    ("bearer env reference", 'curl -H "Authorization: Bearer $TOKEN" https://api.example.com'),
    ("basic env reference", "Authorization: Basic ${BASIC_AUTH}"),
    ("placeholder in angle brackets", "password: <your-password>"),
    ("environ lookup", "token = os.environ['GITHUB_TOKEN']"),
    ("getpass call", "password = getpass.getpass()"),
    ("settings reference", "SECRET_KEY = settings.SECRET_KEY"),
    ("password flag without value", "docker login --password-stdin < token.txt"),
    ("passwordless prose", "passwordless sudo is not set up on the CI runners"),
    ("tokenizer", "tokenizer = AutoTokenizer.from_pretrained(model_name)"),
    ("git commit sha", "the regression came in with commit 3f786850e387550fdab836ed7e6dc881de23001b"),
    ("docker digest", "pin python@sha256:" + "9f2c6e1d" * 8),
    ("uuid in prose", "the run id 123e4567-e89b-12d3-a456-426614174000 failed twice"),
    ("hf hub function", "call hf_hub_download with local_dir so the cache is not shared"),
    ("prefix named in prose", "AWS keys start with AKIA and GitHub tokens with ghp_"),
    ("scikit-learn", "pip install scikit-learn==1.5.0 pypi-simple"),
    ("url without password", "git clone https://user@github.com/org/repo.git"),
    ("database url without password", "DATABASE_URL=postgres://localhost:5432/shop"),
    ("ssh remote", "git@github.com:org/repo.git"),
    ("masked password", "password=******** in the log is fine"),
    ("function name", "call import_secret_key() before signing"),
    ("key file path", "keep tests/fixtures/server_secret.pem out of the image"),
    ("key value prose", "the config takes key=value pairs, one a line"),
    ("auth mode", "auth: required for every endpoint"),
    ("token count", "max_tokens=4096 for the summary call"),
    ("python secrets module", "token = secrets.token_hex(32)"),
    ("password variable passed on", "connect(user=user, password=password)"),
    ("version pin", "pin pyyaml==6.0.2 and requests>=2.32"),
    ("long path", "src/lessonbank/capture/redaction_and_personal_data_filters.py"),
    ("css color", "color: #1a2b3c; background: #ffffff"),
    ("placeholder key", "API_KEY=your-api-key-here"),
    ("xxx placeholder", "AWS_SECRET_ACCESS_KEY=xxxxxxxxxxxxxxxxxxxx"),
    ("make variable", "PASSWORD=$$PASSWORD make deploy"),
    ("windows env", "set TOKEN=%GITHUB_TOKEN%"),
    ("tag key", "the ssh public key goes in authorized_keys, the private key stays in ~/.ssh"),
    ("redis-cli env password", "redis-cli -a $REDIS_PASSWORD ping"),
    ("redis-cli without password", "redis-cli -h localhost -p 6379 ping"),
    ("sshpass from env", "sshpass -e ssh deploy@host uptime"),
    ("sshpass from file", "sshpass -f ~/.ssh/pass.txt ssh host"),
    ("docker login from stdin", "echo $CR_PAT | docker login ghcr.io -u bot --password-stdin"),
    ("docker login env password", "docker login -u ci -p $DOCKER_PASSWORD registry.example.com"),
    ("htpasswd prompting", "htpasswd -c /etc/nginx/.htpasswd admin"),
    ("gpg passphrase file", "gpg --batch --passphrase-file key.txt -d secrets.gpg"),
    ("openssl env passin", "openssl rsa -in key.pem -passin env:KEY_PASS -out plain.pem"),
    ("password required in prose", "the password is required for every login"),
    ("password rotated in prose", "the password was rotated last week"),
    ("password stored in prose", "the password is stored in the team vault"),
    ("plain base64 text", "echo aGVsbG8gd29ybGQgaG93IGFyZSB5b3U= | base64 -d"),
    ("base64 image header", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAAB"),
    ("bearer settings reference", "Authorization: Bearer settings.API_TOKEN"),
    ("bearer word in prose", "a bearer token goes in the Authorization header"),
]
