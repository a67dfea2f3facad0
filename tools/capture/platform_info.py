"""tools/capture's name for ulpscope.capture.platform_info (python/ulpscope/capture/),
where the code lives: `import platform_info` from the scripts here gives that module
itself."""
import os
import sys

_PY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")
if os.path.abspath(_PY) not in sys.path:
    sys.path.insert(0, os.path.abspath(_PY))

from ulpscope.capture import platform_info as _m  # noqa: E402

sys.modules[__name__] = _m
