"""HTTP/2 client helpers for tests that send large header lists (the `h2` library).

hpack's own Huffman encoder shifts one big integer per input byte, which is quadratic: about 2.4 s for a 200 KB
value and ~100 s for 1 MB, long enough to look like a server hang. :class:`LinearHuffman` produces the same bytes
in linear time; :func:`client` returns an ``H2Connection`` that uses it.
"""

from __future__ import annotations

import h2.config
import h2.connection
from hpack.huffman import HuffmanEncoder
from hpack.huffman_constants import REQUEST_CODES, REQUEST_CODES_LENGTH

# The HPACK (RFC 7541, Appendix B) code of each byte value as a string of '0'/'1'.
_BITS = [format(code, f"0{length}b") for code, length in zip(REQUEST_CODES, REQUEST_CODES_LENGTH, strict=True)]


class LinearHuffman(HuffmanEncoder):
    """hpack's request-side Huffman encoder, in linear time (same output as ``HuffmanEncoder.encode``)."""

    def __init__(self) -> None:
        super().__init__(REQUEST_CODES, REQUEST_CODES_LENGTH)

    def encode(self, bytes_to_encode: bytes | None) -> bytes:
        """The Huffman coding of ``bytes_to_encode``, padded to a whole byte with the EOS prefix (1 bits)."""
        bits = "".join(_BITS[b] for b in bytes_to_encode or b"")
        bits += "1" * (-len(bits) % 8)
        return int(bits, 2).to_bytes(len(bits) // 8, "big") if bits else b""


def client() -> h2.connection.H2Connection:
    """A client-side ``H2Connection`` whose header encoder uses :class:`LinearHuffman`."""
    conn = h2.connection.H2Connection(h2.config.H2Configuration(client_side=True))
    conn.encoder.huffman_coder = LinearHuffman()
    return conn
