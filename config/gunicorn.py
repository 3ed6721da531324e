"""gunicorn's configuration: ``gunicorn -c config/gunicorn.py config.wsgi:application``.

gunicorn sets ``wsgi.url_scheme`` to https itself when a request from an address in
``forwarded_allow_ips`` carries ``X-Forwarded-Proto: https`` (or ``X-Forwarded-Ssl``,
``X-Forwarded-Protocol``), and that list defaults to 127.0.0.1: any local process, a
client on the same host included, could then pass plain HTTP off as HTTPS whatever
``SECURE_PROXY_SSL_HEADER`` says. Here nobody is trusted unless ``FORWARDED_ALLOW_IPS``
names the proxies, so the scheme is Django's decision alone.

Command-line options still override these values (``load/run.py`` sets its own).
"""

from __future__ import annotations

import os

# Loopback unless told otherwise: gunicorn's own default would be 0.0.0.0 once the
# environment has a PORT.
bind = [os.environ.get("GUNICORN_BIND") or "127.0.0.1:8000"]
workers = int(os.environ.get("GUNICORN_WORKERS") or "2")
threads = int(os.environ.get("GUNICORN_THREADS") or "1")
# A worker silent this long is killed (with its requests). The same number is the
# AFFORDANCES REQUEST_TIMEOUT (config/settings.py): a keyed run's claim older than it
# (plus the lock timeout) belongs to a dead worker and may be taken over by a retry.
timeout = int(os.environ.get("GUNICORN_TIMEOUT") or "30")

# Comma-separated addresses or networks of the proxies allowed to set the scheme (and
# SCRIPT_NAME/PATH_INFO); "*" is every peer. Empty by default: none.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "").strip()
if not forwarded_allow_ips:
    # Over a unix socket gunicorn trusts every peer whatever the list says: with no
    # proxy named, no header may decide the scheme or the script name at all.
    secure_scheme_headers: dict[str, str] = {}
    forwarder_headers = ""
