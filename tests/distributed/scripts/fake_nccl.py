"""A stand-in for libnccl, enough for ``NcclBackend.__init__`` to run without a GPU: it
makes the unique id and records the id each rank hands to ``ncclCommInitRank``, so a
test can check that the id reached every rank whole."""
import ctypes

from minitorch.distributed import _nccl

# Like a real id: a socket address (AF_INET = 2, little-endian, then a port and 127.0.0.1),
# NUL bytes, and more bytes after them that a C-string read would lose.
UNIQUE_ID = b"\x02\x00\x75\x31\x7f\x00\x00\x01" + bytes(98) + b"after the NULs" + bytes(5) + b"end"
assert len(UNIQUE_ID) == 128


class FakeNccl:
    def __init__(self):
        self.received = None  # (id bytes, world size, rank) given to ncclCommInitRank

    def ncclGetUniqueId(self, uid_ref) -> int:
        ctypes.memmove(ctypes.addressof(uid_ref._obj), UNIQUE_ID, len(UNIQUE_ID))
        return 0

    def ncclCommInitRank(self, comm_ref, world: int, uid, rank: int) -> int:
        self.received = (ctypes.string_at(ctypes.addressof(uid), ctypes.sizeof(uid)), world, rank)
        return 0

    def ncclGetErrorString(self, code: int) -> bytes:
        return b"fake NCCL error"


def install(setattr_=setattr) -> FakeNccl:
    """Makes ``_nccl`` use a FakeNccl as if a GPU and libnccl were here (pass pytest's
    ``monkeypatch.setattr`` to undo it after a test)."""
    lib = FakeNccl()
    setattr_(_nccl, "_load", lambda: lib)
    setattr_(_nccl, "_real_gpu_problem", lambda: None)
    return lib
