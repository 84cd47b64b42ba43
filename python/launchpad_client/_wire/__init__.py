"""What a client and a node both speak, and nothing that opens a socket:
bodies in JSON and CBOR (codec), RFC 8746 typed arrays (typed_arrays), the
C++ types that describe's schemas stand for (schema), the schemas of Python
type hints (hints), and HTTP/1.1 messages read from a stream (http)."""
