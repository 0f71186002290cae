"""Which IP addresses outbound requests must never reach.

One classification shared by the ``http_request`` SSRF guard and the provider base-URL check
(local model servers are refused unless a provider entry opts in).
"""

from __future__ import annotations

import ipaddress

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

_CGNAT = ipaddress.ip_network("100.64.0.0/10")
# Special-purpose ranges some Python versions classify as global.
_SPECIAL_PURPOSE = (
    ipaddress.ip_network("192.0.0.0/24"),  # IETF protocol assignments
    ipaddress.ip_network("fec0::/10"),  # deprecated IPv6 site-local, still routed internally
)
_METADATA = frozenset(
    {
        ipaddress.ip_address("169.254.169.254"),  # AWS, GCP, Azure, OpenStack
        ipaddress.ip_address("169.254.170.2"),  # AWS ECS task metadata
        ipaddress.ip_address("100.100.100.200"),  # Alibaba Cloud
        ipaddress.ip_address("fd00:ec2::254"),  # AWS IMDS over IPv6
    }
)


def blocked_reason(address: IPAddress) -> str | None:
    """Why ``address`` is not a public destination, or ``None`` when it is one."""
    if isinstance(address, ipaddress.IPv6Address):
        embedded = address.ipv4_mapped or address.sixtofour
        if embedded is None and address.teredo is not None:
            embedded = address.teredo[1]
        if embedded is not None:
            reason = blocked_reason(embedded)
            return None if reason is None else f"{reason} (embedded in {address})"
    if address in _METADATA:
        return "a cloud metadata address"
    if address.is_loopback:
        return "a loopback address"
    if address.is_unspecified:
        return "an unspecified address"
    if address.is_link_local:
        return "a link-local address"
    if address.is_multicast:
        return "a multicast address"
    if isinstance(address, ipaddress.IPv4Address) and address in _CGNAT:
        return "a carrier-grade NAT address"
    if address.is_private:
        return "a private address"
    if any(address in network for network in _SPECIAL_PURPOSE):
        return "a special-purpose address"
    if address.is_reserved or not address.is_global:
        return "a reserved address"
    return None
