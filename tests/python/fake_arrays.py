"""Small fake CUDA arrays for tests that need no GPU: they describe memory, they hold none.

CAI(shape, ...)     an object with a __cuda_array_interface__ dict (strides in bytes, as the
                    protocol has them);
DLPack(shape, ...)  an object with __dlpack__ / __dlpack_device__, whose capsule holds a
                    DLManagedTensor built with ctypes; it records the stream each export was asked
                    for and how many exports were released.
Pointers are made-up addresses that nothing dereferences unless a test lets a call reach a GPU.
"""
import ctypes

_BASE = 0x7F00_0000_0000


def address(i):
    """A distinct made-up device address for operand i."""
    return _BASE + i * 0x1000_0000


class CAI:
    def __init__(self, shape, typestr="<f4", strides=None, ptr=None, readonly=False, **extra):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape),
            "typestr": typestr,
            "data": (address(0) if ptr is None else ptr, readonly),
            "strides": None if strides is None else tuple(strides),
            "version": 3,
            **extra,
        }


class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", _DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", _DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", _DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", _Deleter)]


_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_CAPSULE_NAME = b"dltensor"  # the capsule keeps this pointer: it must live as long as the module

# DLPack (code, bits) of the dtypes tests use.
DL = {
    "float32": (2, 32), "float16": (2, 16), "bfloat16": (4, 16), "float64": (2, 64), "int32": (0, 32),
    "float8_e4m3fn": (10, 8), "float8_e5m2": (12, 8),
}


class DLPack:
    def __init__(self, shape, dtype="float32", strides=None, device=(2, 0), ptr=None, lanes=1):
        self.shape, self.strides = tuple(shape), None if strides is None else tuple(strides)
        self.code, self.bits = DL[dtype]
        self.lanes = lanes
        self.device = device
        self.ptr = address(0) if ptr is None else ptr
        self.streams = []  # the stream argument of each __dlpack__ call
        self.released = 0  # deleter calls
        self._keep = []

    def __dlpack_device__(self):
        return self.device

    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        self.streams.append(stream)
        n = len(self.shape)
        shape = (ctypes.c_int64 * max(n, 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(n, 1))(*self.strides)

        def release(_):
            self.released += 1

        deleter = _Deleter(release)
        m = _DLManagedTensor()
        m.dl_tensor.data = self.ptr
        m.dl_tensor.device = _DLDevice(*self.device)
        m.dl_tensor.ndim = n
        m.dl_tensor.dtype = _DLDataType(self.code, self.bits, self.lanes)
        m.dl_tensor.shape = shape
        m.dl_tensor.strides = strides
        m.dl_tensor.byte_offset = 0
        m.deleter = deleter
        self._keep.append((shape, strides, deleter, m))
        return _capsule_new(ctypes.addressof(m), _CAPSULE_NAME, None)
