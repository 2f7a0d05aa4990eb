"""Name and label format checks, as k8s.io/apimachinery ``pkg/util/validation`` does them, message for message.

Each ``is_*`` function takes a string and returns the list of problems
(kube's messages, because clients print them); ``[]`` means valid. They are
shared by ObjectMeta validation (:mod:`kapi.objectmeta`) and label selector
parsing (:mod:`kapi.selectors`). References: ``validation.go``
(``IsDNS1123Label``, ``IsDNS1123Subdomain``, ``IsDNS1035Label``,
``IsQualifiedName``, ``IsValidLabelValue``, ``RegexError``, ``MaxLenError``)
and ``pkg/api/validation/path`` (``IsValidPathSegmentName``); "Object Names
and IDs" and "Labels and Selectors" in the Kubernetes documentation.
Patterns must match the whole value (Go's ``^...$`` on a single line).
"""

from __future__ import annotations

import ipaddress
import re

__all__ = [
    "is_config_map_key",
    "is_dns1035_label",
    "is_dns1123_label",
    "is_dns1123_subdomain",
    "is_dns1123_subdomain_with_underscore",
    "is_wildcard_dns1123_subdomain",
    "domain_prefixed_path_errors",
    "is_qualified_name",
    "is_relaxed_env_var_name",
    "is_valid_cidr",
    "is_valid_ip",
    "is_valid_ip_for_legacy_field",
    "is_valid_label_value",
    "is_valid_path_segment_name",
    "is_valid_path_segment_prefix",
    "max_len_error",
    "parse_ip_sloppy",
    "regex_error",
]

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character")
DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + r"(\." + DNS1123_LABEL_FMT + ")*"
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or "
                         "'.', and must start and end with an alphanumeric character")
DNS1123_SUBDOMAIN_MAX = 253
DNS1123_LABEL_WITH_UNDERSCORE_FMT = "_?[a-z0-9]([-_a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT = (DNS1123_LABEL_WITH_UNDERSCORE_FMT + r"(\." + DNS1123_LABEL_WITH_UNDERSCORE_FMT
                                         + ")*")
DNS1123_SUBDOMAIN_WITH_UNDERSCORE_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                                         "characters, '_', '-' or '.', and must start and end with an alphanumeric "
                                         "character")
DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
DNS1035_LABEL_MSG = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an "
                     "alphabetic character, and end with an alphanumeric character")
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
QUALIFIED_NAME_MSG = ("must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
                      "alphanumeric character")
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_FMT = "(" + QUALIFIED_NAME_FMT + ")?"
LABEL_VALUE_MSG = ("a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
                   "and must start and end with an alphanumeric character")
LABEL_VALUE_MAX = 63

_DNS1123_LABEL = re.compile(DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN = re.compile(DNS1123_SUBDOMAIN_FMT)
_DNS1123_SUBDOMAIN_WITH_UNDERSCORE = re.compile(DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT)
_DNS1035_LABEL = re.compile(DNS1035_LABEL_FMT)
_QUALIFIED_NAME = re.compile(QUALIFIED_NAME_FMT)
_LABEL_VALUE = re.compile(LABEL_VALUE_FMT)


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """validation.RegexError: ``<msg> (e.g. 'a',  or 'b', regex used for validation is '<fmt>')``.

    The doubled space before "or" is kube's (each example ends in ", " and the next starts with " or ").
    """
    if not examples:
        return f"{msg} (regex used for validation is '{fmt}')"
    text = msg + " (e.g. "
    for i, example in enumerate(examples):
        if i:
            text += " or "
        text += f"'{example}', "
    return text + f"regex used for validation is '{fmt}')"


def max_len_error(length: int) -> str:
    """validation.MaxLenError: ``must be no more than <length> characters``."""
    return f"must be no more than {length} characters"


def _full(pattern: re.Pattern[str], value: str) -> bool:
    return pattern.fullmatch(value) is not None


def _format_errors(value: str, max_len: int, pattern: re.Pattern[str], msg: str, fmt: str, *examples: str) -> list[str]:
    """kube's format check: MaxLenError when ``value`` exceeds ``max_len``, RegexError when ``pattern`` fails."""
    out = []
    if len(value) > max_len:
        out.append(max_len_error(max_len))
    if not _full(pattern, value):
        out.append(regex_error(msg, fmt, *examples))
    return out


def is_dns1123_label(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 label (max 63 characters); [] when valid.

    As apimachinery's IsDNS1123Label: a value that is a valid subdomain but not a label (it has dots) gets
    ``must not contain dots`` rather than the pattern's message.
    """
    out = [max_len_error(DNS1123_LABEL_MAX)] if len(value) > DNS1123_LABEL_MAX else []
    if not _full(_DNS1123_LABEL, value):
        if _full(_DNS1123_SUBDOMAIN, value):
            out.append("must not contain dots")
        else:
            out.append(regex_error(DNS1123_LABEL_MSG, DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return out


def is_dns1123_subdomain(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1123 subdomain (max 253 characters); [] when valid."""
    return _format_errors(value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN, DNS1123_SUBDOMAIN_MSG,
                          DNS1123_SUBDOMAIN_FMT, "example.com")


def is_dns1123_subdomain_with_underscore(value: str) -> list[str]:
    """IsDNS1123SubdomainWithUnderscore (a Pod's ``dnsConfig.searches``, RelaxedDNSSearchValidation, GA in 1.34):
    a subdomain whose labels may start with ``_`` and hold ``_`` inside (max 253 characters); [] when valid."""
    return _format_errors(value, DNS1123_SUBDOMAIN_MAX, _DNS1123_SUBDOMAIN_WITH_UNDERSCORE,
                          DNS1123_SUBDOMAIN_WITH_UNDERSCORE_MSG, DNS1123_SUBDOMAIN_WITH_UNDERSCORE_FMT, "example.com")


def is_dns1035_label(value: str) -> list[str]:
    """Messages for a value that is not an RFC 1035 label (max 63 characters); [] when valid."""
    return _format_errors(value, DNS1123_LABEL_MAX, _DNS1035_LABEL, DNS1035_LABEL_MSG, DNS1035_LABEL_FMT,
                          "my-name", "abc-123")


def is_valid_path_segment_name(value: str) -> list[str]:
    """path.IsValidPathSegmentName: not "." or "..", no "/" or "%"."""
    for illegal in (".", ".."):
        if value == illegal:
            return [f"may not be '{illegal}'"]
    return is_valid_path_segment_prefix(value)


def is_valid_path_segment_prefix(value: str) -> list[str]:
    """path.IsValidPathSegmentPrefix: no "/" or "%"."""
    return [f"may not contain '{c}'" for c in ("/", "%") if c in value]


def is_qualified_name(value: str) -> list[str]:
    """validation.IsQualifiedName: ``[prefix/]name``, prefix a DNS subdomain, name max 63 (label keys, annotations).

    An empty name part gets both ``name part must be non-empty`` and the regex message, as in kube.
    """
    parts = value.split("/")
    out: list[str] = []
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            out.append("prefix part must be non-empty")
        else:
            out.extend("prefix part " + m for m in is_dns1123_subdomain(prefix))
    else:
        return ["a qualified name " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name",
                                                  "123-abc")
                + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        out.append("name part must be non-empty")
    elif len(name) > QUALIFIED_NAME_MAX:
        out.append("name part " + max_len_error(QUALIFIED_NAME_MAX))
    if not _full(_QUALIFIED_NAME, name):
        out.append("name part " + regex_error(QUALIFIED_NAME_MSG, QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc"))
    return out


def is_valid_label_value(value: str) -> list[str]:
    """validation.IsValidLabelValue: empty or a qualified-name-like string of at most 63 characters."""
    return _format_errors(value, LABEL_VALUE_MAX, _LABEL_VALUE, LABEL_VALUE_MSG, LABEL_VALUE_FMT,
                          "MyValue", "my_value", "12345")


WILDCARD_DNS1123_SUBDOMAIN_FMT = r"\*\." + DNS1123_SUBDOMAIN_FMT
WILDCARD_DNS1123_SUBDOMAIN_MSG = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
                                  "subdomain, which must consist of lower case alphanumeric characters, '-' or '.' "
                                  "and end with an alphanumeric character")
_WILDCARD_DNS1123_SUBDOMAIN = re.compile(WILDCARD_DNS1123_SUBDOMAIN_FMT)
HTTP_PATH_FMT = r"[A-Za-z0-9/\-._~%!$&'()*+,;=:]+"
_HTTP_PATH = re.compile(HTTP_PATH_FMT)


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """validation.IsWildcardDNS1123Subdomain: ``*.`` then a DNS subdomain (max 253 characters); [] when valid."""
    return _format_errors(value, DNS1123_SUBDOMAIN_MAX, _WILDCARD_DNS1123_SUBDOMAIN, WILDCARD_DNS1123_SUBDOMAIN_MSG,
                          WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com")


def domain_prefixed_path_errors(value: str) -> list[tuple[str, str]]:
    """validation.IsDomainPrefixedPath as (shown value, message) pairs; [] when valid.

    ``acme.io/foo``: the host part a DNS subdomain (each problem shown with the host), the path part of
    ``HTTP_PATH_FMT`` (shown with the path). The empty value is the caller's ``Required value``.
    """
    host, sep, path = value.partition("/")
    if not sep or not host or not path:
        return [(value, 'must be a domain-prefixed path (such as "acme.io/foo")')]
    out = [(host, msg) for msg in is_dns1123_subdomain(host)]
    if not _full(_HTTP_PATH, path):
        out.append((path, regex_error("Invalid path", HTTP_PATH_FMT)))
    return out


# ------------------------------------------------------------ IPs and CIDRs (apimachinery validation/ip.go)

VALID_IP_MSG = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"
VALID_CIDR_MSG = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
Address = ipaddress.IPv4Address | ipaddress.IPv6Address


def parse_ip_sloppy(value: str) -> Address | None:
    """netutils.ParseIPSloppy: a dotted IPv4 address whose parts may have leading zeros, or an IPv6 address (no
    zone); None when it is neither."""
    parts = value.split(".")
    if len(parts) == 4 and all(p.isascii() and p.isdigit() and int(p) <= 255 for p in parts):
        return ipaddress.IPv4Address(".".join(str(int(p)) for p in parts))
    if "%" in value or ":" not in value:
        return None
    try:
        return ipaddress.IPv6Address(value)
    except ValueError:
        return None


def _strict_ip(value: str) -> Address | None:
    """netip.ParseAddr: no leading zeros (None when it refuses)."""
    try:
        return None if "%" in value else ipaddress.ip_address(value)
    except ValueError:
        return None


def _mapped(addr: Address | None) -> bool:
    return isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None


def is_valid_ip(value: str) -> list[str]:
    """validation.IsValidIP (strict, the rule of fields newer than StrictIPCIDRValidation): an IP, without leading
    zeros, not IPv4-mapped IPv6, in canonical form (``2001:db8::1``, not ``2001:DB8:0::1``); [] when valid."""
    sloppy = parse_ip_sloppy(value)
    if sloppy is None:
        return [VALID_IP_MSG]
    strict = _strict_ip(value)
    out = [] if strict is not None else ["must not have leading 0s"]
    if _mapped(strict):
        out.append("must not be an IPv4-mapped IPv6 address")
    if not out and value != str(sloppy):
        out.append(f'must be in canonical form ("{sloppy}")')
    return out


def is_valid_ip_for_legacy_field(value: str) -> list[str]:
    """validation.IsValidIPForLegacyField with StrictIPCIDRValidation on (beta, on by default since 1.36), for the
    fields that predate it (a Pod's ``hostAliases[*].ip``, ``dnsConfig.nameservers``): an IP without leading zeros,
    not IPv4-mapped IPv6; unlike :func:`is_valid_ip` a non-canonical form (``2001:DB8::1``) passes."""
    if parse_ip_sloppy(value) is None:
        return [VALID_IP_MSG]
    strict = _strict_ip(value)
    out = [] if strict is not None else ["must not have leading 0s"]
    if _mapped(strict):
        out.append("must not be an IPv4-mapped IPv6 address")
    return out


def is_valid_cidr(value: str) -> list[str]:
    """validation.IsValidCIDR (strict): ``<ip>/<prefix>`` without leading zeros in either part, not IPv4-mapped,
    no bits set beyond the prefix, in canonical form; [] when valid."""
    ip, sep, bits = value.partition("/")
    sloppy = parse_ip_sloppy(ip)
    if not sep or sloppy is None or not bits.isascii() or not bits.isdigit() or int(bits) > sloppy.max_prefixlen:
        return [VALID_CIDR_MSG]
    network = ipaddress.ip_network(f"{sloppy}/{int(bits)}", strict=False)
    strict = _strict_ip(ip)
    if strict is None or (len(bits) > 1 and bits.startswith("0")):
        return ["must not have leading 0s in IP or prefix length"]
    if _mapped(strict):
        return ["must not have an IPv4-mapped IPv6 address"]
    if strict != network.network_address:
        return ["must not have bits set beyond the prefix length"]
    return [] if value == str(network) else [f'must be in canonical form ("{network}")']


CONFIG_KEY_FMT = "[-._a-zA-Z0-9]+"
CONFIG_KEY_MSG = "a valid config key must consist of alphanumeric characters, '-', '_' or '.'"
CONFIG_KEY_MAX = 253
_CONFIG_KEY = re.compile(CONFIG_KEY_FMT)


def is_config_map_key(key: str) -> list[str]:
    """validation.IsConfigMapKey: messages for a key that is not a valid ConfigMap/Secret key; [] when valid."""
    out: list[str] = []
    if len(key) > CONFIG_KEY_MAX:
        out.append(max_len_error(CONFIG_KEY_MAX))
    if not _CONFIG_KEY.fullmatch(key):
        out.append(regex_error(CONFIG_KEY_MSG, CONFIG_KEY_FMT, "key.name", "KEY_NAME", "key-name"))
    if key == ".":
        out.append("must not be '.'")
    elif key == "..":
        out.append("must not be '..'")
    elif key.startswith(".."):
        out.append("must not start with '..'")
    return out


ENV_EMPTY = "environment variable name must be non-empty"
ENV_NAME_MSG = "a valid environment variable name must consist only of printable ASCII characters other than '='"


def is_relaxed_env_var_name(name: str) -> list[str]:
    """validation.IsRelaxedEnvVarName (RelaxedEnvironmentVariableValidation, GA): printable ASCII but '='."""
    out = [ENV_EMPTY] if not name else []
    if any(ord(ch) > 126 or ord(ch) < 32 or ch == "=" for ch in name):
        out.append(ENV_NAME_MSG)
    return out
