"""The bests of session 6 with this tree's launch path: the new standalone runtime, _broadcast_shapes and
_hiera_channels_last, the rest of each module unchanged."""
import glob, os, re, sys
sys.path.insert(0, "engine/worker/python")
from hiera_runner import deliver
os.makedirs("tmp_exp/bests_new", exist_ok=True)
BROADCAST = '''

_BROADCASTS = {}


def _broadcast_shapes(*shapes):
    if shapes not in _BROADCASTS:
        _BROADCASTS[shapes] = torch.broadcast_shapes(*shapes)
    return _BROADCASTS[shapes]
'''
for path in glob.glob("tmp_exp/bests/*.py"):
    s = open(path).read()
    if "# --- nvrtc_runtime, standalone" not in s:
        continue
    start = s.index("# --- nvrtc_runtime, standalone")
    end_marker = "# --- end of nvrtc_runtime, standalone ------------------------------------------------\n"
    end = s.index(end_marker) + len(end_marker)
    old = s[start:end]
    entries = old[old.index("_nvrtc_runtime = _NvrtcRuntime([\n") + len("_nvrtc_runtime = _NvrtcRuntime([\n"):old.index("\n])\n# --- end")]
    new = deliver.SHIM_CODE.replace("@PRELUDE@", deliver._py_str(deliver.CUDA_PRELUDE)).replace("@EXTENSIONS@", entries)
    s = s[:start] + new + s[end:]
    if "torch.broadcast_shapes(" in s:
        s = s.replace("torch.broadcast_shapes(", "_broadcast_shapes(")
        s = s.replace("\n\nclass ModelNew(", BROADCAST + "\n\nclass ModelNew(", 1)
    s = s.replace("or x.shape[0] > 65535 or x[0].numel() >= 2**31):", "or x.shape[0] > 65535 or x.numel() // x.shape[0] >= 2**31):")
    s = s.replace("channels, spatial = x.shape[1], x[0, 0].numel()", "channels = x.shape[1]\n    spatial = x.numel() // (x.shape[0] * channels)")
    open(os.path.join("tmp_exp/bests_new", os.path.basename(path)), "w").write(s)
    print(path, "x[0" in s)
