"""The one redaction of secrets in URLs, for everything neardup prints, logs or answers.

A store or broker URL may carry a password in its userinfo (``redis://user:PASSWORD@host``) or in
its query (``redis://host/0?password=PASSWORD``, as redis-py accepts it). :func:`redact_url`
masks both. The settings (``neardup.config``) and the backends (``neardup.storage``) use this one
function; it imports nothing, so that both may.
"""

from __future__ import annotations

import re

MASK = "***"

# query parameters whose value is a secret (compared in lower case)
SECRET_PARAMETERS = frozenset({"password", "pass", "passwd", "pwd", "secret", "token", "sasl_password",
                               "access_token", "auth", "api_key", "apikey"})  # fmt: skip
_PARAMETER = re.compile(r"([?&;])([^=&;#]*)=([^&;#]*)")


def redact_url(url: str) -> str:
    """``url`` with the password of its userinfo and the values of secret query parameters masked.

    ``redis://u:pw@h:1/0?password=pw&db=0`` becomes ``redis://u:***@h:1/0?password=***&db=0``.
    Text that is not a URL is returned as it is; an ``@`` after ``://`` and before the path is
    always taken as the end of a userinfo (so a password holding ``@`` or ``/`` is still masked).
    """
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    if "@" in rest:
        creds, host = rest.rsplit("@", 1)
        user, colon, _ = creds.partition(":")
        rest = f"{user}:{MASK}@{host}" if colon else f"{creds}@{host}"
    return f"{scheme}://{_PARAMETER.sub(_mask_parameter, rest)}"


def _mask_parameter(match: re.Match[str]) -> str:
    lead, name, value = match.groups()
    return f"{lead}{name}={MASK}" if name.lower() in SECRET_PARAMETERS and value else match.group(0)
