"""Where webhooks may go: public addresses only, unless the operator allows a host.

A webhook URL is checked when it is registered and again when each delivery is sent. Refused: loopback
(``127.0.0.0/8``, ``::1``, ``localhost`` and ``*.localhost``), link-local (``169.254.0.0/16`` with the cloud
metadata address, ``fe80::/10``), private (RFC 1918, ``fc00::/7``), shared (``100.64.0.0/10``), multicast,
unspecified (``0.0.0.0``, ``::``), reserved and every other non-global address, also when spelt in another
way (``127.1``, ``2130706433``, ``0x7f000001``, ``0177.0.0.1``, ``::ffff:127.0.0.1``, 6to4 and NAT64
addresses that embed one). A host name is resolved with :func:`socket.getaddrinfo`; it is refused if any of
its addresses is, and the connection then goes to the address that was checked (pinned), so a name that
resolves differently a moment later (DNS rebinding) cannot redirect the request.

``ranklens serve --webhook-allow HOST:PORT`` (repeatable; ``HOST:*`` for any port) lets the operator allow
a host as it is written in the URL (an IP literal in any spelling matches its canonical form); allowed
hosts skip the address check but are still resolved once and pinned::

    >>> policy = TargetPolicy.from_allow(["127.0.0.1:9000"])
    >>> policy.check_url("http://127.0.0.1:9000/hook").allowed
    True
    >>> try:
    ...     TargetPolicy().check_url("http://2130706433/hook")
    ... except TargetRefused as exc:
    ...     print(str(exc).split(";")[0])
    webhook target 127.0.0.1 is not allowed (a loopback address)
"""

from __future__ import annotations

import ipaddress
import re
import socket
import unicodedata
import urllib.parse
from collections.abc import Iterable
from dataclasses import dataclass, field

from ranklens.monitor.errors import TargetRefused

__all__ = ["Target", "TargetPolicy", "TargetRefused", "redact_url"]

IP = ipaddress.IPv4Address | ipaddress.IPv6Address
_LEGACY_V4 = re.compile(r"^(0x[0-9a-f]+|[0-9]+)(\.(0x[0-9a-f]+|[0-9]+)){0,3}$")
_NAT64 = ipaddress.ip_network("64:ff9b::/96")
_HINT = "only public addresses are allowed; the operator can allow a host with ranklens serve --webhook-allow HOST:PORT"


@dataclass(frozen=True)
class Target:
    """A checked webhook target: ``host`` as written (canonical for IP literals), ``port`` (explicit or the
    scheme's default), ``address`` (the IP to connect to; ``None`` until resolved) and whether the operator
    allowed it."""

    url: str
    scheme: str
    host: str
    port: int
    is_ip: bool
    allowed: bool
    address: str | None = None


def _literal_ip(host: str) -> IP | None:
    """The address an IP-literal host names, in any spelling ``inet_aton`` accepts; ``None`` for a name."""
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        pass
    if _LEGACY_V4.match(host):
        try:
            return ipaddress.IPv4Address(socket.inet_aton(host))
        except OSError:
            return None
    return None


def _why_forbidden(ip: IP) -> str | None:
    """Why connecting to ``ip`` is refused, or ``None`` for a public address."""
    if isinstance(ip, ipaddress.IPv6Address):
        ip = ip.ipv4_mapped or ip
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and _why_forbidden(embedded):
            return f"it embeds {embedded}, {_why_forbidden(embedded)}"
        if ip.teredo:
            return "a Teredo address"
    for test, what in (
        ("is_unspecified", "the unspecified address"),
        ("is_loopback", "a loopback address"),
        ("is_link_local", "a link-local address"),
        ("is_multicast", "a multicast address"),
        ("is_private", "a private address"),
        ("is_reserved", "a reserved address"),
    ):
        if getattr(ip, test):
            return what
    if not ip.is_global:
        return "not a public address"
    return None


def _canonical_host(host: str) -> tuple[str, IP | None]:
    host = unicodedata.normalize("NFKC", host).strip().lower().rstrip(".")
    ip = _literal_ip(host.strip("[]"))
    return (str(ip) if ip is not None else host), ip


@dataclass(frozen=True)
class TargetPolicy:
    """The operator's allowed ``(host, port)`` pairs (``port`` ``None``: any port)."""

    allow: frozenset[tuple[str, int | None]] = field(default_factory=frozenset)

    @classmethod
    def from_allow(cls, items: Iterable[str]) -> TargetPolicy:
        """Parse ``HOST:PORT`` / ``[IPV6]:PORT`` / ``HOST:*`` items; :class:`ValueError` on a bad one."""
        pairs: set[tuple[str, int | None]] = set()
        for raw in items:
            item = raw.strip()
            host, sep, port_text = item.rpartition(":")
            if not sep or not host or host.endswith(":") and not host.startswith("["):
                raise ValueError(f"--webhook-allow takes HOST:PORT (or HOST:*, [IPV6]:PORT); got {raw!r}")
            if port_text == "*":
                port: int | None = None
            else:
                if not port_text.isdigit() or not 0 < int(port_text) < 65536:
                    raise ValueError(f"--webhook-allow: bad port in {raw!r}")
                port = int(port_text)
            if host.startswith("[") != host.endswith("]"):
                raise ValueError(f"--webhook-allow: bad host in {raw!r}")
            pairs.add((_canonical_host(host)[0], port))
        return cls(frozenset(pairs))

    def _allowed(self, host: str, port: int) -> bool:
        return (host, port) in self.allow or (host, None) in self.allow

    def check_url(self, url: str) -> Target:
        """Check what the URL says without resolving it: scheme, host, port, literal addresses and
        ``localhost``. :class:`TargetRefused` if refused."""
        try:
            parts = urllib.parse.urlsplit(url)
            port = parts.port
        except ValueError as exc:
            raise TargetRefused(f"webhook URL is not valid: {exc}") from None
        scheme = parts.scheme.lower()
        if scheme not in ("http", "https"):
            raise TargetRefused("webhook URL must start with http:// or https://")
        if not parts.hostname:
            raise TargetRefused("webhook URL has no host")
        host, ip = _canonical_host(parts.hostname)
        port = port if port is not None else (443 if scheme == "https" else 80)
        if port == 0:
            raise TargetRefused("webhook URL has port 0")
        allowed = self._allowed(host, port)
        target = Target(url, scheme, host, port, ip is not None, allowed, str(ip) if ip is not None else None)
        if allowed:
            return target
        if ip is not None:
            why = _why_forbidden(ip)
            if why:
                raise TargetRefused(f"webhook target {ip} is not allowed ({why}); {_HINT}")
        elif host == "localhost" or host.endswith(".localhost") or not host:
            raise TargetRefused(f"webhook target {host or '(empty)'} is not allowed (a loopback name); {_HINT}")
        return target

    def resolve(self, url: str) -> Target:
        """:meth:`check_url`, then resolve the host and check every address; the target's ``address`` is
        the one to connect to. :class:`TargetRefused` if refused, :class:`OSError` if it does not resolve."""
        target = self.check_url(url)
        if target.is_ip:
            return target
        infos = socket.getaddrinfo(target.host, target.port, type=socket.SOCK_STREAM)
        addresses: list[IP] = []
        for info in infos:
            try:
                addresses.append(ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]))
            except ValueError:
                continue
        if not addresses:
            raise OSError(f"{target.host} has no IP address")
        if not target.allowed:
            for ip in addresses:
                why = _why_forbidden(ip)
                if why:
                    raise TargetRefused(f"webhook target {target.host} resolves to {ip}, which is not allowed ({why}); {_HINT}")
        return Target(target.url, target.scheme, target.host, target.port, False, target.allowed, str(addresses[0]))

    def check_registration(self, url: str) -> Target:
        """At registration: :meth:`resolve` when the name resolves now; a name that does not resolve yet is
        accepted (it is checked again, and pinned, at every send)."""
        try:
            return self.resolve(url)
        except OSError:
            return self.check_url(url)


def redact_url(url: str) -> str:
    """The URL without its secrets: credentials, query string and fragment become ``***``.

    >>> redact_url("https://user:pw@hooks.example/T1/B2?key=abc#x")
    'https://***@hooks.example/T1/B2?***'
    """
    try:
        parts = urllib.parse.urlsplit(url)
        netloc = parts.netloc
    except ValueError:
        return "***"
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    out = f"{parts.scheme}://{netloc}{parts.path}" if parts.scheme else netloc + parts.path
    if parts.query or parts.fragment or url.endswith("?"):
        out += "?***"
    return out
