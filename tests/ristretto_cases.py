"""Byte strings that are not ristretto255 points (RFC 9496, appendix A.2) and the identity."""

NON_CANONICAL = [bytes.fromhex(h) for h in (  # field element >= p
    "00ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff",
    "ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "f3ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
)]
NEGATIVE = [bytes.fromhex(h) for h in (  # s odd ("negative"): refused by the encoding rule
    "0100000000000000000000000000000000000000000000000000000000000000",
    "01ffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
    "ed57ffd8c914fb201471d1c3d245ce3c746fcbe63a3679d51b6a516ebebe0e20",
)]
NON_SQUARE = [bytes.fromhex(h) for h in (  # no point decodes from these
    "26948d35ca62e643e26a83177332e6b6afeb9d08e4268b650f1f5bbd8d81d371",
    "4eac077a713c57b4f4397629a4145982c661f48044dd3f96427d40b147d9742f",
)]
IDENTITY = bytes(32)
#: Every 32-byte string a decoder must refuse (the identity too: no honest message holds it).
INVALID = NON_CANONICAL + NEGATIVE + NON_SQUARE + [IDENTITY]
