#!/usr/bin/env python3
"""torch_dlpack.py LIBTG_TORCH — tilegen on PyTorch's CUDA tensors and stream (issue 17).

Takes tensors through DLPack (torch.utils.dlpack.to_dlpack: a PyCapsule holding a
DLManagedTensor*), runs tilegen's gemm_relu on torch's current stream through libtg_torch.so
(tg_torch.cpp), and compares with torch.relu(a @ b). Then: a stream of torch's own (the kernel
queued behind torch's producer of A on it, torch's consumer behind it), a refused
non-contiguous tensor, Target::wrap of device and host pointers, and a tilegen buffer exported
to torch (to_dlpack). Prints one line per check; exit status 0 when all pass.
"""
import ctypes
import sys

import torch
import torch.utils.dlpack

lib = ctypes.CDLL(sys.argv[1])
lib.tg_gemm_relu.argtypes = [ctypes.c_void_p] * 4 + [ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
lib.tg_wrap_check.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
lib.tg_export_iota.argtypes = [ctypes.c_int64, ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t]
lib.tg_export_iota.restype = ctypes.c_void_p

api = ctypes.pythonapi
api.PyCapsule_GetPointer.restype = ctypes.c_void_p
api.PyCapsule_GetPointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_SetName.argtypes = [ctypes.py_object, ctypes.c_char_p]
api.PyCapsule_New.restype = ctypes.py_object
api.PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

failures = 0


def check(name, ok, detail=""):
    global failures
    failures += 0 if ok else 1
    print(("PASS " if ok else "FAIL ") + name + (": " + detail if detail else ""), flush=True)


def handoff(t):
    """The DLManagedTensor* of t, the capsule marked used: libtg_torch now owns that reference."""
    cap = torch.utils.dlpack.to_dlpack(t)
    p = api.PyCapsule_GetPointer(cap, b"dltensor")
    api.PyCapsule_SetName(cap, b"used_dltensor")
    return p


def gemm_relu(a, b, c, stream):
    err = ctypes.create_string_buffer(4096)
    use = stream is not None
    rc = lib.tg_gemm_relu(handoff(a), handoff(b), handoff(c), ctypes.c_void_p(stream if use else 0),
                          int(use), err, len(err))
    return rc, err.value.decode()


def compare(name, a, b, c):
    want = torch.relu(a.float() @ b.float())
    err = (c.float() - want).abs().max().item()
    tol = 2e-2 * max(1.0, want.abs().max().item())
    check(name, err <= tol, f"max |error| {err:.3g} (tolerance {tol:.3g})")


torch.manual_seed(0)
dev = torch.device("cuda", 0)
for (M, N, K) in [(512, 512, 512), (300, 200, 136)]:
    a = torch.randn(M, K, device=dev, dtype=torch.float16)
    b = torch.randn(K, N, device=dev, dtype=torch.float16)
    c = torch.full((M, N), float("nan"), device=dev, dtype=torch.float16)
    rc, msg = gemm_relu(a, b, c, torch.cuda.current_stream().cuda_stream)
    check(f"gemm_relu {M}x{N}x{K} on torch's current stream", rc == 0, msg)
    torch.cuda.current_stream().synchronize()
    compare(f"gemm_relu {M}x{N}x{K} matches torch.relu(a @ b)", a, b, c)

# On a stream of torch's own: A is produced on it just before, the result consumed just after;
# nothing but the stream orders the three.
s = torch.cuda.Stream()
with torch.cuda.stream(s):
    x = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    b = torch.randn(2048, 2048, device=dev, dtype=torch.float16)
    torch.cuda.synchronize()
    a = (x @ x) * 1e-2  # queued on s; tilegen must run after it
    c = torch.empty(2048, 2048, device=dev, dtype=torch.float16)
    rc, msg = gemm_relu(a, b, c, s.cuda_stream)
    check("gemm_relu on a torch.cuda.Stream()", rc == 0, msg)
    d = c.float().sum()  # queued on s after tilegen's kernel
s.synchronize()
compare("gemm_relu on a torch stream, in order with torch's work there", a, b, c)
check("torch's consumer on the stream saw the result", abs(d.item() - c.float().sum().item()) < 1e-3 * max(1.0, abs(d.item())))

# Without a stream: tilegen's own (launch is synchronous then).
a = torch.randn(256, 128, device=dev, dtype=torch.float16)
b = torch.randn(128, 64, device=dev, dtype=torch.float16)
c = torch.empty(256, 64, device=dev, dtype=torch.float16)
torch.cuda.synchronize()
rc, msg = gemm_relu(a, b, c, None)
check("gemm_relu on tilegen's own stream", rc == 0, msg)
torch.cuda.synchronize()
compare("gemm_relu on tilegen's own stream matches", a, b, c)

# A transposed view is refused, naming its strides; c is left as it was.
at = torch.randn(128, 256, device=dev, dtype=torch.float16).t()
c = torch.zeros(256, 64, device=dev, dtype=torch.float16)
rc, msg = gemm_relu(at, b, c, torch.cuda.current_stream().cuda_stream)
check("a non-contiguous tensor is refused, naming its strides", rc == 1 and "strides [1, 256]" in msg, msg)
check("the refused launch wrote nothing", c.abs().sum().item() == 0)

err = ctypes.create_string_buffer(4096)
t = torch.zeros(1024, device=dev)
check("wrap takes torch's device memory", lib.tg_wrap_check(t.data_ptr(), 1024, 0, err, len(err)) == 0, err.value.decode())
# The driver knows torch's allocator's segments, not its tensors: a range past the segment is
# what it can refuse (256 GiB, more than the device has).
rc = lib.tg_wrap_check(t.data_ptr(), 1 << 36, 0, err, len(err))
check("wrap refuses a size past the driver's allocation", rc == 1 and "past the end" in err.value.decode(), err.value.decode())
h = torch.zeros(1024)
rc = lib.tg_wrap_check(h.data_ptr(), 1024, 0, err, len(err))
check("wrap refuses host memory on cuda", rc == 1, err.value.decode())
hp = torch.zeros(1024).pin_memory()
rc = lib.tg_wrap_check(hp.data_ptr(), 1024, 0, err, len(err))
check("wrap refuses pinned host memory on cuda", rc == 1 and "host memory" in err.value.decode(), err.value.decode())

# A tilegen buffer seen by torch without a copy; torch's deleter call frees it.
p = lib.tg_export_iota(1000, 0, err, len(err))
check("to_dlpack exports a tilegen buffer", bool(p), err.value.decode())
if p:
    y = torch.utils.dlpack.from_dlpack(api.PyCapsule_New(p, b"dltensor", None))
    check("torch reads the exported buffer", y.device == dev and torch.equal(y.cpu(), torch.arange(1000, dtype=torch.float32)))
    del y
    torch.cuda.synchronize()

print("torch_dlpack:", "all passed" if failures == 0 else f"{failures} failed")
sys.exit(1 if failures else 0)
