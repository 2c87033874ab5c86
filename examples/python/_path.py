"""Find the kvmstat module from a source tree when it is not installed."""
import os
import sys

try:
    import kvmstat  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    '..', '..', 'python'))
